//! Architecture backends.
//!
//! Exactly one backend is *current* for a compilation target and is re-exported
//! as [`current`]: [`ptx`] on `nvptx64`, [`cpu`] everywhere else.
//! `sm100` (nvptx64 only) adds Blackwell's tensor memory and `tcgen05` MMA
//! on top of `ptx`; only kernels built for sm_100a may call it.
//! [`tcgen05_desc`] holds its descriptor encodings, on every target so that
//! host tests check them. The protocol
//! code (`crate::protocol`) only calls the operations every backend provides:
//!
//! | operation | ptx | cpu |
//! |---|---|---|
//! | [`BarrierRef::init`](current::BarrierRef::init) | `mbarrier.init` | store |
//! | `arrive` | `mbarrier.arrive` (one per thread) | one arrival per simulated lane |
//! | `arrive_expect_tx` | `mbarrier.arrive.expect_tx` | same, on atomics |
//! | `try_wait_parity` | `mbarrier.try_wait.parity` | load + compare |
//! | `wait_parity` | try_wait loop (bounded in debug builds) | spin + yield, bounded |
//! | `fence_barrier_init` | `fence.mbarrier_init.release.cluster` | no-op |
//! | `arrive_cluster` / `arrive_remote_if` | `mapa` + remote `mbarrier.arrive` | arrival on the peer CTA's barrier ([`cpu::CpuCluster`]) |
//! | `cluster_cta_rank` / `cluster_size` / `cluster_sync` | `%cluster_ctarank`, `%cluster_nctarank`, `barrier.cluster` | thread-local CTA context, cluster-wide barrier |
//! | `tma::load_*_multicast` | `cp.async.bulk.tensor…multicast::cluster` | byte-exact copy into every CTA of the mask |
//!
//! [`tcgen05`] (Blackwell; kernels for sm_100a only) names `sm100` on
//! nvptx64 and [`cpu::tcgen05`] on the host, with the same items:
//!
//! | item | sm100 (PTX) | cpu |
//! |---|---|---|
//! | `smem_addr` | `.shared` address | offset in the CTA's window |
//! | `fence_before_thread_sync` / `fence_after_thread_sync` | `tcgen05.fence` | no-op |
//! | `tmem::alloc`/`dealloc`/`relinquish_alloc_permit` (+ `_pair`) | `tcgen05.alloc`… | per-CTA allocator, panics on misuse and leaks |
//! | `tmem::ld_32x32b_xN` / `st_32x32b_xN`, `wait_ld` / `wait_st` | `tcgen05.ld`/`st` (generated, `tools/gen/tmem.py`) | row `addr.lane()` of the CTA's TMEM |
//! | `tmem::cp_32x128b_warpx4` / `cp_128x128b` / `cp_4x256b` (+ pair) | `tcgen05.cp` | copy through the descriptor |
//! | `mma::mma_f16_ss`, `mma_mxf8f6f4_ss`, `mma_mxf4nvf4_ss` (+ `_pair`) | `tcgen05.mma` | f64 MMA through the smem descriptors |
//! | `mma::commit` / `commit_multicast` / `commit_pair_multicast` | `tcgen05.commit` | one arrival per barrier |
//!
//! [`wgmma`] (Hopper) names `ptx::wgmma` on nvptx64 and [`cpu::wgmma`] on
//! the host (not under loom), with the same items for the BF16 shapes;
//! [`wgmma_desc`] holds the descriptor encodings, on every target:
//!
//! | item | ptx | cpu |
//! |---|---|---|
//! | `descriptor_k_major` / `descriptor_mn_major` / `SplitDescriptor` | [`wgmma_desc`] | [`wgmma_desc`] |
//! | `smem_addr` | `.shared` address | offset in the CTA's window |
//! | `fence` / `commit_group` / `wait_group` / `setmaxnreg_*` | `wgmma.fence`… | no-ops (an MMA completes at issue) |
//! | `ops::mma_m64nNk16_f32_bf16` (N = 64, 80, 128, 176, 224, 256) | SS `wgmma.mma_async` | f64 MMA through the descriptors, per thread of a [`cpu::run_warpgroup`] |
//! | `ops::mma_rs_m64nNk16_f32_bf16_bt` (N = 64, 128, 256) | RS `wgmma.mma_async`, B transposed | the same, A gathered from the warpgroup's 128 threads |

#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
#[cfg(target_arch = "nvptx64")]
pub mod ptx;
#[cfg(target_arch = "nvptx64")]
pub mod sm100;
pub mod tcgen05_desc;
pub mod tmem_addr;
pub mod wgmma_desc;

#[cfg(not(target_arch = "nvptx64"))]
pub use cpu as current;

/// Blackwell `tcgen05` (TMEM, MMA, commit, cp, ld/st) under one name: the
/// `sm100` PTX wrappers on nvptx64, the CPU simulation
/// ([`cpu::tcgen05`]) on the host — same items, same signatures.
#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::tcgen05;
#[cfg(target_arch = "nvptx64")]
pub use ptx as current;

/// Hopper `wgmma` (descriptors, fence/commit/wait, the typed MMAs in
/// `wgmma::ops`) under one name: the `ptx` wrappers on nvptx64, the CPU
/// simulation ([`cpu::wgmma`]) on the host — same items, same signatures
/// for the BF16 shapes.
#[cfg(all(not(target_arch = "nvptx64"), not(loom)))]
pub use cpu::wgmma;
#[cfg(target_arch = "nvptx64")]
pub use ptx::wgmma;
#[cfg(target_arch = "nvptx64")]
pub use sm100 as tcgen05;
