//! # baton
//!
//! Producer/consumer pipelines for warp-specialized GPU kernels.
//!
//! baton gives Rust kernels the stage/phase/barrier machinery that CUTLASS's
//! `PipelineTmaAsync` and Mojo's structured kernels give C++ and Mojo: an
//! N-stage ring of shared-memory slots guarded by a *full* and an *empty*
//! `mbarrier` per stage, with phase tracking owned by each role.
//!
//! One source, two machines:
//!
//! * on `nvptx64-nvidia-cuda` the barrier operations are PTX `mbarrier`
//!   instructions (`arch::ptx`, compiled only for nvptx64);
//! * on the host they are atomics ([`arch::cpu`]) and a thread stands for a
//!   warp, so `cargo test` runs the real protocol code and a model checker
//!   (loom, `--cfg loom`) explores its interleavings.
//!
//! Layout of the crate:
//!
//! | folder | what lives there |
//! |---|---|
//! | `protocol/` | arch-independent pipeline logic: [`pipeline`], [`epi_load`], [`tile_pipeline`] (TMA-fed tile stages, MMA → epilogue accumulator stages) |
//! | `arch/ptx` | Hopper backend: mbarrier, fences, thread ids, shared memory, TMA (`tma`) |
//! | `arch/sm100` | Blackwell additions (assembled, not yet run): TMEM alloc/dealloc/`tcgen05.ld`, `tcgen05.mma` kind f16 (one CTA and CTA pairs), commit to mbarriers, `tcgen05` fences |
//! | `arch/cpu`  | host backend: atomics-based mbarrier, warps as threads, byte-exact simulated TMA (`tma`) |
//! | `smem`      | typed shared-memory references ([`smem::SharedRef`]) |
//! | `kernel`    | a kernel's parameter struct and [`kernel::KernelSpec`] (threads, cluster, launch bounds, dynamic shared memory), the [`kernel!`] entry macro |
//! | `tensor_map` | arch-independent TMA descriptor and its validation ([`tensor_map::TensorMapDesc`]) |
//! | `block_scale` | MXFP8 / NVFP4 formats and the tcgen05 scale-factor atom layout ([`block_scale::SfLayout`], [`block_scale::sf_tile_offset`]) |
//! | `numeric`   | narrow number formats (bf16, f16, e4m3, e5m2, e2m1, ue8m0, ue4m3): exact decode, round-to-nearest-even saturating encode ([`numeric::SmallFloat`]) |
//!
//! ```
//! use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
//! use baton::arch::cpu::CpuBlock;
//!
//! // Two "warps" (threads) share one 2-stage pipeline and a payload ring.
//! let block = CpuBlock::new(PipelineBarriers::<2>::new());
//! block.run_warps(2, |warp, barriers| {
//!     let mut pipe = ProducerConsumerPipeline::new(barriers, c"demo");
//!     if warp.index() == 0 {
//!         pipe.init_barriers(32, 32); // a whole warp arrives on each side
//!     }
//!     warp.sync_block();
//!     for _ in 0..10 {
//!         if warp.index() == 0 {
//!             let stage = pipe.acquire_producer();
//!             stage.release(); // arrive on full[stage], step
//!         } else {
//!             let stage = pipe.acquire_consumer();
//!             stage.release(); // arrive on empty[stage], step
//!         }
//!     }
//! });
//! ```
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
#![warn(missing_docs)]

pub mod arch;
pub mod block_scale;
pub mod kernel;
pub mod numeric;
pub mod protocol;
pub mod smem;
pub mod tensor_map;
mod unroll;

pub use protocol::{epi_load, ordered_barrier, pipeline, tile_pipeline};
