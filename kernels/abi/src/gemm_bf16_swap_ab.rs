//! The Hopper swap-AB BF16 GEMMs for small M: `D = alpha·A·Bᵀ` computed
//! as `Dᵀ = B·Aᵀ`, so the user's N fills the 128 rows of the tile (two
//! consumer warpgroups × `wgmma` M = 64) and the user's M (≤ `BN` per
//! tile: 16, 32 or 64) is the `wgmma` N. The layout is the cooperative
//! kernels' [`GemmSmem`] of a `128 × BN` tile; the parameters are
//! [`GemmBf16Params`] with the roles of the operands swapped (see
//! [`GEMM_SWAP_AB_16`]).

use crate::gemm_bf16::{BK, BM, GemmSmem, SMEM_FIXED, SMEM_LIMIT, THREADS};
use crate::gemm_params::GemmBf16Params;
use baton::kernel::KernelSpec;

/// Most input stages of a swap-AB configuration.
pub const MAX_SWAP_AB_STAGES: usize = 12;

/// Input stages of the swap-AB configuration with `bn` of the user's rows
/// per tile: as many as the shared-memory budget holds after the fixed
/// part, at most [`MAX_SWAP_AB_STAGES`]. Unlike the cooperative kernels'
/// `stages_for` (at most 8) the small stages are not capped at 8: a
/// swap-AB CTA only streams the user's B (16 KiB per stage) at small M,
/// and its DRAM rate is the bytes it keeps in flight over the memory
/// latency (session 9: one CTA at 8 stages read 110 GB/s), so 16- and
/// 32-row tiles keep 10 and 9 stages.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::swap_ab_stages;
/// assert_eq!((swap_ab_stages(16), swap_ab_stages(32), swap_ab_stages(64)), (10, 9, 8));
/// ```
pub const fn swap_ab_stages(bn: usize) -> usize {
    let stage = (BM as usize + bn) * BK as usize * 2;
    let n = (SMEM_LIMIT - SMEM_FIXED) / stage;
    if n > MAX_SWAP_AB_STAGES {
        MAX_SWAP_AB_STAGES
    } else {
        n
    }
}

/// The spec of the swap-AB configuration with `BN` of the user's rows per
/// tile.
const fn spec<const BN: usize, const STAGES: usize>(
    name: &'static str,
) -> KernelSpec<GemmBf16Params> {
    assert!(core::mem::size_of::<GemmSmem<BN, STAGES>>() <= SMEM_LIMIT);
    KernelSpec::new(name, THREADS)
        .with_dynamic_smem::<GemmSmem<BN, STAGES>>()
        .hot()
}

/// Swap-AB, 16 of the user's rows per tile (`wgmma.m64n16k16`), 10 stages.
///
/// Parameters ([`GemmBf16Params`], operands swapped): `tma_a` is the
/// user's B (dims {K, N}, box {64, 128}), `tma_a_tail` B with a box of
/// `tail_rows = N mod 128` rows, `tma_b` the user's A (dims {K, M}, box
/// {64, min(M, 16)}), `tma_d` the user's D (dims {N, M}, box {32, min(M,
/// 16)}, 64-byte swizzle); `m` is the user's N, `n` the user's M;
/// `beta` must be 0 (`tma_c` is never read).
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_16;
/// assert_eq!((GEMM_SWAP_AB_16.threads, GEMM_SWAP_AB_16.cluster_size()), (384, 1));
/// ```
pub const GEMM_SWAP_AB_16: KernelSpec<GemmBf16Params> =
    spec::<16, { swap_ab_stages(16) }>("baton_gemm_bf16_swap_ab_16");
/// Swap-AB, 32 of the user's rows per tile (`wgmma.m64n32k16`), 9 stages
/// (parameters as [`GEMM_SWAP_AB_16`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_32.name, "baton_gemm_bf16_swap_ab_32");
/// ```
pub const GEMM_SWAP_AB_32: KernelSpec<GemmBf16Params> =
    spec::<32, { swap_ab_stages(32) }>("baton_gemm_bf16_swap_ab_32");
/// Swap-AB, 64 of the user's rows per tile (`wgmma.m64n64k16`), 8 stages
/// (parameters as [`GEMM_SWAP_AB_16`]).
///
/// ```
/// assert!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_64.hot);
/// ```
pub const GEMM_SWAP_AB_64: KernelSpec<GemmBf16Params> =
    spec::<64, { swap_ab_stages(64) }>("baton_gemm_bf16_swap_ab_64");
