//! A payload defined outside baton: one K tile and one V tile per stage.
//!
//! What baton needs from a payload ([`TilePayload`]): the `#[repr(C)]`
//! struct of [`Tile`]s that one stage holds, and the bytes the TMA loads of
//! one stage complete — derived from the tiles' `BYTES`, never typed by
//! hand, so the barrier's expect-tx count and the layout cannot disagree.

use baton::smem::SharedRef;
use baton::tile_pipeline::{Tile, TilePayload};

/// Rows of K and V per stage.
pub const ROWS: usize = 32;
/// Columns (the head dimension): 32 `u32` = 128 bytes, one swizzle span.
pub const DIM: usize = 32;

/// One K tile or V tile.
pub type KvTile = Tile<u32, ROWS, DIM>;

/// One stage: the K rows and the V rows of the same row block.
#[repr(C)]
pub struct KvStage {
    /// K rows.
    pub k: KvTile,
    /// V rows.
    pub v: KvTile,
}

impl KvStage {
    /// The K tile of a stage in shared memory.
    #[inline(always)]
    pub fn k(this: SharedRef<'_, Self>) -> SharedRef<'_, KvTile> {
        baton::smem_field!(this, Self, k)
    }
    /// The V tile of a stage in shared memory.
    #[inline(always)]
    pub fn v(this: SharedRef<'_, Self>) -> SharedRef<'_, KvTile> {
        baton::smem_field!(this, Self, v)
    }
}

/// The CPU backend builds stage storage with `Default`.
#[cfg(not(target_arch = "nvptx64"))]
impl Default for KvStage {
    fn default() -> Self {
        Self {
            k: Tile::new(),
            v: Tile::new(),
        }
    }
}

/// The payload: a [`KvStage`] per stage, both tiles loaded by TMA.
///
/// ```
/// use baton::tile_pipeline::TilePayload;
/// use kv_kernel::payload::KvPayload;
/// assert_eq!(KvPayload::TMA_BYTES, 2 * 32 * 32 * 4);
/// ```
pub struct KvPayload;

impl TilePayload for KvPayload {
    type Stage = KvStage;
    const TMA_BYTES: u32 = KvTile::BYTES + KvTile::BYTES;
}
