//! The kernel on baton's CPU backend: each block a [`CpuBlock`] of
//! [`THREADS`](crate::THREADS)` / 32` host threads running the same
//! [`roles::block`](crate::roles::block) as the GPU.

use crate::warp::CpuWarp;
use crate::{PipelineParams, PipelineSmem, THREADS, roles};
use baton::arch::cpu::CpuBlock;
use baton::pipeline::PipelineBarriers;

/// The parameters shared by the warp threads of a simulated block.
struct SharedParams(PipelineParams);
// SAFETY: the pointers are only dereferenced by the roles, which read
// `input` and write disjoint words of `out` (one consumer lane per word),
// while the caller of `run_grid` keeps both buffers alive.
unsafe impl Sync for SharedParams {}

/// Runs `grid` blocks of the kernel one after another on the CPU.
///
/// # Safety
/// As a launch: `p.input` and `p.out` hold `p.n` words, live and not
/// accessed by anything else until this returns.
///
/// ```
/// let input: Vec<u32> = (0..1000).collect();
/// let mut out = vec![0u32; 1000];
/// let p = pipeline_kernel::PipelineParams { input: input.as_ptr(), out: out.as_mut_ptr(), n: 1000 };
/// // SAFETY: both vectors hold n words and outlive the call.
/// unsafe { pipeline_kernel::cpu::run_grid(&p, 3) };
/// assert_eq!(out[999], 3 * 999 + 1);
/// ```
pub unsafe fn run_grid(p: &PipelineParams, grid: u32) {
    let shared = SharedParams(*p);
    for b in 0..grid {
        let block = CpuBlock::new(PipelineSmem {
            bars: PipelineBarriers::new(),
            slots: Default::default(),
        });
        block.run_warps(THREADS / 32, |warp, smem| {
            let shared = &shared;
            roles::block(&CpuWarp(warp), smem, &shared.0, b, grid);
        });
    }
}
