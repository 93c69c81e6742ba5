//! The Hopper swap-AB BF16 GEMMs for small M: `D = alpha·A·Bᵀ` computed
//! as `Dᵀ = B·Aᵀ`, so the user's N fills the 128 rows of the tile (two
//! consumer warpgroups × `wgmma` M = 64) and the user's M (≤ `BN` per
//! tile: 16, 32 or 64) is the `wgmma` N. The layout is the cooperative
//! kernels' [`GemmSmem`] of a `128 × BN` tile; the parameters are
//! [`GemmBf16Params`] with the roles of the operands swapped (see
//! [`GEMM_SWAP_AB_16`]).
//!
//! The narrow configurations ([`GEMM_SWAP_AB_NARROW_16`], …) take 64 of the
//! user's N per tile on one consumer warpgroup (256 threads): twice the
//! CTAs of the 128-row tiles on the same problem, for the small-M shapes
//! whose 128-row tiles leave most SMs idle (e.g. 64×4104×2056: 33 CTAs of
//! 128 rows; cuBLAS runs 65–88 CTAs of 48–64 rows there).

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
    stages_within(BM as usize, bn, MAX_SWAP_AB_STAGES)
}

/// Input stages of `rows × 64` + `bn × 64` bf16 that the shared-memory
/// budget holds after the fixed part, at most `max`.
const fn stages_within(rows: usize, bn: usize, max: usize) -> usize {
    let stage = (rows + bn) * BK as usize * 2;
    let n = (SMEM_LIMIT - SMEM_FIXED) / stage;
    if n > max { max } else { n }
}

/// Rows of the user's N per tile of the narrow swap-AB configurations: the
/// `wgmma` M of their single consumer warpgroup.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::NARROW_ROWS, 64);
/// ```
pub const NARROW_ROWS: u32 = 64;

/// Threads of a narrow swap-AB CTA: the producer warpgroup and one consumer
/// warpgroup.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::NARROW_THREADS, 256);
/// ```
pub const NARROW_THREADS: u32 = 256;

/// Most input stages of a narrow swap-AB configuration.
pub const MAX_NARROW_STAGES: usize = 16;

/// Input stages of the narrow swap-AB configuration with `bn` of the user's
/// rows per tile: as [`swap_ab_stages`] with 64-row stages, at most
/// [`MAX_NARROW_STAGES`] (a stage of 16 user rows is 10 KiB: 16 stages keep
/// 160 KiB in flight, about what the 128-row tiles keep with 10).
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::swap_ab_narrow_stages;
/// assert_eq!((swap_ab_narrow_stages(16), swap_ab_narrow_stages(32), swap_ab_narrow_stages(64)), (16, 16, 12));
/// ```
pub const fn swap_ab_narrow_stages(bn: usize) -> usize {
    stages_within(NARROW_ROWS as usize, bn, MAX_NARROW_STAGES)
}

/// The spec of the swap-AB configuration with `BN` of the user's rows and
/// `ROWS` of its N per tile (128 on [`THREADS`], or [`NARROW_ROWS`] on
/// [`NARROW_THREADS`]).
const fn spec<const BN: usize, const STAGES: usize, const ROWS: usize>(
    name: &'static str,
    threads: u32,
) -> KernelSpec<GemmBf16Params> {
    clustered_spec::<BN, STAGES, ROWS>(name, threads, 1)
}

/// [`spec`] launched in clusters of `cluster` CTAs along the kernel's M
/// (the user's N).
const fn clustered_spec<const BN: usize, const STAGES: usize, const ROWS: usize>(
    name: &'static str,
    threads: u32,
    cluster: u32,
) -> KernelSpec<GemmBf16Params> {
    assert!(core::mem::size_of::<GemmSmem<BN, STAGES, ROWS>>() <= SMEM_LIMIT);
    KernelSpec::new(name, threads)
        .with_dynamic_smem::<GemmSmem<BN, STAGES, ROWS>>()
        .with_cluster([cluster, 1, 1])
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
    spec::<16, { swap_ab_stages(16) }, { BM as usize }>("baton_gemm_bf16_swap_ab_16", THREADS);
/// Swap-AB, 32 of the user's rows per tile (`wgmma.m64n32k16`), 9 stages
/// (parameters as [`GEMM_SWAP_AB_16`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_32.name, "baton_gemm_bf16_swap_ab_32");
/// ```
pub const GEMM_SWAP_AB_32: KernelSpec<GemmBf16Params> =
    spec::<32, { swap_ab_stages(32) }, { BM as usize }>("baton_gemm_bf16_swap_ab_32", THREADS);
/// Swap-AB, 64 of the user's rows per tile (`wgmma.m64n64k16`), 8 stages
/// (parameters as [`GEMM_SWAP_AB_16`]).
///
/// ```
/// assert!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_64.hot);
/// ```
pub const GEMM_SWAP_AB_64: KernelSpec<GemmBf16Params> =
    spec::<64, { swap_ab_stages(64) }, { BM as usize }>("baton_gemm_bf16_swap_ab_64", THREADS);

/// Narrow swap-AB, 64 of the user's N × 16 of its rows per tile
/// (`wgmma.m64n16k16` on one consumer warpgroup, 256 threads), 16 stages.
/// Parameters as [`GEMM_SWAP_AB_16`], except that `tma_a`'s box has 64
/// rows and `tail_rows` is `N mod 64`.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_16;
/// assert_eq!((GEMM_SWAP_AB_NARROW_16.threads, GEMM_SWAP_AB_NARROW_16.cluster_size()), (256, 1));
/// ```
pub const GEMM_SWAP_AB_NARROW_16: KernelSpec<GemmBf16Params> =
    spec::<16, { swap_ab_narrow_stages(16) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_16",
        NARROW_THREADS,
    );
/// Narrow swap-AB, 64 of N × 32 of M per tile (`wgmma.m64n32k16`), 16
/// stages (parameters as [`GEMM_SWAP_AB_NARROW_16`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_32.name, "baton_gemm_bf16_swap_ab_narrow_32");
/// ```
pub const GEMM_SWAP_AB_NARROW_32: KernelSpec<GemmBf16Params> =
    spec::<32, { swap_ab_narrow_stages(32) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_32",
        NARROW_THREADS,
    );
/// Narrow swap-AB, 64 of N × 64 of M per tile (`wgmma.m64n64k16`), 12
/// stages (parameters as [`GEMM_SWAP_AB_NARROW_16`]).
///
/// ```
/// assert!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_64.hot);
/// ```
pub const GEMM_SWAP_AB_NARROW_64: KernelSpec<GemmBf16Params> =
    spec::<64, { swap_ab_narrow_stages(64) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_64",
        NARROW_THREADS,
    );

/// Narrow swap-AB, 128 of the user's rows per tile (`wgmma.m64n128k16`):
/// a 128 × 64 tile of D on one consumer warpgroup (parameters as
/// [`GEMM_SWAP_AB_NARROW_16`], D's box {32, min(M, 64)}: the epilogue
/// stores each 32 columns as two 64-row halves).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_128.threads, 256);
/// ```
pub const GEMM_SWAP_AB_NARROW_128: KernelSpec<GemmBf16Params> =
    spec::<128, { swap_ab_narrow_stages(128) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_128",
        NARROW_THREADS,
    );

/// Narrow swap-AB 64 of N × 64 of M per tile ([`GEMM_SWAP_AB_NARROW_64`])
/// in clusters of 2 CTAs along the user's N that share the user's A by
/// TMA multicast: each CTA loads half of the A tile's rows (`tma_b`'s box
/// {64, 32}, rows past M zero-filled) into both CTAs' stages, so every A
/// byte leaves L2 once per cluster instead of once per CTA (at M = 64 A is
/// half of what each CTA reads per K block). Parameters as
/// [`GEMM_SWAP_AB_NARROW_16`] otherwise; a cluster's tile past N computes
/// on stale stage data and its stores are clipped.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_64_C2;
/// assert_eq!((GEMM_SWAP_AB_NARROW_64_C2.threads, GEMM_SWAP_AB_NARROW_64_C2.cluster_size()), (256, 2));
/// ```
pub const GEMM_SWAP_AB_NARROW_64_C2: KernelSpec<GemmBf16Params> =
    clustered_spec::<64, { swap_ab_narrow_stages(64) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_64_c2",
        NARROW_THREADS,
        2,
    );

/// Narrow swap-AB 64 of N × 128 of M per tile ([`GEMM_SWAP_AB_NARROW_128`])
/// in clusters of 2 sharing the user's A ([`GEMM_SWAP_AB_NARROW_64_C2`]:
/// `tma_b`'s box {64, 64}); at M = 128 A is two thirds of what each CTA
/// reads per K block.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_NARROW_128_C2.cluster, [2, 1, 1]);
/// ```
pub const GEMM_SWAP_AB_NARROW_128_C2: KernelSpec<GemmBf16Params> =
    clustered_spec::<128, { swap_ab_narrow_stages(128) }, { NARROW_ROWS as usize }>(
        "baton_gemm_bf16_swap_ab_narrow_128_c2",
        NARROW_THREADS,
        2,
    );
