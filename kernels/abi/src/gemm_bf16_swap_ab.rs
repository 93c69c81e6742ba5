//! The Hopper swap-AB BF16 GEMMs for small M: `D = alpha·A·Bᵀ` computed
//! as `Dᵀ = B·Aᵀ`, so the user's N fills the 128 rows of the tile (two
//! consumer warpgroups × `wgmma` M = 64) and the user's M (≤ `BN` per
//! tile: 16, 32 or 64) is the `wgmma` N. The layout ([`SwapAbSmem`]) is
//! the cooperative kernels' input ring and epilogue sub-tiles of a
//! `128 × BN` tile, with the barriers of split-K inside a cluster
//! ([`ClusterSplitKBarriers`]) where those have their C-load barriers; the
//! parameters are [`GemmBf16Params`] with the roles of the operands swapped
//! (see [`GEMM_SWAP_AB_16`]).

use crate::gemm_bf16::{BK, BM, EPI_STAGES, Payload, SMEM_FIXED, SMEM_LIMIT, SubTile, THREADS};
use crate::gemm_params::GemmBf16Params;
use baton::arch::current::MbarrierCell;
use baton::kernel::KernelSpec;
use baton::tile_pipeline::InputTileStorage;

/// The barriers of split-K inside a cluster (the swap-AB kernels launched
/// in clusters of `splits` CTAs, one unit per cluster; the role is
/// `baton_kernel_roles::sm90::cluster_split_k`):
///
/// * `ready` (count 1, one phase per launch): the finalizer (rank 0) has
///   finished its main loop — its input stages may be overwritten — and
///   arrives remotely on every contributor's;
/// * `filled[wg]` (count `splits − 1`, one phase per launch): each
///   contributor's consumer warpgroup `wg` arrives remotely on the
///   finalizer's once its partial accumulators are in the finalizer's
///   input stages.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::ClusterSplitKBarriers;
/// assert!(size_of::<ClusterSplitKBarriers>() >= 24);
/// ```
#[repr(C)]
pub struct ClusterSplitKBarriers {
    /// Contributors wait on theirs; the finalizer arrives on it.
    pub ready: MbarrierCell,
    /// Per consumer warpgroup: the finalizer waits on its; contributors arrive.
    pub filled: [MbarrierCell; 2],
}

/// Shared memory of the swap-AB configuration with `BN` of the user's rows
/// per tile and `STAGES` input stages.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::{SwapAbSmem, swap_ab_stages};
/// assert!(size_of::<SwapAbSmem<16, { swap_ab_stages(16) }>>() <= 227 * 1024);
/// ```
#[repr(C)]
pub struct SwapAbSmem<const BN: usize, const STAGES: usize> {
    /// The input ring (the user's B and A tiles, full/empty barriers);
    /// after the finalizer's main loop, split-K in a cluster lands its
    /// contributors' partial accumulators in its stages.
    pub input: InputTileStorage<Payload<BN>, STAGES>,
    /// Each consumer warpgroup's D sub-tile ring.
    pub epi_tiles: [[SubTile; EPI_STAGES]; 2],
    /// Split-K inside a cluster.
    pub split_bars: ClusterSplitKBarriers,
}

/// Bytes one contributor CTA's partial accumulators take in the
/// finalizer's input stages: two consumer warpgroups of `64 × bn` fp32.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16_swap_ab::cluster_partial_bytes(16), 8192);
/// ```
pub const fn cluster_partial_bytes(bn: usize) -> usize {
    2 * 64 * bn * 4
}

/// The most CTAs per cluster (= split-K count) the swap-AB configuration
/// with `bn` of the user's rows per tile takes: its `splits − 1`
/// contributors' partials fit in the finalizer's input stages, and a
/// portable cluster holds at most 8 CTAs.
///
/// ```
/// use baton_kernels_abi::gemm_bf16_swap_ab::max_cluster_splits;
/// assert_eq!((max_cluster_splits(16), max_cluster_splits(32), max_cluster_splits(64)), (8, 8, 7));
/// ```
pub const fn max_cluster_splits(bn: usize) -> u32 {
    // The input stages' tile bytes (`Stage<bn>`: A and B tiles, no padding
    // at these sizes; the kernel checks its own at compile time).
    let area = swap_ab_stages(bn) * ((BM as usize + bn) * BK as usize * 2);
    let n = 1 + area / cluster_partial_bytes(bn);
    if n > 8 { 8 } else { n as u32 }
}

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
    assert!(core::mem::size_of::<SwapAbSmem<BN, STAGES>>() <= SMEM_LIMIT);
    KernelSpec::new(name, THREADS)
        .with_dynamic_smem::<SwapAbSmem<BN, STAGES>>()
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
