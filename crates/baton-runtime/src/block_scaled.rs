//! Host side of the block-scaled formats (MXFP8, NVFP4; issue #8):
//! quantizers from `f32` matrices to elements + scale factors in the
//! tcgen05 SF layout ([`baton::block_scale`]), their TMA tensor-map
//! descriptions. (The `f64` reference GEMM of the dequantized inputs is
//! `baton_reference::block_scaled_ref::reference_gemm`.)
//!
//! Operands are K-major (`rows × k`, K contiguous), as the GEMMs' A (M × K)
//! and B (N × K). Per block of [`BlockScaleFormat::VEC`] elements of a row:
//!
//! * MXFP8: `scale = 2^ceil(log2(amax / 448))` (ue8m0, rounded up so that no
//!   element saturates), `elem = e4m3(x / scale)` (round to nearest even);
//! * NVFP4: `scale = ue4m3(amax / 6)` rounded up to the next ue4m3 value
//!   (no element saturates), `elem = e2m1(x / scale)`. There is no
//!   per-tensor second-level scale: a block's `amax / 6` must not exceed
//!   448 ([`BlockScaledError::ScaleOutOfRange`]); blocks below ue4m3's
//!   range (`amax / 6 < 2^-9`) quantize with scale `2^-9`.
//!
//! A block of zeros gets the smallest scale and zero elements.
//!
//! ```
//! use baton::block_scale::{Mxfp8, Nvfp4};
//! use baton_runtime::block_scaled::QuantizedMatrix;
//!
//! let (m, n, k) = (2, 3, 64);
//! let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
//! let b: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 * 0.5).collect();
//! let qa = QuantizedMatrix::<Mxfp8>::quantize(&a, m, k).unwrap();
//! let qb = QuantizedMatrix::<Mxfp8>::quantize(&b, n, k).unwrap();
//! // Small integers and halves are exact in e4m3 with a power-of-two scale.
//! assert_eq!(qa.dequantize(), a.iter().map(|&x| x as f64).collect::<Vec<_>>());
//! assert_eq!(qb.dequantize().len(), n * k);
//! assert!(QuantizedMatrix::<Nvfp4>::quantize(&a, m, 40).is_err()); // shape: 2 × 40 ≠ len
//! ```

use baton::block_scale::{BlockScaleFormat, Mxfp8, Nvfp4, SfLayout};
use baton::numeric::{SmallFloat, Ue4m3, Ue8m0, pack_e2m1x2, unpack_e2m1x2};
use baton::tensor_map::{ElemType, OobFill, Swizzle, TensorMapDesc, TensorMapError};
use std::marker::PhantomData;

/// Why a block-scaled operand cannot be quantized or mapped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockScaledError {
    /// K is not a multiple of the format's block (what is allowed: multiples
    /// of `block`).
    #[error("{format}: K = {k} is not a multiple of the scale block of {block} elements")]
    KNotMultiple {
        /// Format name.
        format: &'static str,
        /// The K given.
        k: usize,
        /// The required multiple.
        block: usize,
    },
    /// The data length does not match `rows × k`.
    #[error("{rows} × {k} matrix expected ({} values), got {len}", rows * k)]
    Shape {
        /// Rows given.
        rows: usize,
        /// K given.
        k: usize,
        /// Values given.
        len: usize,
    },
    /// An input value is NaN or infinite.
    #[error("input ({row}, {col}) is {value}: only finite values can be quantized")]
    NonFinite {
        /// Row.
        row: usize,
        /// Column (K index).
        col: usize,
        /// The value.
        value: f32,
    },
    /// A block needs a scale above the scale format's maximum.
    #[error(
        "{format}: block (row {row}, K block {block}) has amax {amax}, above the {max} the scale format reaches"
    )]
    ScaleOutOfRange {
        /// Format name.
        format: &'static str,
        /// Row.
        row: usize,
        /// K block (SF column).
        block: usize,
        /// The block's largest magnitude.
        amax: f32,
        /// The largest representable amax (scale max × element max).
        max: f32,
    },
    /// The operands of a GEMM disagree on K.
    #[error("A has K = {a_k}, B has K = {b_k}: they must be equal")]
    KMismatch {
        /// A's K.
        a_k: usize,
        /// B's K.
        b_k: usize,
    },
    /// A tile size the layout cannot serve (what is allowed is in the
    /// message).
    #[error("{format}: tile {what} = {value}: {allowed}")]
    Tile {
        /// Format name.
        format: &'static str,
        /// Which tile size.
        what: &'static str,
        /// The value given.
        value: usize,
        /// What is allowed.
        allowed: &'static str,
    },
    /// The tensor-map description is refused (alignment, extents, strides).
    #[error("{operand}: {source}")]
    TensorMap {
        /// `"A"`, `"B"`, `"SFA"` or `"SFB"`.
        operand: &'static str,
        /// What the validation refused.
        source: TensorMapError,
    },
}

/// How a format's scale is chosen from a block's `amax` and how its
/// elements are packed.
pub trait Quantize: BlockScaleFormat {
    /// The scale for a block whose largest magnitude is `amax` (≥ 0,
    /// finite), such that `amax / scale` does not exceed the element
    /// maximum; `None` when the scale format cannot reach it.
    fn scale_for(amax: f32) -> Option<Self::Scale>;
    /// Packs the encoded elements of one row (`k` codes) into bytes.
    fn pack(codes: &[u8], out: &mut Vec<u8>);
    /// Element `i` of a packed row.
    fn unpack(row: &[u8], i: usize) -> Self::Elem;
}

impl Quantize for Mxfp8 {
    fn scale_for(amax: f32) -> Option<Ue8m0> {
        Some(Ue8m0::from_f32_ceil(amax / 448.0))
    }
    fn pack(codes: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(codes);
    }
    fn unpack(row: &[u8], i: usize) -> Self::Elem {
        Self::Elem::from_bits(row[i])
    }
}

impl Quantize for Nvfp4 {
    fn scale_for(amax: f32) -> Option<Ue4m3> {
        let want = amax / 6.0;
        if want > Ue4m3::MAX.to_f32() {
            return None;
        }
        let mut s = Ue4m3::from_f32(want);
        if s.to_f32() < want {
            s = Ue4m3::from_bits(s.to_bits() + 1); // round up: no saturation
        }
        if s.to_bits() == 0 {
            s = Ue4m3::from_bits(1); // a zero scale would divide by zero
        }
        Some(s)
    }
    fn pack(codes: &[u8], out: &mut Vec<u8>) {
        for pair in codes.chunks_exact(2) {
            out.push(pack_e2m1x2(
                baton::numeric::E2m1::from_bits(pair[0]),
                baton::numeric::E2m1::from_bits(pair[1]),
            ));
        }
    }
    fn unpack(row: &[u8], i: usize) -> Self::Elem {
        unpack_e2m1x2(row[i / 2])[i % 2]
    }
}

/// A quantized K-major operand: `rows × k` elements (row-major, packed per
/// the format) and its scale factors in the tcgen05 SF layout.
///
/// ```
/// use baton::block_scale::Nvfp4;
/// use baton_runtime::block_scaled::QuantizedMatrix;
/// let q = QuantizedMatrix::<Nvfp4>::quantize(&[3.0; 2 * 32], 2, 32).unwrap(); // scale 0.5 × e2m1 6
/// assert_eq!((q.data().len(), q.sf().len()), (2 * 16, 512)); // one SF atom
/// assert_eq!(q.value(1, 31), 3.0);
/// ```
#[derive(Clone, Debug)]
pub struct QuantizedMatrix<F> {
    rows: usize,
    k: usize,
    data: Vec<u8>,
    sf: Vec<u8>,
    layout: SfLayout,
    format: PhantomData<F>,
}

impl<F: Quantize> QuantizedMatrix<F> {
    /// Quantizes the row-major `rows × k` matrix `x` (see the module
    /// documentation for the scale rule). Errors: [`BlockScaledError::Shape`],
    /// [`BlockScaledError::KNotMultiple`] (K must be a multiple of
    /// `F::VEC`), [`BlockScaledError::NonFinite`],
    /// [`BlockScaledError::ScaleOutOfRange`].
    pub fn quantize(x: &[f32], rows: usize, k: usize) -> Result<Self, BlockScaledError> {
        if x.len() != rows * k {
            return Err(BlockScaledError::Shape {
                rows,
                k,
                len: x.len(),
            });
        }
        if !k.is_multiple_of(F::VEC) {
            return Err(BlockScaledError::KNotMultiple {
                format: F::NAME,
                k,
                block: F::VEC,
            });
        }
        let layout = SfLayout::new(rows, k / F::VEC);
        // Padding SFs decode as the smallest scale; no element uses them.
        let mut sf = vec![0u8; layout.bytes()];
        let mut data = Vec::with_capacity(rows * k / F::ELEMS_PER_BYTE);
        let mut codes = vec![0u8; k];
        for r in 0..rows {
            let row = &x[r * k..(r + 1) * k];
            if let Some(col) = row.iter().position(|v| !v.is_finite()) {
                return Err(BlockScaledError::NonFinite {
                    row: r,
                    col,
                    value: row[col],
                });
            }
            for (blk, chunk) in row.chunks_exact(F::VEC).enumerate() {
                let amax = chunk.iter().fold(0f32, |m, v| m.max(v.abs()));
                let scale = F::scale_for(amax).ok_or(BlockScaledError::ScaleOutOfRange {
                    format: F::NAME,
                    row: r,
                    block: blk,
                    amax,
                    max: F::Scale::MAX.to_f32() * <F::Elem as SmallFloat>::MAX.to_f32(),
                })?;
                sf[layout.offset(r, blk)] = scale.code() as u8;
                let s = scale.to_f32();
                for (i, v) in chunk.iter().enumerate() {
                    codes[blk * F::VEC + i] = F::Elem::from_f32(v / s).code() as u8;
                }
            }
            F::pack(&codes, &mut data);
        }
        Ok(Self {
            rows,
            k,
            data,
            sf,
            layout,
            format: PhantomData,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K (elements per row).
    pub fn k(&self) -> usize {
        self.k
    }

    /// The packed elements, row-major (`rows × k / ELEMS_PER_BYTE` bytes).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The scale factors in the SF layout ([`Self::sf_layout`]).
    pub fn sf(&self) -> &[u8] {
        &self.sf
    }

    /// The SF layout.
    pub fn sf_layout(&self) -> SfLayout {
        self.layout
    }

    /// Bytes per row of [`data`](Self::data).
    pub fn row_bytes(&self) -> usize {
        self.k / F::ELEMS_PER_BYTE
    }

    /// The element code and scale of `(r, c)`.
    pub fn parts(&self, r: usize, c: usize) -> (F::Elem, F::Scale) {
        let row = &self.data[r * self.row_bytes()..(r + 1) * self.row_bytes()];
        let scale = F::Scale::from_code(self.sf[self.layout.offset(r, c / F::VEC)] as u32);
        (F::unpack(row, c), scale)
    }

    /// Dequantized `(r, c)`: `elem · scale`, exact in `f64`.
    pub fn value(&self, r: usize, c: usize) -> f64 {
        let (e, s) = self.parts(r, c);
        e.to_f64() * s.to_f64()
    }

    /// The whole dequantized matrix, row-major.
    pub fn dequantize(&self) -> Vec<f64> {
        (0..self.rows)
            .flat_map(|r| (0..self.k).map(move |c| (r, c)))
            .map(|(r, c)| self.value(r, c))
            .collect()
    }

    /// TMA description of the elements at `base`, loaded in boxes of `bm`
    /// rows × `bk` elements of K (`bk / ELEMS_PER_BYTE` bytes, at most 128:
    /// the 128-byte swizzle span), 128-byte swizzle, zero fill.
    /// Errors: [`BlockScaledError::Tile`] for a box the layout cannot serve,
    /// [`BlockScaledError::TensorMap`] for what TMA refuses (row pitch not a
    /// multiple of 16 bytes, base not 16-byte aligned, ...).
    pub fn data_map(
        &self,
        operand: &'static str,
        base: u64,
        bm: usize,
        bk: usize,
    ) -> Result<TensorMapDesc, BlockScaledError> {
        let bk_bytes = bk / F::ELEMS_PER_BYTE;
        if bk == 0 || !bk.is_multiple_of(F::VEC * 4) || bk_bytes > 128 {
            return Err(BlockScaledError::Tile {
                format: F::NAME,
                what: "BK",
                value: bk,
                allowed: "a multiple of 4 scale blocks (whole SF atoms), at most 128 bytes per row",
            });
        }
        if bm == 0 || bm > 256 {
            return Err(BlockScaledError::Tile {
                format: F::NAME,
                what: "BM",
                value: bm,
                allowed: "1..=256 rows per box",
            });
        }
        let rb = self.row_bytes() as u64;
        let desc = TensorMapDesc::matrix_2d(
            ElemType::U8,
            base,
            self.rows as u64,
            rb,
            rb,
            bm as u32,
            bk_bytes as u32,
            Swizzle::B128,
        );
        desc.validate()
            .map_err(|source| BlockScaledError::TensorMap { operand, source })?;
        Ok(desc)
    }

    /// TMA description of the scale factors at `base` (the bytes of
    /// [`sf`](Self::sf)), loaded in tiles of `bm` rows × `bk` elements of K
    /// (`bk / VEC` SF columns): the 3-D view of
    /// [`SfLayout::tma_dims`], box `[256, sfk / 2, bm / 128]`, no swizzle.
    /// A load at `(0, c0 / 2, r0 / 128)` (with `c0` the tile's first SF
    /// column) lands the tile in the `sf_tile_offset` layout.
    /// Errors: [`BlockScaledError::Tile`] unless `bm` is a multiple of 128
    /// (at most 256) and `bk` of `4 · VEC`; [`BlockScaledError::TensorMap`].
    pub fn sf_map(
        &self,
        operand: &'static str,
        base: u64,
        bm: usize,
        bk: usize,
    ) -> Result<TensorMapDesc, BlockScaledError> {
        if bm == 0 || !bm.is_multiple_of(128) || bm > 256 {
            return Err(BlockScaledError::Tile {
                format: F::NAME,
                what: "BM",
                value: bm,
                allowed: "128 or 256 (whole 128-row SF atoms)",
            });
        }
        let sfk = bk / F::VEC;
        if bk == 0 || !bk.is_multiple_of(F::VEC * 4) || sfk / 2 > 256 {
            return Err(BlockScaledError::Tile {
                format: F::NAME,
                what: "BK",
                value: bk,
                allowed: "a multiple of 4 scale blocks (whole 4-column SF atoms)",
            });
        }
        let (dims, strides) = self.layout.tma_dims();
        let desc = TensorMapDesc {
            dtype: ElemType::U8,
            rank: 3,
            base,
            dims,
            strides_bytes: strides,
            box_dims: [256, (sfk / 2) as u32, (bm / 128) as u32],
            swizzle: Swizzle::None,
            oob_fill: OobFill::Zero,
            l2_promotion: baton::tensor_map::L2Promotion::None,
        };
        desc.validate()
            .map_err(|source| BlockScaledError::TensorMap { operand, source })?;
        Ok(desc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton::arch::cpu::MbarrierCell;
    use baton::arch::cpu::tma::{self, TensorMap};
    use baton::block_scale::sf_tile_offset;
    use baton::smem::SharedRef;
    use baton::tile_pipeline::Tile;

    fn random(n: usize, seed: u64, range: f32) -> Vec<f32> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                // Wide dynamic range: magnitude 2^[-8, 8) times a uniform.
                let u = (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
                let e = ((s >> 8) % 16) as i32 - 8;
                u * range * 2f32.powi(e)
            })
            .collect()
    }

    /// For every block: the scale is the smallest the rule allows (the next
    /// lower scale code would make `amax / scale` exceed the element
    /// maximum), and every element is the nearest grid point (no neighbour
    /// code is closer); the absolute error is at most `bound(x, scale)`.
    fn check_quantization<F: Quantize>(
        range: f32,
        min_scale_code: u32,
        bound: impl Fn(f64, f64) -> f64,
    ) {
        let (rows, k) = (130, 256);
        let x = random(rows * k, 0x9e37_79b9_7f4a_7c15, range);
        let q = QuantizedMatrix::<F>::quantize(&x, rows, k).unwrap();
        let emax = <F::Elem as SmallFloat>::MAX.to_f64();
        for r in 0..rows {
            for blk in 0..k / F::VEC {
                let cols = blk * F::VEC..(blk + 1) * F::VEC;
                let amax = cols
                    .clone()
                    .map(|c| x[r * k + c].abs() as f64)
                    .fold(0.0, f64::max);
                let (_, scale) = q.parts(r, blk * F::VEC);
                let s = scale.to_f64();
                assert!(
                    amax / s <= emax,
                    "({r}, {blk}): scale {s} too small for {amax}"
                );
                if scale.code() > min_scale_code {
                    let lower = F::Scale::from_code(scale.code() - 1).to_f64();
                    assert!(
                        amax / lower > emax,
                        "({r}, {blk}): scale {s} not the smallest for {amax}"
                    );
                }
                for c in cols {
                    let (v, d) = (x[r * k + c] as f64, q.value(r, c));
                    let (e, _) = q.parts(r, c);
                    let y = v / s;
                    let mag = e.code() & ((1 << (F::Elem::BITS - 1)) - 1);
                    for nb in [mag.wrapping_sub(1), mag + 1] {
                        if nb > <F::Elem as SmallFloat>::MAX.code() {
                            continue;
                        }
                        let n = F::Elem::from_code(nb).to_f64().copysign(y);
                        assert!(
                            (y - e.to_f64()).abs() <= (y - n).abs(),
                            "({r}, {c}): {y} → {e:?}, {n} is closer"
                        );
                    }
                    assert!(
                        (v - d).abs() <= bound(v, s),
                        "({r}, {c}): {v} → {d} (scale {s})"
                    );
                }
            }
        }
    }

    #[test]
    fn mxfp8_quantization_error_is_bounded() {
        // e4m3: half an ulp is 2^-4 of the value (normal range) and at most
        // 2^-10 of the scale (subnormals).
        check_quantization::<Mxfp8>(100.0, 0, |v, s| (v.abs() / 16.0).max(s / 1024.0));
    }

    #[test]
    fn nvfp4_quantization_error_is_bounded() {
        // e2m1: grid spacing at most 2 (between 4 and 6): error ≤ scale.
        // Smallest ue4m3 scale used: code 1 (2^-9).
        check_quantization::<Nvfp4>(10.0, 1, |_, s| s);
    }

    #[test]
    fn exact_values_round_trip_and_layout_is_used() {
        // Values exactly representable with scale 1 (amax 448 / 6).
        let k = 64;
        let mut x = vec![0f32; 3 * k];
        x[k + 33] = 448.0;
        x[k + 34] = -0.5;
        let q = QuantizedMatrix::<Mxfp8>::quantize(&x, 3, k).unwrap();
        assert_eq!(q.value(1, 33), 448.0);
        assert_eq!(q.value(1, 34), -0.5);
        // Row 1, K block 1 → atom 0, byte 16·1 + 0 + 1 = 17: scale 2^0.
        assert_eq!(q.sf()[17], 127);
        let y: Vec<f32> = (0..3 * k).map(|i| [0.0, 0.5, -6.0, 3.0][i % 4]).collect();
        let q = QuantizedMatrix::<Nvfp4>::quantize(&y, 3, k).unwrap();
        assert_eq!(
            q.dequantize(),
            y.iter().map(|&v| v as f64).collect::<Vec<_>>()
        );
        assert_eq!(
            q.data()[0],
            0x10,
            "element 0 (0.0) low nibble, element 1 (0.5) high"
        );
    }

    #[test]
    fn typed_errors() {
        let e = QuantizedMatrix::<Mxfp8>::quantize(&[0.0; 40], 1, 40).unwrap_err();
        assert_eq!(
            e,
            BlockScaledError::KNotMultiple {
                format: "mxfp8",
                k: 40,
                block: 32
            }
        );
        assert!(
            e.to_string()
                .contains("not a multiple of the scale block of 32")
        );
        let e = QuantizedMatrix::<Nvfp4>::quantize(&[0.0; 16], 2, 16).unwrap_err();
        assert!(matches!(e, BlockScaledError::Shape { len: 16, .. }));
        let mut x = vec![1.0; 32];
        x[5] = f32::NAN;
        let e = QuantizedMatrix::<Mxfp8>::quantize(&x, 1, 32).unwrap_err();
        assert!(matches!(
            e,
            BlockScaledError::NonFinite { row: 0, col: 5, .. }
        ));
        let mut x = vec![1.0; 32];
        x[20] = 3000.0; // amax / 6 = 500 > 448
        let e = QuantizedMatrix::<Nvfp4>::quantize(&x, 1, 32).unwrap_err();
        assert!(
            matches!(e, BlockScaledError::ScaleOutOfRange { block: 1, .. }),
            "{e}"
        );
        // Tensor maps: tile shapes and TMA's own rules.
        let q = QuantizedMatrix::<Mxfp8>::quantize(&[0.0; 128 * 96], 128, 96).unwrap();
        assert!(matches!(
            q.sf_map("SFA", 0, 64, 128),
            Err(BlockScaledError::Tile { what: "BM", .. })
        ));
        assert!(matches!(
            q.sf_map("SFA", 0, 128, 96),
            Err(BlockScaledError::Tile { what: "BK", .. })
        ));
        assert!(matches!(
            q.data_map("A", 0, 128, 256),
            Err(BlockScaledError::Tile { what: "BK", .. })
        ));
        let e = q.data_map("A", 8, 128, 128).unwrap_err();
        assert!(
            matches!(e, BlockScaledError::TensorMap { operand: "A", .. }),
            "{e}"
        );
        // K = 32 FP4 elements = 16-byte rows: fine; K = 16 bytes... e4m3 with
        // K = 32 → 32-byte rows, fine; row pitch 8 bytes is refused.
        let q4 = QuantizedMatrix::<Nvfp4>::quantize(&[0.0; 16], 1, 16).unwrap();
        let e = q4.data_map("B", 0, 1, 64).unwrap_err();
        assert!(
            matches!(e, BlockScaledError::TensorMap { operand: "B", .. }),
            "{e}"
        );
    }

    /// The CPU TMA loads SF tiles through [`QuantizedMatrix::sf_map`] to
    /// exactly the bytes `sf_tile_offset` names.
    fn sf_tiles_land_where_the_index_says<F: Quantize, const BM: usize, const SFK: usize>() {
        let (rows, k) = (300, 3 * SFK * F::VEC); // ragged rows, 3 tiles of K
        let x = random(rows * k, 77, 10.0);
        let q = QuantizedMatrix::<F>::quantize(&x, rows, k).unwrap();
        let sf = q.sf().to_vec();
        let desc = q
            .sf_map("SFA", sf.as_ptr() as u64, BM, SFK * F::VEC)
            .unwrap();
        // SAFETY: `sf` outlives the map and every load below.
        let map = unsafe { TensorMap::new(desc) }.unwrap();
        let tile = Tile::<u8, BM, SFK>::new();
        let cell = MbarrierCell::new();
        let bar = baton::arch::cpu::BarrierRef::new(SharedRef::from_ref(&cell));
        // SAFETY: a fresh barrier.
        unsafe { bar.init(1) };
        let mut parity = 0;
        for r0 in (0..rows.div_ceil(128) * 128).step_by(BM) {
            for c0 in (0..k / F::VEC).step_by(SFK) {
                bar.arrive_expect_tx(desc.box_bytes());
                // SAFETY: the tile is ours; the map describes `sf`.
                unsafe {
                    tma::load_3d(
                        &map,
                        SharedRef::from_ref(&tile),
                        bar,
                        0,
                        (c0 / 2) as i32,
                        (r0 / 128) as i32,
                    )
                };
                assert!(
                    bar.try_wait_parity(parity),
                    "the load completed the barrier"
                );
                parity ^= 1;
                // SAFETY: no copy in flight; the tile holds BM × SFK bytes.
                let bytes: Vec<u8> =
                    unsafe { tile.with_ptr(|p| std::slice::from_raw_parts(p, BM * SFK).to_vec()) };
                for r in 0..BM {
                    for c in 0..SFK {
                        let want = if r0 + r < q.sf_layout().row_blocks() * 128 {
                            sf[q.sf_layout().offset(r0 + r, c0 + c)]
                        } else {
                            0 // a row block past the tensor: zero fill
                        };
                        assert_eq!(
                            bytes[sf_tile_offset(r, c, SFK)],
                            want,
                            "tile ({r0}, {c0}) ({r}, {c})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sf_tiles_loaded_by_the_cpu_tma_match_the_index_functions() {
        sf_tiles_land_where_the_index_says::<Mxfp8, 128, 4>();
        sf_tiles_land_where_the_index_says::<Mxfp8, 256, 8>();
        sf_tiles_land_where_the_index_says::<Nvfp4, 128, 16>();
        sf_tiles_land_where_the_index_says::<Nvfp4, 256, 4>();
    }
}
