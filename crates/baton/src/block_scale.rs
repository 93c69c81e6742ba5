//! Block-scaled formats (MXFP8, NVFP4) and the scale-factor layout the
//! `tcgen05` block-scaled MMAs (`kind::mxf8f6f4`, `kind::mxf4nvf4`) read.
//!
//! A block-scaled operand is a K-major matrix of narrow elements plus one
//! scale factor (SF) per [`BlockScaleFormat::VEC`] consecutive elements of
//! K: the value of element `(r, k)` is `elem(r, k) · sf(r, k / VEC)`.
//!
//! | format | element | per byte | scale | `VEC` |
//! |---|---|---|---|---|
//! | [`Mxfp8`] | [`E4m3`] | 1 | [`Ue8m0`] (`2^(x-127)`) | 32 |
//! | [`Nvfp4`] | [`E2m1`] (element 0 in the low nibble) | 2 | [`Ue4m3`] | 16 |
//!
//! # Scale-factor layout
//!
//! Scale factors are stored in **atoms** of 128 rows × 4 SF columns = 512
//! bytes (one byte per SF). Inside an atom, row `r` (0..128) and SF column
//! `c` (0..4) are at byte
//!
//! ```text
//! 16 · (r % 32) + 4 · (r / 32) + c
//! ```
//!
//! i.e. the 128 rows are interleaved as 32 × 4: the 16 bytes at `16·i` hold
//! the 4 SFs of rows `i`, `i+32`, `i+64`, `i+96`, so each 32-bit word holds
//! the 4 K-consecutive SFs of one row (one TMEM word after `tcgen05.cp`).
//! `tcgen05.cp.32x128b.warpx4` of one atom writes row `r`'s word to TMEM
//! column `base + r / 32`, lane `r % 32` of every 32-lane partition — where
//! the block-scaled `tcgen05.mma` reads it (PTX ISA, "Block Scaling"; see
//! the CPU simulation's notes in `arch::cpu::tcgen05`): an operand of 128
//! rows takes 4 TMEM columns per atom, one of 256 rows 8 (its second row
//! block's atom at `base + 4`).
//! This is CUTLASS's `Sm1xxBlockScaledBasicChunk` K-major atom
//! (`include/cutlass/detail/sm100_blockscaled_layout.hpp`: shape
//! `((32,4),(VEC,4))`, strides `((16,4),(0,1))`), the layout
//! cuBLASLt calls the 128×4 "swizzled" scale layout.
//!
//! * **Global memory** ([`SfLayout::offset`]): atoms tile the
//!   (padded) matrix with the K atoms of one 128-row block contiguous,
//!   then the next row block — CUTLASS's `tile_to_shape(atom, (M, K),
//!   Step<2, 1>)`. Rows are padded to a multiple of 128 and SF columns to a
//!   multiple of 4 (padding bytes are written as the scale 0 / ignored).
//! * **Shared memory**, one CTA tile of `BM` rows (multiple of 128) × `SFK`
//!   SF columns (multiple of 4) ([`sf_tile_offset`]): the atoms of the tile
//!   in the same order (row block major, then K atom) — what a 3-D TMA box
//!   over the global layout lands ([`SfLayout::tma_dims`]). With `BM = 128`
//!   this is also CUTLASS's shared-memory order; for `BM > 128` CUTLASS
//!   puts the K atom outermost, so a kernel addresses each 512-byte atom
//!   through [`sf_tile_offset`] (each `tcgen05.cp` copies whole atoms).
//!
//! ```
//! use baton::block_scale::{SfLayout, sf_atom_offset};
//! assert_eq!(sf_atom_offset(0, 0), 0);
//! assert_eq!(sf_atom_offset(32, 0), 4);   // row 32 shares row 0's 16 bytes
//! assert_eq!(sf_atom_offset(1, 3), 19);
//! let l = SfLayout::new(256, 8); // 256 rows, 8 SF columns: 2 × 2 atoms
//! assert_eq!(l.offset(0, 4), 512);       // second K atom of row block 0
//! assert_eq!(l.offset(128, 0), 1024);    // row block 1
//! assert_eq!(l.bytes(), 2048);
//! ```

use crate::numeric::{E2m1, E4m3, SmallFloat, Ue4m3, Ue8m0};

/// Rows of one SF atom.
pub const SF_ATOM_ROWS: usize = 128;
/// SF columns of one SF atom.
pub const SF_ATOM_COLS: usize = 4;
/// Bytes of one SF atom.
pub const SF_ATOM_BYTES: usize = SF_ATOM_ROWS * SF_ATOM_COLS;

/// A block-scaled operand format.
///
/// ```
/// use baton::block_scale::{BlockScaleFormat, Mxfp8, Nvfp4};
/// assert_eq!((Mxfp8::VEC, Mxfp8::ELEMS_PER_BYTE), (32, 1));
/// assert_eq!((Nvfp4::VEC, Nvfp4::ELEMS_PER_BYTE), (16, 2));
/// ```
pub trait BlockScaleFormat {
    /// Name (`"mxfp8"`).
    const NAME: &'static str;
    /// Element format.
    type Elem: SmallFloat;
    /// Scale-factor format (one byte).
    type Scale: SmallFloat;
    /// Elements of K per scale factor.
    const VEC: usize;
    /// Elements per byte of the packed operand (2 for FP4).
    const ELEMS_PER_BYTE: usize;
}

/// MXFP8 (OCP MX): e4m3 elements, one ue8m0 scale per 32 elements of K
/// (`tcgen05.mma ... kind::mxf8f6f4`, `scale_vec::1X`).
///
/// ```
/// use baton::block_scale::{BlockScaleFormat, Mxfp8};
/// use baton::numeric::SmallFloat;
/// assert_eq!(<Mxfp8 as BlockScaleFormat>::Scale::from_bits(127).to_f32(), 1.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mxfp8;

impl BlockScaleFormat for Mxfp8 {
    const NAME: &'static str = "mxfp8";
    type Elem = E4m3;
    type Scale = Ue8m0;
    const VEC: usize = 32;
    const ELEMS_PER_BYTE: usize = 1;
}

/// NVFP4: e2m1 elements packed two per byte (element 0 in the low nibble),
/// one ue4m3 scale per 16 elements of K (`kind::mxf4nvf4`,
/// `scale_vec::4X`).
///
/// ```
/// use baton::block_scale::{BlockScaleFormat, Nvfp4};
/// assert_eq!(Nvfp4::VEC, 16);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nvfp4;

impl BlockScaleFormat for Nvfp4 {
    const NAME: &'static str = "nvfp4";
    type Elem = E2m1;
    type Scale = Ue4m3;
    const VEC: usize = 16;
    const ELEMS_PER_BYTE: usize = 2;
}

/// Byte offset of (row `r` % 128, SF column `c` % 4) inside its atom:
/// `16·(r % 32) + 4·((r / 32) % 4) + c % 4`.
///
/// ```
/// use baton::block_scale::sf_atom_offset;
/// assert_eq!(sf_atom_offset(127, 3), 16 * 31 + 12 + 3);
/// ```
#[inline(always)]
pub const fn sf_atom_offset(r: usize, c: usize) -> usize {
    16 * (r % 32) + 4 * ((r / 32) % 4) + c % 4
}

/// Byte offset of (row `r`, SF column `c`) in a shared-memory SF tile of
/// `sfk` SF columns (`sfk` a multiple of 4; the tile's rows a multiple of
/// 128): atom `(r / 128, c / 4)` at `512 · ((r / 128) · sfk / 4 + c / 4)`,
/// then [`sf_atom_offset`].
///
/// ```
/// use baton::block_scale::sf_tile_offset;
/// assert_eq!(sf_tile_offset(0, 4, 8), 512);
/// assert_eq!(sf_tile_offset(128, 0, 8), 1024);
/// assert_eq!(sf_tile_offset(33, 1, 4), 16 + 4 + 1);
/// ```
#[inline(always)]
pub const fn sf_tile_offset(r: usize, c: usize, sfk: usize) -> usize {
    SF_ATOM_BYTES * ((r / SF_ATOM_ROWS) * (sfk / SF_ATOM_COLS) + c / SF_ATOM_COLS)
        + sf_atom_offset(r, c)
}

/// The global SF layout of one operand: `rows` rows (M or N) × `sf_cols`
/// SF columns (`K / VEC`), padded to whole atoms.
///
/// ```
/// use baton::block_scale::SfLayout;
/// let l = SfLayout::new(200, 6); // padded to 256 rows, 8 SF columns
/// assert_eq!((l.row_blocks(), l.k_atoms(), l.bytes()), (2, 2, 2048));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SfLayout {
    rows: usize,
    sf_cols: usize,
}

impl SfLayout {
    /// The layout of `rows` × `sf_cols` scale factors.
    ///
    /// ```
    /// # use baton::block_scale::SfLayout;
    /// assert_eq!(SfLayout::new(128, 4).bytes(), 512);
    /// ```
    pub const fn new(rows: usize, sf_cols: usize) -> Self {
        Self { rows, sf_cols }
    }

    /// Rows (unpadded).
    pub const fn rows(&self) -> usize {
        self.rows
    }

    /// SF columns (unpadded).
    pub const fn sf_cols(&self) -> usize {
        self.sf_cols
    }

    /// 128-row blocks (rows padded up).
    pub const fn row_blocks(&self) -> usize {
        self.rows.div_ceil(SF_ATOM_ROWS)
    }

    /// Atoms along K (SF columns padded up to a multiple of 4).
    pub const fn k_atoms(&self) -> usize {
        self.sf_cols.div_ceil(SF_ATOM_COLS)
    }

    /// Bytes of the padded SF tensor.
    pub const fn bytes(&self) -> usize {
        self.row_blocks() * self.k_atoms() * SF_ATOM_BYTES
    }

    /// Byte offset of the SF of row `r`, SF column `c` (K elements
    /// `c·VEC..(c+1)·VEC`): atom `r / 128 · k_atoms + c / 4`, then
    /// [`sf_atom_offset`].
    ///
    /// ```
    /// # use baton::block_scale::SfLayout;
    /// let l = SfLayout::new(256, 8);
    /// assert_eq!(l.offset(130, 5), 512 * 3 + 16 * 2 + 1);
    /// ```
    pub const fn offset(&self, r: usize, c: usize) -> usize {
        SF_ATOM_BYTES * ((r / SF_ATOM_ROWS) * self.k_atoms() + c / SF_ATOM_COLS)
            + sf_atom_offset(r, c)
    }

    /// The 3-D byte view a TMA map loads SF tiles through (`u8`
    /// elements, innermost first): each 512-byte atom as two 256-byte rows
    /// (a box row is at most 256 elements) — dims `[256, 2·k_atoms,
    /// row_blocks]`, byte strides `[256, 512·k_atoms]`. A box `[256,
    /// sfk / 2, bm / 128]` at `(0, c0 / 2, r0 / 128)` (`c0`, `sfk`
    /// multiples of 4, `r0`, `bm` of 128) lands the SF tile of rows
    /// `r0..r0+bm`, SF columns `c0..c0+sfk` in the [`sf_tile_offset`]
    /// layout.
    ///
    /// ```
    /// # use baton::block_scale::SfLayout;
    /// assert_eq!(SfLayout::new(256, 8).tma_dims(), ([256, 4, 2], [256, 1024]));
    /// ```
    pub const fn tma_dims(&self) -> ([u64; 3], [u64; 2]) {
        let k = self.k_atoms() as u64;
        let half = (SF_ATOM_BYTES / 2) as u64;
        (
            [half, 2 * k, self.row_blocks() as u64],
            [half, SF_ATOM_BYTES as u64 * k],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atom_is_a_permutation_with_row_words() {
        let mut seen = [false; SF_ATOM_BYTES];
        for r in 0..128 {
            for c in 0..4 {
                let o = sf_atom_offset(r, c);
                assert!(!seen[o], "({r}, {c}) collides");
                seen[o] = true;
                // One row's 4 SFs form one aligned 32-bit word, K in order.
                assert_eq!(o / 4, sf_atom_offset(r, 0) / 4);
                assert_eq!(o % 4, c);
            }
            // 16-byte groups: rows i, i+32, i+64, i+96.
            assert_eq!(sf_atom_offset(r, 0) / 16, r % 32);
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn global_layout_is_a_permutation_of_the_padded_tensor() {
        for (rows, cols) in [(128, 4), (256, 8), (200, 6), (1, 1), (384, 12)] {
            let l = SfLayout::new(rows, cols);
            let (pr, pc) = (l.row_blocks() * 128, l.k_atoms() * 4);
            let mut seen = vec![false; l.bytes()];
            for r in 0..pr {
                for c in 0..pc {
                    let o = l.offset(r, c);
                    assert!(!seen[o], "{rows}x{cols}: ({r}, {c})");
                    seen[o] = true;
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn tile_layout_matches_the_global_atoms() {
        // A tile of bm × sfk at (r0, c0) holds, at sf_tile_offset(r, c),
        // the global byte of (r0 + r, c0 + c); atoms are copied whole.
        let l = SfLayout::new(512, 16);
        let (bm, sfk) = (256, 8);
        for (r0, c0) in [(0, 0), (256, 8), (256, 0)] {
            for r in 0..bm {
                for c in 0..sfk {
                    let t = sf_tile_offset(r, c, sfk);
                    let g = l.offset(r0 + r, c0 + c);
                    assert_eq!(t % 512, g % 512);
                    let atom = (r / 128) * (sfk / 4) + c / 4;
                    assert_eq!(t / 512, atom);
                    assert_eq!(g / 512, ((r0 + r) / 128) * l.k_atoms() + (c0 + c) / 4);
                }
            }
        }
    }
}
