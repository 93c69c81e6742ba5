//! The Hopper blockwise-scaled FP8 GEMMs (e4m3; 1×128 A scales, 128×128 B
//! scales; 384 threads, 256 for the 64-row tiles): shared-memory layout and
//! one [`KernelSpec`] per tile configuration.

use crate::gemm_params::GemmFp8Params;
use baton::kernel::KernelSpec;
use baton::tile_pipeline::{
    BlockwiseFP8PaddedStage, BlockwiseFP8PaddedTilePayload, InputTileStorage, Tile,
};

/// Rows (M) of one `wgmma` wave of the two consumer warpgroups (64 each);
/// a 256-row tile is two waves.
pub const WAVE_M: u32 = 128;
/// K per stage (fp8 elements = bytes), also the scale block along K.
pub const BK: u32 = 128;
/// Threads per CTA of the 128- and 256-row tiles: a producer warpgroup and
/// two consumer warpgroups ([`threads`]).
pub const THREADS: u32 = 384;

/// Consumer warpgroups of a `BM`-row tile: one for 64 rows (one `wgmma`
/// row block), two otherwise (64 rows each, per wave).
///
/// ```
/// use baton_kernels_abi::gemm_fp8::consumer_warpgroups;
/// assert_eq!((consumer_warpgroups(64), consumer_warpgroups(128), consumer_warpgroups(256)), (1, 2, 2));
/// ```
pub const fn consumer_warpgroups(bm: usize) -> usize {
    if bm == 64 { 1 } else { 2 }
}

/// Threads per CTA of a `BM`-row tile: the producer warpgroup and
/// [`consumer_warpgroups`]`(bm)` consumer warpgroups.
///
/// ```
/// use baton_kernels_abi::gemm_fp8::{threads, THREADS};
/// assert_eq!((threads(64), threads(128)), (256, THREADS));
/// ```
pub const fn threads(bm: usize) -> u32 {
    128 * (1 + consumer_warpgroups(bm) as u32)
}
/// Epilogue sub-tile rows.
pub const SUB_ROWS: usize = 64;
/// Epilogue sub-tile columns.
pub const SUB_COLS: usize = 32;

/// What one input stage carries: A and B tiles and the A scales in boxes
/// that start on 16-byte granules (read in place for any K-block stride).
pub type Payload<const BM: usize, const BN: usize> =
    BlockwiseFP8PaddedTilePayload<BM, BN, { BK as usize }>;
/// One input stage's storage.
pub type Stage<const BM: usize, const BN: usize> = BlockwiseFP8PaddedStage<BM, BN, { BK as usize }>;
/// One D staging sub-tile (64 × 32 bf16).
pub type SubTile = Tile<u16, SUB_ROWS, SUB_COLS>;

/// Shared memory of the `BM × BN` configuration with `STAGES` input stages
/// and a ring of `DRING` D sub-tiles per consumer warpgroup, `WGS`
/// consumer warpgroups ([`consumer_warpgroups`]`(BM)`).
///
/// ```
/// use baton_kernels_abi::gemm_fp8::{Fp8Smem, SubTile};
/// // 256×128: 3 input stages and a whole tile of D staging (8 sub-tiles per warpgroup).
/// assert_eq!(core::mem::size_of::<[[SubTile; 8]; 2]>(), 64 * 1024);
/// assert!(core::mem::size_of::<Fp8Smem<256, 128, 3, 8>>() <= 227 * 1024);
/// ```
#[repr(C)]
pub struct Fp8Smem<
    const BM: usize,
    const BN: usize,
    const STAGES: usize,
    const DRING: usize = 2,
    const WGS: usize = 2,
> {
    /// The input ring.
    pub input: InputTileStorage<Payload<BM, BN>, STAGES>,
    /// D staging, `[warpgroup][buffer]`.
    pub d_tiles: [[SubTile; DRING]; WGS],
}

/// One FP8 GEMM configuration: its kernel's [`KernelSpec`] and the tile
/// facts the host plans with (the one source of both: [`TILES`]).
///
/// ```
/// use baton_kernels_abi::gemm_fp8::TILE_256X128;
/// assert_eq!((TILE_256X128.bm, TILE_256X128.bn, TILE_256X128.stages), (256, 128, 4));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Fp8Tile {
    /// The kernel's launch contract.
    pub spec: KernelSpec<GemmFp8Params>,
    /// Tile rows (M).
    pub bm: u32,
    /// Tile columns (N).
    pub bn: u32,
    /// Input stages.
    pub stages: u32,
}

const fn tile<
    const BM: usize,
    const BN: usize,
    const STAGES: usize,
    const DRING: usize,
    const WGS: usize,
>(
    name: &'static str,
    cluster: u32,
) -> Fp8Tile {
    assert!(
        core::mem::size_of::<Fp8Smem<BM, BN, STAGES, DRING, WGS>>() <= 227 * 1024,
        "an FP8 GEMM configuration exceeds 227 KiB of shared memory"
    );
    assert!(
        WGS == consumer_warpgroups(BM),
        "D staging for each consumer warpgroup of the tile"
    );
    Fp8Tile {
        spec: KernelSpec::new(name, threads(BM))
            .with_cluster([cluster, 1, 1])
            .with_dynamic_smem::<Fp8Smem<BM, BN, STAGES, DRING, WGS>>()
            .hot(),
        bm: BM as u32,
        bn: BN as u32,
        stages: STAGES as u32,
    }
}

/// 128×128×128 tiles, 6 stages, one partial accumulator.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X128.threads, 384);
/// ```
pub const GEMM_128X128: KernelSpec<GemmFp8Params> = TILE_128X128.spec;
/// [`GEMM_128X128`]'s tile.
pub const TILE_128X128: Fp8Tile = tile::<128, 128, 6, 2, 2>("baton_gemm_fp8_blockwise_128x128", 1);
/// 128×128×128 tiles, 6 stages, two partial accumulators.
///
/// ```
/// assert!(baton_kernels_abi::gemm_fp8::GEMM_128X128_DB.hot);
/// ```
pub const GEMM_128X128_DB: KernelSpec<GemmFp8Params> = TILE_128X128_DB.spec;
/// [`GEMM_128X128_DB`]'s tile.
pub const TILE_128X128_DB: Fp8Tile =
    tile::<128, 128, 6, 2, 2>("baton_gemm_fp8_blockwise_128x128_db", 1);
/// 128×128×128 tiles, two partials, 2-CTA clusters sharing B.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X128_DB_C2.cluster, [2, 1, 1]);
/// ```
pub const GEMM_128X128_DB_C2: KernelSpec<GemmFp8Params> = TILE_128X128_DB_C2.spec;
/// [`GEMM_128X128_DB_C2`]'s tile.
pub const TILE_128X128_DB_C2: Fp8Tile =
    tile::<128, 128, 6, 2, 2>("baton_gemm_fp8_blockwise_128x128_db_c2", 2);
/// 128×64×128 tiles, 8 stages, two partials.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X64_DB.cluster_size(), 1);
/// ```
pub const GEMM_128X64_DB: KernelSpec<GemmFp8Params> = TILE_128X64_DB.spec;
/// [`GEMM_128X64_DB`]'s tile.
pub const TILE_128X64_DB: Fp8Tile =
    tile::<128, 64, 8, 2, 2>("baton_gemm_fp8_blockwise_128x64_db", 1);
/// 128×192×128 tiles, 5 stages.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X192.name, "baton_gemm_fp8_blockwise_128x192");
/// ```
pub const GEMM_128X192: KernelSpec<GemmFp8Params> = TILE_128X192.spec;
/// [`GEMM_128X192`]'s tile.
pub const TILE_128X192: Fp8Tile = tile::<128, 192, 5, 2, 2>("baton_gemm_fp8_blockwise_128x192", 1);
/// 256×128×128 tiles, 4 stages, two 64-row waves per warpgroup, no stream-K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X128.threads, 384);
/// ```
pub const GEMM_256X128: KernelSpec<GemmFp8Params> = TILE_256X128.spec;
/// [`GEMM_256X128`]'s tile.
pub const TILE_256X128: Fp8Tile = tile::<256, 128, 4, 2, 2>("baton_gemm_fp8_blockwise_256x128", 1);
/// [`GEMM_256X128`] with stream-K and split-K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X128_SK.name, "baton_gemm_fp8_blockwise_256x128_sk");
/// ```
pub const GEMM_256X128_SK: KernelSpec<GemmFp8Params> = TILE_256X128_SK.spec;
/// [`GEMM_256X128_SK`]'s tile.
pub const TILE_256X128_SK: Fp8Tile =
    tile::<256, 128, 4, 2, 2>("baton_gemm_fp8_blockwise_256x128_sk", 1);
/// [`GEMM_256X128`] in clusters of 2 CTAs along N sharing each A tile by
/// TMA multicast (each CTA loads half of its rows).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X128_MCA.cluster, [2, 1, 1]);
/// ```
pub const GEMM_256X128_MCA: KernelSpec<GemmFp8Params> = TILE_256X128_MCA.spec;
/// [`GEMM_256X128_MCA`]'s tile.
pub const TILE_256X128_MCA: Fp8Tile =
    tile::<256, 128, 4, 2, 2>("baton_gemm_fp8_blockwise_256x128_mca", 2);
/// [`GEMM_256X128_MCA`] with 3 input stages and a whole tile of D staging
/// (a ring of 8 sub-tiles per warpgroup instead of 2), so a tile's stores
/// drain under the next tile's main loop instead of each wave waiting for
/// the previous wave's: for short K, where the epilogue is a larger share
/// of a tile (DeepGEMM's 3 stages and whole-tile D staging).
///
/// ```
/// use baton_kernels_abi::gemm_fp8::{Fp8Smem, GEMM_256X128_MCA_3STAGE};
/// assert_eq!(GEMM_256X128_MCA_3STAGE.dynamic_smem_bytes as usize, core::mem::size_of::<Fp8Smem<256, 128, 3, 8>>());
/// ```
pub const GEMM_256X128_MCA_3STAGE: KernelSpec<GemmFp8Params> = TILE_256X128_MCA_3STAGE.spec;
/// [`GEMM_256X128_MCA_3STAGE`]'s tile.
pub const TILE_256X128_MCA_3STAGE: Fp8Tile =
    tile::<256, 128, 3, 8, 2>("baton_gemm_fp8_blockwise_256x128_mca_3stage", 2);
/// 128×256×128 tiles, 4 stages, two 128-column waves per warpgroup.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X256.cluster_size(), 1);
/// ```
pub const GEMM_128X256: KernelSpec<GemmFp8Params> = TILE_128X256.spec;
/// [`GEMM_128X256`]'s tile.
pub const TILE_128X256: Fp8Tile = tile::<128, 256, 4, 2, 2>("baton_gemm_fp8_blockwise_128x256", 1);
/// 128×96×128 tiles, 6 stages, two partials (a tile may straddle two
/// B-scale blocks).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X96_DB.name, "baton_gemm_fp8_blockwise_128x96_db");
/// ```
pub const GEMM_128X96_DB: KernelSpec<GemmFp8Params> = TILE_128X96_DB.spec;
/// [`GEMM_128X96_DB`]'s tile.
pub const TILE_128X96_DB: Fp8Tile =
    tile::<128, 96, 6, 2, 2>("baton_gemm_fp8_blockwise_128x96_db", 1);
/// 128×32×128 tiles, 10 stages (the ring of 128×64's 8 × 24.5 KiB, ~200
/// KiB, at a stage of 20.5 KiB), two partials.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_128X32_DB.threads, 384);
/// ```
pub const GEMM_128X32_DB: KernelSpec<GemmFp8Params> = TILE_128X32_DB.spec;
/// [`GEMM_128X32_DB`]'s tile.
pub const TILE_128X32_DB: Fp8Tile =
    tile::<128, 32, 10, 2, 2>("baton_gemm_fp8_blockwise_128x32_db", 1);
/// 256×96×128 tiles, 4 stages, two 64-row waves per warpgroup, no
/// stream-K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X96.cluster_size(), 1);
/// ```
pub const GEMM_256X96: KernelSpec<GemmFp8Params> = TILE_256X96.spec;
/// [`GEMM_256X96`]'s tile.
pub const TILE_256X96: Fp8Tile = tile::<256, 96, 4, 2, 2>("baton_gemm_fp8_blockwise_256x96", 1);
/// 256×88×128 tiles, 4 stages, two 64-row waves per warpgroup, no
/// stream-K; each wave's last 24 columns are stored from registers.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X88.name, "baton_gemm_fp8_blockwise_256x88");
/// ```
pub const GEMM_256X88: KernelSpec<GemmFp8Params> = TILE_256X88.spec;
/// [`GEMM_256X88`]'s tile.
pub const TILE_256X88: Fp8Tile = tile::<256, 88, 4, 2, 2>("baton_gemm_fp8_blockwise_256x88", 1);
/// [`GEMM_256X88`] in clusters of 2 CTAs along N sharing each A tile by
/// TMA multicast (as [`GEMM_256X128_MCA`]; DeepGEMM's configuration at
/// 4096×2112).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_256X88_MCA.cluster, [2, 1, 1]);
/// ```
pub const GEMM_256X88_MCA: KernelSpec<GemmFp8Params> = TILE_256X88_MCA.spec;
/// [`GEMM_256X88_MCA`]'s tile.
pub const TILE_256X88_MCA: Fp8Tile =
    tile::<256, 88, 4, 2, 2>("baton_gemm_fp8_blockwise_256x88_mca", 2);
/// 64×128×128 tiles, 8 stages, two partials, one consumer warpgroup (256
/// threads) and a whole tile of D staging (4 sub-tiles): for M ≤ 64 and
/// the last tile row of small M, where a 128-row tile's second warpgroup
/// has no rows (DeepGEMM's `BLOCK_M = 64`). Data-parallel (no stream-K).
///
/// ```
/// use baton_kernels_abi::gemm_fp8::{Fp8Smem, GEMM_64X128_DB};
/// assert_eq!(GEMM_64X128_DB.threads, 256);
/// assert_eq!(GEMM_64X128_DB.dynamic_smem_bytes as usize, core::mem::size_of::<Fp8Smem<64, 128, 8, 4, 1>>());
/// ```
pub const GEMM_64X128_DB: KernelSpec<GemmFp8Params> = TILE_64X128_DB.spec;
/// [`GEMM_64X128_DB`]'s tile.
pub const TILE_64X128_DB: Fp8Tile =
    tile::<64, 128, 8, 4, 1>("baton_gemm_fp8_blockwise_64x128_db", 1);
/// 64×64×128 tiles, 12 stages, two partials, one consumer warpgroup, a
/// whole tile of D staging (2 sub-tiles).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_64X64_DB.threads, 256);
/// ```
pub const GEMM_64X64_DB: KernelSpec<GemmFp8Params> = TILE_64X64_DB.spec;
/// [`GEMM_64X64_DB`]'s tile.
pub const TILE_64X64_DB: Fp8Tile = tile::<64, 64, 12, 2, 1>("baton_gemm_fp8_blockwise_64x64_db", 1);
/// 64×56×128 tiles, 12 stages, two partials, one consumer warpgroup
/// (DeepGEMM's width at M = 64, N = 7168: 128 tiles); each tile's first 32
/// columns through a D sub-tile (a ring of 2), its last 24 from registers.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_64X56_DB.threads, 256);
/// ```
pub const GEMM_64X56_DB: KernelSpec<GemmFp8Params> = TILE_64X56_DB.spec;
/// [`GEMM_64X56_DB`]'s tile.
pub const TILE_64X56_DB: Fp8Tile = tile::<64, 56, 12, 2, 1>("baton_gemm_fp8_blockwise_64x56_db", 1);
/// 64×32×128 tiles, 12 stages, two partials, one consumer warpgroup (D
/// staging: a ring of 2 sub-tiles, one per tile).
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_fp8::GEMM_64X32_DB.name, "baton_gemm_fp8_blockwise_64x32_db");
/// ```
pub const GEMM_64X32_DB: KernelSpec<GemmFp8Params> = TILE_64X32_DB.spec;
/// [`GEMM_64X32_DB`]'s tile.
pub const TILE_64X32_DB: Fp8Tile = tile::<64, 32, 12, 2, 1>("baton_gemm_fp8_blockwise_64x32_db", 1);

/// Every FP8 GEMM configuration, once: the host's kernel table
/// (`baton_runtime::gemm::fp8::spec_of`, `tile_of`) reads it.
///
/// ```
/// use baton_kernels_abi::gemm_fp8::TILES;
/// let names: std::collections::BTreeSet<_> = TILES.iter().map(|t| t.spec.name).collect();
/// assert_eq!(names.len(), TILES.len());
/// ```
pub const TILES: [&Fp8Tile; 19] = [
    &TILE_128X128,
    &TILE_128X128_DB,
    &TILE_128X128_DB_C2,
    &TILE_128X64_DB,
    &TILE_128X192,
    &TILE_256X128,
    &TILE_256X128_SK,
    &TILE_256X128_MCA,
    &TILE_256X128_MCA_3STAGE,
    &TILE_128X256,
    &TILE_128X96_DB,
    &TILE_128X32_DB,
    &TILE_256X96,
    &TILE_256X88,
    &TILE_256X88_MCA,
    &TILE_64X128_DB,
    &TILE_64X64_DB,
    &TILE_64X56_DB,
    &TILE_64X32_DB,
];
