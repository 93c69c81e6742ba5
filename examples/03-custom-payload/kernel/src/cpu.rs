//! The kernel on baton's CPU backend: each block a [`CpuBlock`] of two host
//! threads running the same [`roles::block`](crate::roles::block) as the GPU,
//! with baton's simulated TMA.

use crate::warp::CpuWarp;
use crate::{KvParams, KvSmem, THREADS, roles};
use baton::arch::cpu::CpuBlock;

/// The parameters shared by the warp threads of a simulated block.
struct SharedParams(KvParams);
// SAFETY: the tensor maps and the tensors they describe are only read;
// `out` is written at disjoint words (one lane per row) while the caller of
// `run_grid` keeps everything alive.
unsafe impl Sync for SharedParams {}

/// Runs `grid` blocks of the kernel one after another on the CPU.
///
/// # Safety
/// As a launch: `p.k_map` and `p.v_map` point to live CPU
/// [`TensorMap`](baton::arch::cpu::tma::TensorMap)s (`u32`, dims
/// {32, rows}, box {32, 32}, 128-byte swizzle); `p.out` holds `p.rows`
/// words; nothing else accesses them until this returns.
///
/// ```
/// use baton::arch::cpu::tma::TensorMap;
/// use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
/// let rows = 40u64;
/// let k = vec![2u32; 40 * 32];
/// let v = vec![3u32; 40 * 32];
/// let mut out = vec![0u32; 40];
/// let desc = |base: u64| TensorMapDesc::matrix_2d(ElemType::U32, base, rows, 32, 128, 32, 32, Swizzle::B128);
/// // SAFETY: the vectors outlive the maps.
/// let (km, vm) = unsafe { (TensorMap::new(desc(k.as_ptr() as u64)).unwrap(), TensorMap::new(desc(v.as_ptr() as u64)).unwrap()) };
/// let p = kv_kernel::KvParams { k_map: &km, v_map: &vm, out: out.as_mut_ptr(), rows: 40 };
/// // SAFETY: maps and vectors outlive the call.
/// unsafe { kv_kernel::cpu::run_grid(&p, 2) };
/// assert!(out.iter().all(|&x| x == 32 * 6));
/// ```
pub unsafe fn run_grid(p: &KvParams, grid: u32) {
    let shared = SharedParams(*p);
    for b in 0..grid {
        let block = CpuBlock::new(KvSmem::new());
        block.run_warps(THREADS / 32, |warp, smem| {
            let shared = &shared;
            roles::block(&CpuWarp(warp), smem, &shared.0, b, grid);
        });
    }
}
