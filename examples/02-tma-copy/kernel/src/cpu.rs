//! The kernel on baton's CPU backend: each block a [`CpuBlock`] of two host
//! threads running the same [`roles::block`](crate::roles::block) as the GPU,
//! with baton's simulated TMA.

use crate::warp::CpuWarp;
use crate::{CopySmem, THREADS, TmaCopyParams, roles};
use baton::arch::cpu::CpuBlock;

/// The parameters shared by the warp threads of a simulated block.
struct SharedParams(TmaCopyParams);
// SAFETY: the tensor maps are only read; the tensors they describe are
// read (source) and written (destination, disjoint tiles, one storer thread)
// by the simulated TMA while the caller of `run_grid` keeps them alive.
unsafe impl Sync for SharedParams {}

/// Runs `grid` blocks of the kernel one after another on the CPU.
///
/// # Safety
/// As a launch: `p.load_map` and `p.store_map` point to live CPU
/// [`TensorMap`](baton::arch::cpu::tma::TensorMap)s (box 64 × 64, bf16) of
/// tensors nothing else accesses until this returns.
///
/// ```
/// use baton::arch::cpu::tma::TensorMap;
/// use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
/// let (rows, cols) = (70u64, 72u64);
/// let src: Vec<u16> = (0..rows * cols).map(|i| i as u16).collect();
/// let mut dst = vec![0u16; src.len()];
/// let desc = |base: u64| TensorMapDesc::matrix_2d(ElemType::BF16, base, rows, cols, cols * 2, 64, 64, Swizzle::B128);
/// // SAFETY: the vectors outlive the maps.
/// let load = unsafe { TensorMap::new(desc(src.as_ptr() as u64)) }.unwrap();
/// let store = unsafe { TensorMap::new(desc(dst.as_mut_ptr() as u64)) }.unwrap();
/// let p = tma_copy_kernel::TmaCopyParams { load_map: &load, store_map: &store, tiles_m: 2, tiles_n: 2 };
/// // SAFETY: the maps and vectors outlive the call.
/// unsafe { tma_copy_kernel::cpu::run_grid(&p, 3) };
/// assert_eq!(src, dst);
/// ```
pub unsafe fn run_grid(p: &TmaCopyParams, grid: u32) {
    let shared = SharedParams(*p);
    for b in 0..grid {
        let block = CpuBlock::new(CopySmem::new());
        block.run_warps(THREADS / 32, |warp, smem| {
            let shared = &shared;
            roles::block(&CpuWarp(warp), smem, &shared.0, b, grid);
        });
    }
}
