//! Device tile copy through `baton::tile_pipeline`: TMA loads into an
//! `InputTilePipeline`, TMA stores back out; 64 × 64 bf16 tiles with the
//! 128-byte swizzle; 256 threads (warp 0 produces, warpgroup 1 consumes).

use baton::arch::current::tma::TensorMap;
use baton::kernel::{KernelParams, KernelSpec};
use baton::tile_pipeline::{InputTileStorage, Tile, TilePayload};

/// Tile edge (rows and bf16 columns).
pub const TILE: u32 = 64;
/// Stages of the input ring.
pub const STAGES: usize = 4;
/// Threads per block.
pub const THREADS: u32 = 256;

/// Parameters of both tile-copy kernels (tensor maps in global memory).
///
/// ```
/// let p = baton_kernels_abi::tile_copy::TileCopyParams { load_map: core::ptr::null(), store_map: core::ptr::null(), tiles_m: 4, tiles_n: 8 };
/// assert_eq!(p.tiles_m * p.tiles_n, 32);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TileCopyParams {
    /// The source tensor's map (box 64 × 64, or 32 × 64 for the multicast kernel).
    pub load_map: *const TensorMap,
    /// The destination tensor's map (same box).
    pub store_map: *const TensorMap,
    /// Tile rows.
    pub tiles_m: u32,
    /// Tile columns.
    pub tiles_n: u32,
}
// SAFETY: repr(C) of raw pointers and integers.
unsafe impl KernelParams for TileCopyParams {}

/// One 64 × 64 bf16 tile per stage.
pub struct CopyPayload;
impl TilePayload for CopyPayload {
    type Stage = Tile<u16, 64, 64>;
    const TMA_BYTES: u32 = Tile::<u16, 64, 64>::BYTES;
}

/// Dynamic shared memory of [`COPY`].
pub type CopySmem = InputTileStorage<CopyPayload, STAGES>;

/// Two half tiles (rows 0..32 and 32..64) per stage; CTA `r` of the pair
/// loads half `r` and multicasts it to both CTAs.
pub struct HalvesPayload;
impl TilePayload for HalvesPayload {
    type Stage = [Tile<u16, 32, 64>; 2];
    const TMA_BYTES: u32 = 2 * Tile::<u16, 32, 64>::BYTES;
}

/// Dynamic shared memory of [`COPY_MULTICAST`].
pub type McSmem = InputTileStorage<HalvesPayload, STAGES>;

/// `baton_tile_copy_bf16`: any grid.
///
/// ```
/// assert_eq!(baton_kernels_abi::tile_copy::COPY.threads, 256);
/// ```
pub const COPY: KernelSpec<TileCopyParams> = KernelSpec::new("baton_tile_copy_bf16", THREADS)
    .with_dynamic_smem::<CopySmem>()
    .hot();

/// `baton_tile_copy_bf16_multicast`: clusters of 2 CTAs sharing each tile by
/// TMA multicast; even grids.
///
/// ```
/// assert_eq!(baton_kernels_abi::tile_copy::COPY_MULTICAST.cluster, [2, 1, 1]);
/// ```
pub const COPY_MULTICAST: KernelSpec<TileCopyParams> =
    KernelSpec::new("baton_tile_copy_bf16_multicast", THREADS)
        .with_cluster([2, 1, 1])
        .with_dynamic_smem::<McSmem>()
        .hot();
