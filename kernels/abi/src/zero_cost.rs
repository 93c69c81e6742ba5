//! Zero-cost evidence: one handoff loop written with `baton::pipeline`
//! ([`PIPELINE`]) and by hand with raw `mbarrier` PTX ([`HANDWRITTEN`]),
//! same geometry, same parameters.

use baton::kernel::{KernelParams, KernelSpec};
use baton::pipeline::PipelineBarriers;

/// Stages of the ring.
pub const STAGES: usize = 4;
/// Threads per block: warp 0 produces, warps 1..=4 consume.
pub const THREADS: u32 = 160;

/// Parameters of both kernels: `out` holds one word per consumer thread
/// (128 per block).
///
/// ```
/// let p = baton_kernels_abi::zero_cost::HandoffBenchParams { out: core::ptr::null_mut(), iters: 1 << 20 };
/// assert_eq!(p.iters, 1 << 20);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HandoffBenchParams {
    /// The sum of the stage indices each consumer thread saw.
    pub out: *mut u32,
    /// Stages produced.
    pub iters: u32,
}
// SAFETY: repr(C) of a raw pointer and an integer.
unsafe impl KernelParams for HandoffBenchParams {}

/// `baton_bench_handoff_pipeline`.
///
/// ```
/// assert!(baton_kernels_abi::zero_cost::PIPELINE.hot);
/// ```
pub const PIPELINE: KernelSpec<HandoffBenchParams> =
    KernelSpec::new("baton_bench_handoff_pipeline", THREADS)
        .with_dynamic_smem::<PipelineBarriers<STAGES>>()
        .hot();

/// `baton_bench_handoff_handwritten`: the same loop, hand-written PTX.
///
/// ```
/// assert_eq!(baton_kernels_abi::zero_cost::HANDWRITTEN.threads, baton_kernels_abi::zero_cost::PIPELINE.threads);
/// ```
pub const HANDWRITTEN: KernelSpec<HandoffBenchParams> =
    PIPELINE.renamed("baton_bench_handoff_handwritten");
