//! The Hopper BF16 GEMMs (`D = alpha·A·Bᵀ + beta·C`, 128 × BN × 64 tiles,
//! 384 threads): shared-memory layout, input stages per configuration, and
//! one [`KernelSpec`] per tile configuration — cooperative (both consumer
//! warpgroups on one tile) and ping-pong (each consumer warpgroup owns
//! whole tiles, in turns: [`PingPongSmem`]).

use crate::gemm_params::GemmBf16Params;
use baton::kernel::KernelSpec;
use baton::pipeline::PipelineBarriers;
use baton::protocol::ordered_barrier::OrderedBarriers;
use baton::tile_pipeline::{InputTileStorage, StandardStage, StandardTilePayload, Tile};

/// CTA tile rows (M).
pub const BM: u32 = 128;
/// K per stage.
pub const BK: u32 = 64;
/// Threads per CTA: a producer warpgroup and two consumer warpgroups.
pub const THREADS: u32 = 384;
/// Epilogue sub-tile rows.
pub const SUB_ROWS: usize = 64;
/// Epilogue sub-tile columns (64-byte rows).
pub const SUB_COLS: usize = 32;
/// Epilogue sub-tile buffers per consumer warpgroup (C stages with beta ≠ 0).
pub const EPI_STAGES: usize = 4;

/// CTA tile rows (M) of the tall configurations ([`GEMM_256X128`]): each
/// consumer warpgroup computes 128 rows × BN (two `wgmma.m64nBNk16` per K
/// step), so one CTA covers 256 rows.
///
/// ```
/// use baton_kernels_abi::gemm_bf16::{BM, TALL_BM};
/// assert_eq!(TALL_BM, 2 * BM);
/// ```
pub const TALL_BM: u32 = 256;

/// What one input stage carries: a `ROWS` × 64 tile of A (128 rows, or
/// [`TALL_BM`] in the tall configurations) and a BN × 64 tile of B.
pub type Payload<const BN: usize, const ROWS: usize = { BM as usize }> =
    StandardTilePayload<u16, u16, ROWS, BN, { BK as usize }>;
/// One input stage's storage.
pub type Stage<const BN: usize, const ROWS: usize = { BM as usize }> =
    StandardStage<u16, u16, ROWS, BN, { BK as usize }>;
/// One epilogue sub-tile (64 × 32 bf16).
pub type SubTile = Tile<u16, SUB_ROWS, SUB_COLS>;

/// Shared memory of the `ROWS × BN` configuration (`ROWS` 128, or
/// [`TALL_BM`]) with `STAGES` input stages.
#[repr(C)]
pub struct GemmSmem<const BN: usize, const STAGES: usize, const ROWS: usize = { BM as usize }> {
    /// The input ring (A and B tiles, full/empty barriers).
    pub input: InputTileStorage<Payload<BN, ROWS>, STAGES>,
    /// Epilogue sub-tile buffers, `[warpgroup][slot]`: with beta ≠ 0 the
    /// stages of the warpgroup's `EpiLoadPipeline` (C in, D written over it
    /// in place and TMA-stored from there); with beta = 0 a ring of D
    /// staging buffers.
    pub epi_tiles: [[SubTile; EPI_STAGES]; 2],
    /// The epilogue-load pipelines' barriers.
    pub epi_bars: [PipelineBarriers<EPI_STAGES>; 2],
}

/// Operand layout code of the K-major entries (A M×K and B N×K, both K
/// contiguous): the default.
pub const K_MAJOR: u32 = 0;
/// Layout bit: A is M-major (column-major A, M contiguous); its tiles are
/// loaded as 64 × 64 boxes and read by `wgmma` with `imm-trans-a = 1`.
pub const A_MN_MAJOR: u32 = 1;
/// Layout bit: B is N-major (a K×N row-major B, N contiguous), loaded as
/// 64 × 64 boxes and read with `imm-trans-b = 1`.
pub const B_MN_MAJOR: u32 = 2;

/// Turns per round of the ping-pong order: the main loop (tensor cores),
/// then the epilogue (TMA stores).
pub const PINGPONG_TURNS: usize = 2;
/// Groups taking turns in a ping-pong CTA: its two consumer warpgroups.
pub const PINGPONG_GROUPS: usize = 2;

/// Shared memory of a ping-pong configuration: the cooperative layout
/// (its input ring; the epilogue sub-tiles are each warpgroup's D ring, or
/// with beta ≠ 0 the stages of its C pipeline) plus the
/// [`OrderedBarriers`] by which the two consumer warpgroups take turns.
#[repr(C)]
pub struct PingPongSmem<const BN: usize, const STAGES: usize> {
    /// Input ring and epilogue buffers, as in the cooperative kernels.
    pub gemm: GemmSmem<BN, STAGES>,
    /// `turn[main loop | epilogue][warpgroup]`.
    pub order: OrderedBarriers<PINGPONG_TURNS, PINGPONG_GROUPS>,
}

/// Shared-memory budget of one CTA (the sm_90 opt-in maximum).
pub const SMEM_LIMIT: usize = 227 * 1024;
/// Shared memory besides the input stages: the input barriers (padded to
/// the 1024-byte tile alignment), 8 epilogue sub-tiles, the epilogue
/// barriers (padded).
pub const SMEM_FIXED: usize = 1024 + 8 * 4096 + 1024;

/// Input stages of the `128 × bn` configuration: as many as the budget
/// holds after the fixed part, at most 8.
///
/// ```
/// use baton_kernels_abi::gemm_bf16::stages_for;
/// assert_eq!((stages_for(256), stages_for(128), stages_for(64)), (4, 6, 8));
/// ```
pub const fn stages_for(bn: usize) -> usize {
    stages_for_tile(BM as usize, bn)
}

/// Input stages of the `bm × bn` configuration (`bm` 128, or [`TALL_BM`]):
/// as many as the budget holds after the fixed part, at most 8.
///
/// ```
/// use baton_kernels_abi::gemm_bf16::{TALL_BM, stages_for_tile};
/// assert_eq!(stages_for_tile(TALL_BM as usize, 128), 4);
/// ```
pub const fn stages_for_tile(bm: usize, bn: usize) -> usize {
    let stage = (bm + bn) * BK as usize * 2;
    let n = (SMEM_LIMIT - SMEM_FIXED) / stage;
    if n > 8 { 8 } else { n }
}

/// Contributors whose split-K / stream-K partials a finalizer warpgroup
/// with `acc` accumulator floats per thread (`BN / 2` in the cooperative
/// kernels: 64 rows × BN over 128 threads) loads together
/// (`StreamKFixup::accumulate_all_batched` of the kernel roles): what its
/// 168 registers hold besides the accumulators without spilling. With 4
/// everywhere ptxas spilled 40–308 bytes in the 128×128, 128×224 and
/// 128×256 entries (session 11); the build's hot-kernel rule refuses a
/// spill. (The host's cost model does not price the batch yet: it costs
/// the cooperative kernels' fixup by the in-turn fit, `GemmConfig::plan_cost`.)
///
/// ```
/// use baton_kernels_abi::gemm_bf16::fixup_batch;
/// assert_eq!((fixup_batch(32), fixup_batch(64), fixup_batch(128)), (4, 2, 1));
/// ```
pub const fn fixup_batch(acc: usize) -> usize {
    if acc <= 32 {
        4
    } else if acc <= 64 {
        2
    } else {
        1
    }
}

/// The spec of the `128 × BN` configuration in clusters of `cluster` CTAs
/// along M.
const fn spec<const BN: usize, const STAGES: usize>(
    name: &'static str,
    cluster: u32,
) -> KernelSpec<GemmBf16Params> {
    assert!(core::mem::size_of::<GemmSmem<BN, STAGES>>() <= SMEM_LIMIT);
    KernelSpec::new(name, THREADS)
        .with_cluster([cluster, 1, 1])
        .with_dynamic_smem::<GemmSmem<BN, STAGES>>()
        .hot()
}

/// 128×256×64 tiles, 4 stages.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X256.threads, 384);
/// ```
pub const GEMM_128X256: KernelSpec<GemmBf16Params> =
    spec::<256, { stages_for(256) }>("baton_gemm_bf16_128x256", 1);
/// 128×256×64 tiles, clusters of 2 CTAs sharing B by TMA multicast.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X256_C2.cluster, [2, 1, 1]);
/// ```
pub const GEMM_128X256_C2: KernelSpec<GemmBf16Params> =
    spec::<256, { stages_for(256) }>("baton_gemm_bf16_128x256_c2", 2);
/// 128×224×64 tiles, 2-CTA clusters.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X224_C2.cluster_size(), 2);
/// ```
pub const GEMM_128X224_C2: KernelSpec<GemmBf16Params> =
    spec::<224, { stages_for(224) }>("baton_gemm_bf16_128x224_c2", 2);
/// 128×192×64 tiles, 2-CTA clusters: block N between the powers of two,
/// for N that 192 divides (3072, 6144, 12288, 13824) or that leaves
/// 128- and 256-wide tiles a ragged last wave.
///
/// ```
/// use baton_kernels_abi::gemm_bf16::{GEMM_128X192_C2, stages_for};
/// assert_eq!((GEMM_128X192_C2.cluster_size(), stages_for(192)), (2, 4));
/// ```
pub const GEMM_128X192_C2: KernelSpec<GemmBf16Params> =
    spec::<192, { stages_for(192) }>("baton_gemm_bf16_128x192_c2", 2);
/// 128×160×64 tiles, 2-CTA clusters: for N that 160 divides (2560, 5120)
/// or that 160-wide tiles cover in fewer waves (N = 5000: 32 columns).
///
/// ```
/// use baton_kernels_abi::gemm_bf16::{GEMM_128X160_C2, stages_for};
/// assert_eq!((GEMM_128X160_C2.cluster_size(), stages_for(160)), (2, 5));
/// ```
pub const GEMM_128X160_C2: KernelSpec<GemmBf16Params> =
    spec::<160, { stages_for(160) }>("baton_gemm_bf16_128x160_c2", 2);
/// 128×128×64 tiles, 6 stages.
///
/// ```
/// assert!(baton_kernels_abi::gemm_bf16::GEMM_128X128.hot);
/// ```
pub const GEMM_128X128: KernelSpec<GemmBf16Params> =
    spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128", 1);
/// 128×128×64 tiles, 2-CTA clusters.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_C2.name, "baton_gemm_bf16_128x128_c2");
/// ```
pub const GEMM_128X128_C2: KernelSpec<GemmBf16Params> =
    spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_c2", 2);
/// 128×64×64 tiles, 8 stages.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X64.cluster_size(), 1);
/// ```
pub const GEMM_128X64: KernelSpec<GemmBf16Params> =
    spec::<64, { stages_for(64) }>("baton_gemm_bf16_128x64", 1);

/// 128×32 tiles, 8 stages (`wgmma.m64n32k16`): the narrowest cooperative
/// tile, twice the CTAs of [`GEMM_128X64`] on a problem with few tile
/// rows (M ≤ 128: cuBLAS runs 64×32 tiles on 128 CTAs at 64×4096×4096).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X32.name, "baton_gemm_bf16_128x32");
/// ```
pub const GEMM_128X32: KernelSpec<GemmBf16Params> =
    spec::<32, { stages_for(32) }>("baton_gemm_bf16_128x32", 1);

/// The spec of the tall `256 × BN` configuration ([`TALL_BM`]) in
/// clusters of `cluster` CTAs along M.
const fn tall_spec<const BN: usize, const STAGES: usize>(
    name: &'static str,
    cluster: u32,
) -> KernelSpec<GemmBf16Params> {
    assert!(core::mem::size_of::<GemmSmem<BN, STAGES, { TALL_BM as usize }>>() <= SMEM_LIMIT);
    KernelSpec::new(name, THREADS)
        .with_cluster([cluster, 1, 1])
        .with_dynamic_smem::<GemmSmem<BN, STAGES, { TALL_BM as usize }>>()
        .hot()
}

/// 256×128×64 tiles, 4 stages: each consumer warpgroup computes 128 rows
/// (two `wgmma.m64n128k16` per K step, 128 accumulator floats per thread,
/// as 128×256). N = 4104 is 33 tile columns of 128 where 128-row tiles
/// need 17 of 256 and twice the rows. No stream-K.
///
/// ```
/// use baton_kernels_abi::gemm_bf16::{GEMM_256X128, GemmSmem, TALL_BM, stages_for_tile};
/// assert_eq!(GEMM_256X128.dynamic_smem_bytes as usize,
///            core::mem::size_of::<GemmSmem<128, { stages_for_tile(TALL_BM as usize, 128) }, 256>>());
/// ```
pub const GEMM_256X128: KernelSpec<GemmBf16Params> =
    tall_spec::<128, { stages_for_tile(TALL_BM as usize, 128) }>("baton_gemm_bf16_256x128", 1);
/// 256×128×64 tiles in 2-CTA clusters along M sharing B by TMA multicast
/// (each CTA loads half of the 128 × 64 B tile).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_256X128_C2.cluster, [2, 1, 1]);
/// ```
pub const GEMM_256X128_C2: KernelSpec<GemmBf16Params> =
    tall_spec::<128, { stages_for_tile(TALL_BM as usize, 128) }>("baton_gemm_bf16_256x128_c2", 2);

/// 128×256×64 tiles, A M-major ([`A_MN_MAJOR`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X256_AM.name, "baton_gemm_bf16_128x256_am");
/// ```
pub const GEMM_128X256_AM: KernelSpec<GemmBf16Params> =
    spec::<256, { stages_for(256) }>("baton_gemm_bf16_128x256_am", 1);
/// 128×256×64 tiles, B N-major ([`B_MN_MAJOR`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X256_BN.cluster_size(), 1);
/// ```
pub const GEMM_128X256_BN: KernelSpec<GemmBf16Params> =
    spec::<256, { stages_for(256) }>("baton_gemm_bf16_128x256_bn", 1);
/// 128×256×64 tiles, A M-major and B N-major.
///
/// ```
/// assert!(baton_kernels_abi::gemm_bf16::GEMM_128X256_AMBN.hot);
/// ```
pub const GEMM_128X256_AMBN: KernelSpec<GemmBf16Params> =
    spec::<256, { stages_for(256) }>("baton_gemm_bf16_128x256_ambn", 1);
/// 128×128×64 tiles, A M-major ([`A_MN_MAJOR`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_AM.threads, 384);
/// ```
pub const GEMM_128X128_AM: KernelSpec<GemmBf16Params> =
    spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_am", 1);
/// 128×128×64 tiles, B N-major ([`B_MN_MAJOR`]).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_BN.name, "baton_gemm_bf16_128x128_bn");
/// ```
pub const GEMM_128X128_BN: KernelSpec<GemmBf16Params> =
    spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_bn", 1);
/// 128×128×64 tiles, A M-major and B N-major.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_AMBN.cluster, [1, 1, 1]);
/// ```
pub const GEMM_128X128_AMBN: KernelSpec<GemmBf16Params> =
    spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_ambn", 1);

/// The spec of a ping-pong `128 × BN` configuration in clusters of
/// `cluster` CTAs along M.
const fn pingpong_spec<const BN: usize, const STAGES: usize>(
    name: &'static str,
    cluster: u32,
) -> KernelSpec<GemmBf16Params> {
    assert!(core::mem::size_of::<PingPongSmem<BN, STAGES>>() <= SMEM_LIMIT);
    KernelSpec::new(name, THREADS)
        .with_cluster([cluster, 1, 1])
        .with_dynamic_smem::<PingPongSmem<BN, STAGES>>()
        .hot()
}

/// Ping-pong, 128×128×64 tiles, 6 stages: each consumer warpgroup owns a
/// whole tile (two `wgmma.m64n128k16` per K step); one warpgroup's
/// epilogue runs under the other's main loop. No stream-K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_PINGPONG.name, "baton_gemm_bf16_128x128_pingpong");
/// ```
pub const GEMM_128X128_PINGPONG: KernelSpec<GemmBf16Params> =
    pingpong_spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_pingpong", 1);
/// Ping-pong 128×128×64 in 2-CTA clusters along M sharing B by multicast.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_bf16::GEMM_128X128_PINGPONG_C2.cluster, [2, 1, 1]);
/// ```
pub const GEMM_128X128_PINGPONG_C2: KernelSpec<GemmBf16Params> =
    pingpong_spec::<128, { stages_for(128) }>("baton_gemm_bf16_128x128_pingpong_c2", 2);
