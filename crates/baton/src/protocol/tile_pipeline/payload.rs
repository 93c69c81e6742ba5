//! What one input stage holds: [`TilePayload`] and the standard payloads.
//!
//! A payload names the `#[repr(C)]` struct of [`Tile`]s that one pipeline
//! stage holds ([`TilePayload::Stage`]) and the transaction bytes the TMA
//! loads of one stage complete ([`TilePayload::TMA_BYTES`]), computed from
//! the tiles' [`Tile::BYTES`] — never typed by hand, so the byte count and
//! the shared-memory layout cannot disagree.
//!
//! A kernel can define its own payload without touching baton; here an
//! attention-style Q/K/V stage:
//!
//! ```
//! use baton::smem::SharedRef;
//! use baton::tile_pipeline::{Tile, TilePayload};
//!
//! #[repr(C)]
//! #[derive(Default)]
//! pub struct QkvStage {
//!     pub q: Tile<u16, 64, 64>,
//!     pub k: Tile<u16, 64, 64>,
//!     pub v: Tile<u16, 64, 64>,
//! }
//!
//! pub struct QkvPayload;
//! impl TilePayload for QkvPayload {
//!     type Stage = QkvStage;
//!     const TMA_BYTES: u32 =
//!         Tile::<u16, 64, 64>::BYTES + Tile::<u16, 64, 64>::BYTES + Tile::<u16, 64, 64>::BYTES;
//! }
//! assert_eq!(QkvPayload::TMA_BYTES, 3 * 8192);
//!
//! // Tiles of a stage are reached with `smem_field!`:
//! let stage = QkvStage::default();
//! let k = baton::smem_field!(SharedRef::from_ref(&stage), QkvStage, k);
//! assert_eq!(k.addr() - SharedRef::from_ref(&stage).addr(), 8192);
//! ```

use super::tile::Tile;
use crate::smem::SharedRef;
use core::marker::PhantomData;

/// The contents of one input stage, and the bytes its TMA loads complete.
///
/// Contract: `Stage` is a `#[repr(C)]` struct of [`Tile`]s (on the CPU
/// backend it must be `Default` to build storage and `Sync`), and
/// `TMA_BYTES` is the sum of the `BYTES` of the tiles loaded per stage by
/// **one CTA's** TMA traffic (what lands in this CTA's shared memory,
/// multicast included). The pipeline multiplies it by its `CTA_GROUP`
/// (Blackwell CTA pairs; 1 on Hopper) for `arrive_expect_tx`.
pub trait TilePayload {
    /// The `#[repr(C)]` struct of tiles one stage holds.
    type Stage;
    /// Transaction bytes of one stage, derived from its tiles.
    const TMA_BYTES: u32;
}

/// Stage of a [`StandardTilePayload`]: `a` (`BM × BK`) then `b` (`BN × BK`).
#[repr(C)]
pub struct StandardStage<TA, TB, const BM: usize, const BN: usize, const BK: usize> {
    /// A tile, `BM × BK` (K contiguous).
    pub a: Tile<TA, BM, BK>,
    /// B tile, `BN × BK` (K contiguous).
    pub b: Tile<TB, BN, BK>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<TA: Copy + Default, TB: Copy + Default, const BM: usize, const BN: usize, const BK: usize>
    Default for StandardStage<TA, TB, BM, BN, BK>
{
    fn default() -> Self {
        Self {
            a: Tile::new(),
            b: Tile::new(),
        }
    }
}

impl<TA, TB, const BM: usize, const BN: usize, const BK: usize> StandardStage<TA, TB, BM, BN, BK> {
    /// The `a` tile of a stage in shared memory.
    #[inline(always)]
    pub fn a(this: SharedRef<'_, Self>) -> SharedRef<'_, Tile<TA, BM, BK>> {
        crate::smem_field!(this, Self, a)
    }
    /// The `b` tile of a stage in shared memory.
    #[inline(always)]
    pub fn b(this: SharedRef<'_, Self>) -> SharedRef<'_, Tile<TB, BN, BK>> {
        crate::smem_field!(this, Self, b)
    }
}

/// A GEMM main-loop stage: an A tile and a B tile.
///
/// ```
/// use baton::tile_pipeline::{StandardTilePayload, TilePayload};
/// // bf16 (as u16) 128 × 64 A and 128 × 64 B tiles: 16 KiB each.
/// assert_eq!(StandardTilePayload::<u16, u16, 128, 128, 64>::TMA_BYTES, 32768);
/// ```
pub struct StandardTilePayload<TA, TB, const BM: usize, const BN: usize, const BK: usize>(
    PhantomData<(TA, TB)>,
);

impl<TA, TB, const BM: usize, const BN: usize, const BK: usize> TilePayload
    for StandardTilePayload<TA, TB, BM, BN, BK>
{
    type Stage = StandardStage<TA, TB, BM, BN, BK>;
    const TMA_BYTES: u32 = Tile::<TA, BM, BK>::BYTES + Tile::<TB, BN, BK>::BYTES;
}

/// Stage of a [`BlockwiseFP8TilePayload`].
#[repr(C)]
pub struct BlockwiseFP8Stage<const BM: usize, const BN: usize, const BK: usize> {
    /// A tile, FP8 bytes, `BM × BK`.
    pub a: Tile<u8, BM, BK>,
    /// B tile, FP8 bytes, `BN × BK`.
    pub b: Tile<u8, BN, BK>,
    /// Per-row scales of A for this K block, `[BM]` f32.
    pub a_scales: Tile<f32, 1, BM>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const BM: usize, const BN: usize, const BK: usize> Default for BlockwiseFP8Stage<BM, BN, BK> {
    fn default() -> Self {
        Self {
            a: Tile::new(),
            b: Tile::new(),
            a_scales: Tile::new(),
        }
    }
}

/// Blockwise-scaled FP8 GEMM stage: A, B (FP8 as bytes) and the f32 scales
/// of A's rows for the stage's K block (B's per-block scale is a scalar the
/// epilogue reads from global memory).
///
/// ```
/// use baton::tile_pipeline::{BlockwiseFP8TilePayload, TilePayload};
/// assert_eq!(BlockwiseFP8TilePayload::<128, 128, 128>::TMA_BYTES, 16384 + 16384 + 512);
/// ```
pub struct BlockwiseFP8TilePayload<const BM: usize, const BN: usize, const BK: usize>;

impl<const BM: usize, const BN: usize, const BK: usize> TilePayload
    for BlockwiseFP8TilePayload<BM, BN, BK>
{
    type Stage = BlockwiseFP8Stage<BM, BN, BK>;
    const TMA_BYTES: u32 =
        Tile::<u8, BM, BK>::BYTES + Tile::<u8, BN, BK>::BYTES + Tile::<f32, 1, BM>::BYTES;
}

/// Stage of a [`BlockwiseFP8PaddedTilePayload`]: as [`BlockwiseFP8Stage`],
/// with room in `a_scales` for the padded scale boxes.
///
/// ```
/// use baton::tile_pipeline::{BlockwiseFP8PaddedStage, BlockwiseFP8Stage};
/// // 128-row stages keep their size: the 1024-byte tile alignment had the room.
/// assert_eq!(
///     size_of::<BlockwiseFP8PaddedStage<128, 128, 128>>(),
///     size_of::<BlockwiseFP8Stage<128, 128, 128>>()
/// );
/// ```
#[repr(C)]
pub struct BlockwiseFP8PaddedStage<const BM: usize, const BN: usize, const BK: usize> {
    /// A tile, FP8 bytes, `BM × BK`.
    pub a: Tile<u8, BM, BK>,
    /// B tile, FP8 bytes, `BN × BK`.
    pub b: Tile<u8, BN, BK>,
    /// The A-scale boxes of this K block: box `i` (rows `128·i..`) from
    /// float [`A_SCALE_BOX_STRIDE`]` · i` on, row `r` of it at float
    /// `off + r` ([`a_scale_box_start`]). (`2·BM` floats: room for the
    /// boxes, in the 1024 bytes the tile takes anyway when `BM = 128`.)
    pub a_scales: Tile<f32, 2, BM>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const BM: usize, const BN: usize, const BK: usize> Default
    for BlockwiseFP8PaddedStage<BM, BN, BK>
{
    fn default() -> Self {
        Self {
            a: Tile::new(),
            b: Tile::new(),
            a_scales: Tile::new(),
        }
    }
}

/// Rows of A whose scales one A-scale box of a [`BlockwiseFP8PaddedTilePayload`]
/// carries (one `wgmma` wave of two consumer warpgroups).
///
/// ```
/// use baton::tile_pipeline::{A_SCALE_BOX_ROWS, a_scale_floats};
/// assert_eq!(a_scale_floats(2 * A_SCALE_BOX_ROWS), 2 * 132); // a 256-row tile: two boxes
/// ```
pub const A_SCALE_BOX_ROWS: u32 = 128;
/// Floats between the A-scale boxes of one stage: 128 bytes past the
/// longest box (`128 + 4` floats), TMA's shared-memory destination
/// alignment.
///
/// ```
/// use baton::tile_pipeline::{A_SCALE_BOX_ROWS, A_SCALE_BOX_STRIDE, a_scale_box_floats};
/// assert!(A_SCALE_BOX_STRIDE >= a_scale_box_floats(A_SCALE_BOX_ROWS));
/// assert_eq!(A_SCALE_BOX_STRIDE * 4 % 128, 0);
/// ```
pub const A_SCALE_BOX_STRIDE: u32 = 160;

/// Rows of a whole A-scale box of a `bm`-row tile: 128
/// ([`A_SCALE_BOX_ROWS`]), or all of the tile's rows when it has fewer (a
/// 64-row tile's one box). A box of fewer rows is the ragged last tile
/// row's.
///
/// ```
/// use baton::tile_pipeline::a_scale_whole_box_rows;
/// assert_eq!(a_scale_whole_box_rows(256), 128);
/// assert_eq!(a_scale_whole_box_rows(64), 64);
/// ```
pub const fn a_scale_whole_box_rows(bm: u32) -> u32 {
    if bm < A_SCALE_BOX_ROWS {
        bm
    } else {
        A_SCALE_BOX_ROWS
    }
}

/// Floats of the A-scale box that carries `rows ≤ 128` rows: `rows + 3`
/// rounded up to 4 (whole 16-byte granules, from the granule that holds
/// the first row's scale).
///
/// ```
/// use baton::tile_pipeline::a_scale_box_floats;
/// assert_eq!(a_scale_box_floats(128), 132);
/// assert_eq!(a_scale_box_floats(1), 4);
/// assert_eq!(a_scale_box_floats(2), 8);
/// ```
pub const fn a_scale_box_floats(rows: u32) -> u32 {
    (rows + 3).next_multiple_of(4)
}

/// Floats the A-scale boxes of `rows` rows deliver (whole boxes of 128
/// rows, then a box of the rest): a stage's A-scale transaction bytes are
/// 4 × this.
///
/// ```
/// use baton::tile_pipeline::a_scale_floats;
/// assert_eq!(a_scale_floats(256), 264);
/// assert_eq!(a_scale_floats(130), 132 + 8);
/// assert_eq!(a_scale_floats(0), 0);
/// ```
pub const fn a_scale_floats(rows: u32) -> u32 {
    let rest = rows % A_SCALE_BOX_ROWS;
    (rows / A_SCALE_BOX_ROWS) * a_scale_box_floats(A_SCALE_BOX_ROWS)
        + if rest == 0 {
            0
        } else {
            a_scale_box_floats(rest)
        }
}

/// Where the A-scale box of K block `kb` whose first row is `row0` starts,
/// in a scale buffer `[K/128][ld]` (M contiguous, K blocks `ld` floats
/// apart, any `ld ≥ M`) read as one vector: `(c0, off)` with `c0` the
/// 16-byte granule that holds the scale of (`row0`, `kb`) — a TMA box
/// must start on one — and `off` its place in that granule, so the
/// scale of row `row0 + r` is at float `off + r` of the box.
///
/// ```
/// use baton::tile_pipeline::a_scale_box_start;
/// // ld = 67: K block 1's row 0 is float 67 = granule 64 + 3.
/// assert_eq!(a_scale_box_start(1, 67, 0), (64, 3));
/// assert_eq!(a_scale_box_start(2, 68, 128), (264, 0));
/// ```
pub const fn a_scale_box_start(kb: u32, ld: u32, row0: u32) -> (u32, u32) {
    let at = kb * ld + row0;
    (at & !3, at & 3)
}

/// Blockwise-scaled FP8 GEMM stage whose A scales come in boxes that start
/// on 16-byte granules: [`BlockwiseFP8TilePayload`] for scale buffers
/// read in place whatever their K-block stride (`ld`), e.g. PyTorch's
/// M-major `[K/128][M]` with M not a multiple of 4, which a rank-2 map
/// cannot describe (TMA needs 16-byte strides).
///
/// Per stage the A scales of the tile's rows come in `⌈BM/128⌉` boxes:
/// box `i` carries the scales of rows `128·i..128·(i+1)` of K block `kb`,
/// loaded from the granule [`a_scale_box_start`] names (`c0`) as
/// [`a_scale_box_floats`]`(rows)` floats — 4 more than the rows for a full
/// box, to cover the place `off ∈ 0..4` of the first row in its granule —
/// into `a_scales` at float [`A_SCALE_BOX_STRIDE`]` · i`. The consumer
/// reads row `r` of box `i` at float `A_SCALE_BOX_STRIDE · i + off + r`.
/// The floats a box carries past its rows (the padding between K blocks,
/// the next K block's scales, TMA's zero fill past the buffer) are read
/// only for rows past M.
///
/// Contract: `TMA_BYTES` counts the full tile's boxes: A, B and
/// `4 ·`[`a_scale_floats`]`(BM)` bytes; a stage that loads fewer rows
/// expects `4 · a_scale_floats(rows)` bytes of scales. `BM` is a multiple
/// of 4 (checked where `TMA_BYTES` is used).
///
/// ```
/// use baton::tile_pipeline::{BlockwiseFP8PaddedTilePayload, TilePayload};
/// assert_eq!(BlockwiseFP8PaddedTilePayload::<128, 128, 128>::TMA_BYTES, 16384 + 16384 + 528);
/// assert_eq!(BlockwiseFP8PaddedTilePayload::<256, 128, 128>::TMA_BYTES, 32768 + 16384 + 1056);
/// ```
pub struct BlockwiseFP8PaddedTilePayload<const BM: usize, const BN: usize, const BK: usize>;

impl<const BM: usize, const BN: usize, const BK: usize> TilePayload
    for BlockwiseFP8PaddedTilePayload<BM, BN, BK>
{
    type Stage = BlockwiseFP8PaddedStage<BM, BN, BK>;
    const TMA_BYTES: u32 = {
        assert!(
            BM.is_multiple_of(4) && BM > 0,
            "BlockwiseFP8PaddedTilePayload: BM must be a positive multiple of 4"
        );
        let boxes = (BM as u32).div_ceil(A_SCALE_BOX_ROWS);
        let last = BM as u32 - (boxes - 1) * A_SCALE_BOX_ROWS;
        assert!(
            (boxes - 1) * A_SCALE_BOX_STRIDE + a_scale_box_floats(last) <= 2 * BM as u32,
            "BlockwiseFP8PaddedTilePayload: the A-scale boxes exceed a_scales"
        );
        Tile::<u8, BM, BK>::BYTES + Tile::<u8, BN, BK>::BYTES + 4 * a_scale_floats(BM as u32)
    };
}

/// Stage of a [`BlockScaledTilePayload`].
#[repr(C)]
pub struct BlockScaledStage<
    TA,
    TB,
    TS,
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const SFK: usize,
> {
    /// A tile, `BM × BK`.
    pub a: Tile<TA, BM, BK>,
    /// B tile, `BN × BK`.
    pub b: Tile<TB, BN, BK>,
    /// A scale factors, `BM × SFK` (one per `BK / SFK` elements of K).
    pub sfa: Tile<TS, BM, SFK>,
    /// B scale factors, `BN × SFK`.
    pub sfb: Tile<TS, BN, SFK>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<TA, TB, TS, const BM: usize, const BN: usize, const BK: usize, const SFK: usize> Default
    for BlockScaledStage<TA, TB, TS, BM, BN, BK, SFK>
where
    TA: Copy + Default,
    TB: Copy + Default,
    TS: Copy + Default,
{
    fn default() -> Self {
        Self {
            a: Tile::new(),
            b: Tile::new(),
            sfa: Tile::new(),
            sfb: Tile::new(),
        }
    }
}

/// Block-scaled (MX-style) stage: A, B and their scale factors, `SFK` scale
/// columns per K block (`BK` must be a multiple of `SFK`).
///
/// ```
/// use baton::tile_pipeline::{BlockScaledTilePayload, TilePayload};
/// // FP8 A/B, one u8 (E8M0) scale per 32 elements of K: 128 / 32 = 4 columns.
/// type P = BlockScaledTilePayload<u8, u8, u8, 128, 128, 128, 4>;
/// assert_eq!(P::TMA_BYTES, 16384 + 16384 + 512 + 512);
/// ```
pub struct BlockScaledTilePayload<
    TA,
    TB,
    TS,
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const SFK: usize,
>(PhantomData<(TA, TB, TS)>);

impl<TA, TB, TS, const BM: usize, const BN: usize, const BK: usize, const SFK: usize> TilePayload
    for BlockScaledTilePayload<TA, TB, TS, BM, BN, BK, SFK>
{
    type Stage = BlockScaledStage<TA, TB, TS, BM, BN, BK, SFK>;
    const TMA_BYTES: u32 = {
        assert!(
            SFK > 0 && BK.is_multiple_of(SFK),
            "BK must be a multiple of the scale columns SFK"
        );
        Tile::<TA, BM, BK>::BYTES
            + Tile::<TB, BN, BK>::BYTES
            + Tile::<TS, BM, SFK>::BYTES
            + Tile::<TS, BN, SFK>::BYTES
    };
}

/// MXFP8 stage payload ([`crate::block_scale::Mxfp8`]): e4m3 A (`BM × BK`
/// bytes) and B (`BN × BK`), ue8m0 scale factors SFA (`BM × SFK` bytes) and
/// SFB (`BN × SFK`) in the tcgen05 atom layout
/// ([`crate::block_scale::sf_tile_offset`]); the stage is a
/// [`BlockScaledStage`]`<u8, u8, u8, BM, BN, BK, SFK>`.
///
/// Checked at compile time (when [`TilePayload::TMA_BYTES`] is used, as
/// every input pipeline does): `SFK = BK / 32`, `SFK` a multiple of 4 (whole
/// SF atoms: `BK` a multiple of 128), `BM` and `BN` multiples of 128.
///
/// ```
/// use baton::tile_pipeline::{Mxfp8TilePayload, TilePayload};
/// type P = Mxfp8TilePayload<128, 256, 128, 4>;
/// assert_eq!(P::TMA_BYTES, 128 * 128 + 256 * 128 + 128 * 4 + 256 * 4);
/// ```
pub struct Mxfp8TilePayload<const BM: usize, const BN: usize, const BK: usize, const SFK: usize>;

impl<const BM: usize, const BN: usize, const BK: usize, const SFK: usize> TilePayload
    for Mxfp8TilePayload<BM, BN, BK, SFK>
{
    type Stage = BlockScaledStage<u8, u8, u8, BM, BN, BK, SFK>;
    const TMA_BYTES: u32 = {
        assert!(
            SFK * 32 == BK,
            "MXFP8: SFK must be BK / 32 (one ue8m0 per 32 elements of K)"
        );
        assert!(
            SFK.is_multiple_of(4),
            "MXFP8: BK must be a multiple of 128 (whole 4-column SF atoms)"
        );
        assert!(
            BM.is_multiple_of(128) && BN.is_multiple_of(128),
            "MXFP8: BM and BN must be multiples of 128 (whole 128-row SF atoms)"
        );
        BlockScaledTilePayload::<u8, u8, u8, BM, BN, BK, SFK>::TMA_BYTES
    };
}

/// NVFP4 stage payload ([`crate::block_scale::Nvfp4`]): e2m1 A and B packed
/// two per byte — `BK_BYTES` bytes per row hold `2 · BK_BYTES` elements of
/// K — and ue4m3 scale factors SFA (`BM × SFK` bytes), SFB (`BN × SFK`) in
/// the tcgen05 atom layout; the stage is a
/// [`BlockScaledStage`]`<u8, u8, u8, BM, BN, BK_BYTES, SFK>`.
///
/// Checked at compile time: `SFK = 2 · BK_BYTES / 16`, `SFK` a multiple of
/// 4 (`BK_BYTES` a multiple of 32, i.e. K per stage a multiple of 64), `BM`
/// and `BN` multiples of 128.
///
/// ```
/// use baton::tile_pipeline::{Nvfp4TilePayload, TilePayload};
/// type P = Nvfp4TilePayload<128, 128, 128, 16>; // K = 256 per stage
/// assert_eq!(P::TMA_BYTES, 2 * 128 * 128 + 2 * 128 * 16);
/// ```
pub struct Nvfp4TilePayload<
    const BM: usize,
    const BN: usize,
    const BK_BYTES: usize,
    const SFK: usize,
>;

impl<const BM: usize, const BN: usize, const BK_BYTES: usize, const SFK: usize> TilePayload
    for Nvfp4TilePayload<BM, BN, BK_BYTES, SFK>
{
    type Stage = BlockScaledStage<u8, u8, u8, BM, BN, BK_BYTES, SFK>;
    const TMA_BYTES: u32 = {
        assert!(
            SFK * 16 == 2 * BK_BYTES,
            "NVFP4: SFK must be 2 * BK_BYTES / 16 (one ue4m3 per 16 elements of K)"
        );
        assert!(
            SFK.is_multiple_of(4),
            "NVFP4: K per stage must be a multiple of 64 (whole SF atoms)"
        );
        assert!(
            BM.is_multiple_of(128) && BN.is_multiple_of(128),
            "NVFP4: BM and BN must be multiples of 128 (whole 128-row SF atoms)"
        );
        BlockScaledTilePayload::<u8, u8, u8, BM, BN, BK_BYTES, SFK>::TMA_BYTES
    };
}
