//! Example 01: a two-role pipeline kernel.
//!
//! One producer warp streams chunks of an input array into a 4-stage ring of
//! shared-memory slots through baton's [`ProducerConsumerPipeline`]; two
//! consumer warps take each chunk from the ring and write
//! `out[i] = 3·in[i] + 1` (wrapping). Every block walks the chunks
//! `block, block + grid, …`.
//!
//! The role code ([`roles`]) is written once against the small [`warp::Warp`]
//! trait and compiled twice:
//!
//! * for `nvptx64-nvidia-cuda` (by `baton-build` from the host crate's
//!   `build.rs`), where the [`baton::kernel!`] entry below runs it on
//!   [`warp::GpuWarp`];
//! * for the host, where [`cpu::run_grid`] runs it on baton's CPU backend
//!   (a host thread per warp, the same barrier protocol on atomics) and
//!   `cargo test` checks it (`tests/cpu.rs`).
//!
//! The kernel's ABI lives here, once: the `#[repr(C)]` parameter struct
//! [`PipelineParams`], the shared-memory layout [`PipelineSmem`] and the
//! [`KernelSpec`] [`PIPELINE`]. The host crate launches through them.
//!
//! [`ProducerConsumerPipeline`]: baton::pipeline::ProducerConsumerPipeline
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
#![warn(missing_docs)]

#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
pub mod roles;
pub mod slot;
pub mod warp;

use baton::kernel::{KernelParams, KernelSpec};
use baton::pipeline::PipelineBarriers;

/// Stages of the ring.
pub const STAGES: usize = 4;
/// Consumer warps (warps `1..=CONSUMER_WARPS`; warp 0 produces).
pub const CONSUMER_WARPS: u32 = 2;
/// Threads per block: the producer warp and the consumer warps.
pub const THREADS: u32 = 32 * (1 + CONSUMER_WARPS);
/// Words per chunk (one stage): one per consumer thread.
pub const CHUNK: u32 = 32 * CONSUMER_WARPS;

/// Parameters of [`PIPELINE`]: `out[i] = 3·input[i] + 1` for `i < n`.
///
/// ```
/// let p = pipeline_kernel::PipelineParams { input: core::ptr::null(), out: core::ptr::null_mut(), n: 0 };
/// assert_eq!(p.n, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PipelineParams {
    /// `n` input words (global memory on the GPU).
    pub input: *const u32,
    /// `n` output words.
    pub out: *mut u32,
    /// Number of words.
    pub n: u32,
}
// SAFETY: repr(C) of raw pointers and an integer, the same layout on host
// and device.
unsafe impl KernelParams for PipelineParams {}

/// One stage's payload: a chunk of [`CHUNK`] words.
pub type Slot = baton::tile_pipeline::Tile<u32, 1, { CHUNK as usize }>;

/// The block's shared memory: the ring's barriers, then one slot per stage.
/// Its `size_of` (evaluated for the device) is the launch's dynamic shared
/// memory.
#[repr(C)]
pub struct PipelineSmem {
    /// `full`/`empty` mbarrier per stage.
    pub bars: PipelineBarriers<STAGES>,
    /// The ring of slots.
    pub slots: [Slot; STAGES],
}

/// The kernel's spec: entry name, threads per block, dynamic shared memory;
/// `hot()` makes the build fail if ptxas reports spills or a stack frame.
///
/// ```
/// assert_eq!(pipeline_kernel::PIPELINE.name, "example_pipeline");
/// assert_eq!(pipeline_kernel::PIPELINE.threads, 96);
/// ```
pub const PIPELINE: KernelSpec<PipelineParams> = KernelSpec::new("example_pipeline", THREADS)
    .with_dynamic_smem::<PipelineSmem>()
    .hot();

baton::kernel! {
    #[spec(PIPELINE)]
    /// `out[i] = 3·input[i] + 1` through a producer warp and two consumer
    /// warps (see the crate docs).
    pub fn example_pipeline(p: PipelineParams) {
        use baton::arch::ptx::{block_idx_x, dynamic_smem, grid_dim_x};
        // SAFETY: the host launches with the module's dynamic shared memory,
        // size_of::<PipelineSmem>() on the device (checked by the spec).
        let smem = unsafe { dynamic_smem::<PipelineSmem>() };
        roles::block(&warp::GpuWarp, smem, &p, block_idx_x(), grid_dim_x());
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
