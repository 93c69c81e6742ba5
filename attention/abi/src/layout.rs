//! The payloads of the two input pipelines and the CTA's shared memory.

use crate::{BOX_COLS, WG_ROWS};
use baton::ordered_barrier::OrderedBarriers;
use baton::tile_pipeline::{InputTileStorage, Tile, TilePayload};

/// One box: 64 rows × 64 bf16 columns (128-byte rows, 128-byte swizzle).
pub type QBox = Tile<u16, WG_ROWS, BOX_COLS>;

/// One K/V stage: `BN` rows of K, or of V, as `NB` column boxes of 64
/// (head dimension `64·NB`), as TMA writes them (128-byte rows, 128-byte
/// swizzle). S = Q·Kᵀ reads a K stage K-major; O += P·V reads a V stage
/// N-major (`imm-trans-b`).
#[repr(C)]
pub struct KvStage<const NB: usize, const BN: usize> {
    /// The rows, by column box.
    pub boxes: [Tile<u16, BN, BOX_COLS>; NB],
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const NB: usize, const BN: usize> Default for KvStage<NB, BN> {
    fn default() -> Self {
        Self {
            boxes: core::array::from_fn(|_| Tile::new()),
        }
    }
}

/// The K/V payload: a [`KvStage`] per stage, its `NB` TMA boxes complete on
/// the stage's one `full` barrier. K and V have a pipeline each, so a K
/// stage is freed as soon as S = Q·Kᵀ retired, while P·V still reads V.
///
/// ```
/// use baton::tile_pipeline::TilePayload;
/// use baton_attention_abi::KvPayload;
/// assert_eq!(<KvPayload<2, 128> as TilePayload>::TMA_BYTES, 128 * 128 * 2);
/// ```
pub struct KvPayload<const NB: usize, const BN: usize>;

impl<const NB: usize, const BN: usize> TilePayload for KvPayload<NB, BN> {
    type Stage = KvStage<NB, BN>;
    const TMA_BYTES: u32 = NB as u32 * Tile::<u16, BN, BOX_COLS>::BYTES;
}

/// One consumer warpgroup's query rows: 64 rows as `NB` column boxes.
/// Loaded once per work tile; after its last S = Q·Kᵀ the warpgroup
/// writes its rows of O over them, and TMA stores them from there.
#[repr(C)]
pub struct QStage<const NB: usize> {
    /// By column box.
    pub rows: [QBox; NB],
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const NB: usize> Default for QStage<NB> {
    fn default() -> Self {
        Self {
            rows: core::array::from_fn(|_| Tile::new()),
        }
    }
}

/// The Q payload: one consumer warpgroup's [`QStage`]. The Q pipeline's
/// stages are filled in the order warpgroup 0's rows, warpgroup 1's rows,
/// …, tile after tile (each of `W` warpgroups takes every `W`-th stage,
/// skipping the others'), each freed when its warpgroup's O stores have
/// read it. With 3 stages and 2 warpgroups the next tile's rows of
/// warpgroup 0 load while this tile runs, and warpgroup 1's as soon as
/// warpgroup 0's O left.
///
/// ```
/// use baton::tile_pipeline::TilePayload;
/// use baton_attention_abi::QPayload;
/// assert_eq!(<QPayload<2> as TilePayload>::TMA_BYTES, 64 * 128 * 2);
/// ```
pub struct QPayload<const NB: usize>;

impl<const NB: usize> TilePayload for QPayload<NB> {
    type Stage = QStage<NB>;
    const TMA_BYTES: u32 = NB as u32 * QBox::BYTES;
}

/// The CTA's shared memory: the K ring (`SK` stages of `BN` rows), the V
/// ring (`SV` stages), the Q ring (`SQ` stages of one warpgroup's rows),
/// the ping-pong's ordered barrier among the `W` consumer warpgroups.
#[repr(C)]
pub struct AttnSmem<
    const NB: usize,
    const BN: usize,
    const SK: usize,
    const SV: usize,
    const SQ: usize,
    const W: usize = 2,
> {
    /// K stages and their full/empty barriers.
    pub k: InputTileStorage<KvPayload<NB, BN>, SK>,
    /// V stages and their full/empty barriers.
    pub v: InputTileStorage<KvPayload<NB, BN>, SV>,
    /// The query rows (then O) and their barriers: warpgroup 0's rows,
    /// warpgroup 1's, …, the next tile's warpgroup 0's, … round the ring.
    pub q: InputTileStorage<QPayload<NB>, SQ>,
    /// The consumer warpgroups' ping-pong (`baton::ordered_barrier`): one
    /// turn kind ("issue my `wgmma`s"), `W` groups.
    pub order: OrderedBarriers<1, W>,
}
