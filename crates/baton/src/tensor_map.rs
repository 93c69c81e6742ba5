//! Arch-independent description of a TMA tensor map, and its validation.
//!
//! A [`TensorMapDesc`] says what `cuTensorMapEncodeTiled` is asked to encode:
//! element type, rank (2 or 3 in baton), global dimensions and byte strides,
//! the box (tile) that one TMA copy moves, the shared-memory swizzle, the
//! out-of-bounds fill and the L2 promotion. The same description drives
//!
//! * the host runtime, which calls [`TensorMapDesc::validate`] before it
//!   encodes the 128 opaque bytes with the driver (a typed error instead of
//!   `CUDA_ERROR_INVALID_VALUE`), and
//! * the CPU backend's simulated TMA ([`crate::arch::cpu::tma`]), which
//!   copies boxes between a host tensor and shared tiles with the same byte
//!   layout the hardware produces (including the swizzle).
//!
//! Dimension order is CUDA's: index 0 is the innermost (contiguous)
//! dimension. A row-major `rows × cols` matrix has `dims = [cols, rows, 1]`
//! and `strides_bytes = [row_pitch, …]` (the stride of dimension 1, then 2;
//! the innermost stride is the element size and is implied).
//!
//! ```
//! use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc, TensorMapError};
//!
//! // A 300 × 200 bf16 row-major matrix, 64 × 64 boxes, 128-byte swizzle.
//! let desc = TensorMapDesc::matrix_2d(ElemType::BF16, 0x1000, 300, 200, 400, 64, 64, Swizzle::B128);
//! assert_eq!(desc.validate(), Ok(()));
//! assert_eq!(desc.box_bytes(), 64 * 64 * 2);
//!
//! // 128 bf16 columns are 256 bytes: wider than the 128-byte swizzle span.
//! let wide = TensorMapDesc { box_dims: [128, 64, 1], ..desc };
//! assert_eq!(wide.validate(), Err(TensorMapError::InnerBoxExceedsSwizzle { bytes: 256, span: 128 }));
//! ```

use core::fmt;

/// Largest rank baton's tensor maps use (the hardware allows 5).
pub const MAX_RANK: usize = 3;

/// Element type of a tensor (what `CUtensorMapDataType` encodes; FP8 types
/// are moved as bytes, `CU_TENSOR_MAP_DATA_TYPE_UINT8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// IEEE half.
    F16,
    /// bfloat16.
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// FP8 E4M3 (moved as bytes).
    FP8E4M3,
    /// FP8 E5M2 (moved as bytes).
    FP8E5M2,
}

impl ElemType {
    /// Size of one element in bytes.
    pub const fn bytes(self) -> u32 {
        match self {
            ElemType::U8 | ElemType::FP8E4M3 | ElemType::FP8E5M2 => 1,
            ElemType::U16 | ElemType::F16 | ElemType::BF16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    /// Is it a floating-point type (NaN out-of-bounds fill is allowed only
    /// for these)?
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F64
        )
    }

    /// The `CUtensorMapDataType` value to pass to the driver.
    pub const fn cu_data_type(self) -> u32 {
        match self {
            ElemType::U8 | ElemType::FP8E4M3 | ElemType::FP8E5M2 => 0,
            ElemType::U16 => 1,
            ElemType::U32 => 2,
            ElemType::I32 => 3,
            ElemType::U64 => 4,
            ElemType::I64 => 5,
            ElemType::F16 => 6,
            ElemType::F32 => 7,
            ElemType::F64 => 8,
            ElemType::BF16 => 9,
        }
    }
}

/// Shared-memory swizzle of a TMA box (`CUtensorMapSwizzle`).
///
/// With swizzle `B{n}`, the 16-byte chunk index inside each `n`-byte row
/// segment is XORed with bits of the row (offset bits 7 and up); see
/// [`Swizzle::apply`]. The box's inner dimension may be at most `n` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// Plain row-major box.
    None,
    /// 32-byte swizzle: offset bit 4 ^= bit 7.
    B32,
    /// 64-byte swizzle: offset bits \[4:5\] ^= bits \[7:8\].
    B64,
    /// 128-byte swizzle: offset bits \[4:6\] ^= bits \[7:9\].
    B128,
}

impl Swizzle {
    /// The swizzle span in bytes (the largest inner box row), `None` → no limit.
    pub const fn span_bytes(self) -> Option<u32> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }

    /// Shared-memory alignment a tile needs so the pattern lines up with the
    /// hardware's (address bits, not offsets, are swizzled): 1024 for B128,
    /// 512 for B64, 256 for B32, 128 without swizzle.
    pub const fn required_alignment(self) -> u32 {
        match self {
            Swizzle::None => 128,
            Swizzle::B32 => 256,
            Swizzle::B64 => 512,
            Swizzle::B128 => 1024,
        }
    }

    /// The `CUtensorMapSwizzle` value.
    pub const fn cu_value(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// Maps the byte offset of an element in the dense (unswizzled) box to
    /// its byte offset in shared memory. An involution: applying it twice
    /// gives the offset back.
    ///
    /// ```
    /// use baton::tensor_map::Swizzle;
    /// // Row 1 of a 128-byte-wide box: chunk 0 lands in chunk 1.
    /// assert_eq!(Swizzle::B128.apply(128), 128 + 16);
    /// assert_eq!(Swizzle::B128.apply(Swizzle::B128.apply(1000)), 1000);
    /// assert_eq!(Swizzle::None.apply(1000), 1000);
    /// ```
    #[inline(always)]
    pub const fn apply(self, offset: usize) -> usize {
        let mask = match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 3,
            Swizzle::B128 => 7,
        };
        offset ^ (((offset >> 7) & mask) << 4)
    }
}

/// What TMA loads for elements outside the tensor (`CUtensorMapFloatOOBfill`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OobFill {
    /// Zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`). The only mode the CPU
    /// simulation implements.
    Zero,
    /// NaN that makes FMA produce zero (float types only).
    NanRequestZeroFma,
}

impl OobFill {
    /// The `CUtensorMapFloatOOBfill` value.
    pub const fn cu_value(self) -> u32 {
        match self {
            OobFill::Zero => 0,
            OobFill::NanRequestZeroFma => 1,
        }
    }
}

/// L2 promotion of TMA loads (`CUtensorMapL2promotion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum L2Promotion {
    /// No promotion.
    None,
    /// 64-byte promotion.
    B64,
    /// 128-byte promotion.
    B128,
    /// 256-byte promotion.
    B256,
}

impl L2Promotion {
    /// The `CUtensorMapL2promotion` value.
    pub const fn cu_value(self) -> u32 {
        match self {
            L2Promotion::None => 0,
            L2Promotion::B64 => 1,
            L2Promotion::B128 => 2,
            L2Promotion::B256 => 3,
        }
    }
}

/// Everything `cuTensorMapEncodeTiled` needs (tiled mode, no interleave,
/// element strides 1), for tensors of rank 2 or 3.
///
/// Unused trailing entries (dimension 2 of a rank-2 map) should be 1 for
/// `dims`/`box_dims`; they are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapDesc {
    /// Element type.
    pub dtype: ElemType,
    /// 2 or 3.
    pub rank: u32,
    /// Global address of element (0, 0, 0): a device pointer for the GPU, a
    /// host address for the CPU simulation. 16-byte aligned.
    pub base: u64,
    /// Extent of each dimension, innermost first. Each in `1..=2^32`.
    pub dims: [u64; MAX_RANK],
    /// Byte stride of dimensions 1 and 2 (`globalStrides`; the innermost
    /// stride is the element size). Multiples of 16, below 2^40.
    pub strides_bytes: [u64; MAX_RANK - 1],
    /// Box (tile) extent per dimension, innermost first. Each in `1..=256`;
    /// the inner box row (`box_dims[0] × element size`) is a multiple of 16
    /// bytes and at most the swizzle span.
    pub box_dims: [u32; MAX_RANK],
    /// Shared-memory swizzle.
    pub swizzle: Swizzle,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
    /// L2 promotion.
    pub l2_promotion: L2Promotion,
}

/// Why a [`TensorMapDesc`] cannot be encoded. Each variant names the value
/// and what is allowed (the constraints of `cuTensorMapEncodeTiled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorMapError {
    /// `rank` must be 2 or 3 in baton (the hardware allows 1..=5).
    RankUnsupported {
        /// The rank given.
        rank: u32,
    },
    /// The global address must be 16-byte aligned.
    BaseMisaligned {
        /// The address given.
        base: u64,
    },
    /// A global dimension is 0 (allowed: `1..=2^32`).
    DimZero {
        /// Which dimension (0 = innermost).
        dim: usize,
    },
    /// A global dimension exceeds 2^32.
    DimTooLarge {
        /// Which dimension.
        dim: usize,
        /// Its extent.
        value: u64,
    },
    /// A byte stride is not a multiple of 16.
    StrideMisaligned {
        /// Which dimension the stride belongs to (1 or 2).
        dim: usize,
        /// The stride in bytes.
        stride: u64,
    },
    /// A byte stride is 2^40 or more.
    StrideTooLarge {
        /// Which dimension (1 or 2).
        dim: usize,
        /// The stride in bytes.
        stride: u64,
    },
    /// A byte stride is smaller than the extent of the dimension below it
    /// (rows would overlap): `stride[d] >= dims[d-1] × stride[d-1]`.
    StrideTooSmall {
        /// Which dimension (1 or 2).
        dim: usize,
        /// The stride in bytes.
        stride: u64,
        /// The smallest allowed stride.
        min: u64,
    },
    /// A box dimension is 0 or above 256.
    BoxDimOutOfRange {
        /// Which dimension.
        dim: usize,
        /// Its extent.
        value: u32,
    },
    /// The inner box row (`box_dims[0] × element size`) is not a multiple of
    /// 16 bytes.
    InnerBoxNotMultipleOf16 {
        /// Inner row bytes.
        bytes: u32,
    },
    /// The inner box row is wider than the swizzle span (32, 64 or 128 bytes).
    InnerBoxExceedsSwizzle {
        /// Inner row bytes.
        bytes: u32,
        /// The swizzle span.
        span: u32,
    },
    /// NaN out-of-bounds fill requested for an integer type.
    NanFillRequiresFloat {
        /// The element type.
        dtype: ElemType,
    },
    /// CPU backend only: the simulated TMA implements zero out-of-bounds
    /// fill only (the hardware's NaN encoding is not reproduced).
    NanFillNotSimulated,
}

impl fmt::Display for TensorMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TensorMapError::RankUnsupported { rank } => {
                write!(
                    f,
                    "tensor map rank {rank} unsupported: baton encodes rank 2 or 3"
                )
            }
            TensorMapError::BaseMisaligned { base } => {
                write!(f, "tensor base address {base:#x} is not 16-byte aligned")
            }
            TensorMapError::DimZero { dim } => {
                write!(f, "tensor dimension {dim} is 0 (allowed 1..=2^32)")
            }
            TensorMapError::DimTooLarge { dim, value } => {
                write!(f, "tensor dimension {dim} is {value}, above the limit 2^32")
            }
            TensorMapError::StrideMisaligned { dim, stride } => {
                write!(
                    f,
                    "byte stride of dimension {dim} is {stride}, not a multiple of 16"
                )
            }
            TensorMapError::StrideTooLarge { dim, stride } => {
                write!(
                    f,
                    "byte stride of dimension {dim} is {stride}, must be below 2^40"
                )
            }
            TensorMapError::StrideTooSmall { dim, stride, min } => {
                write!(
                    f,
                    "byte stride of dimension {dim} is {stride}, smaller than the {min} bytes dimension {} spans",
                    dim - 1
                )
            }
            TensorMapError::BoxDimOutOfRange { dim, value } => {
                write!(f, "box dimension {dim} is {value} (allowed 1..=256)")
            }
            TensorMapError::InnerBoxNotMultipleOf16 { bytes } => {
                write!(f, "inner box row is {bytes} bytes, not a multiple of 16")
            }
            TensorMapError::InnerBoxExceedsSwizzle { bytes, span } => {
                write!(
                    f,
                    "inner box row is {bytes} bytes, wider than the {span}-byte swizzle span"
                )
            }
            TensorMapError::NanFillRequiresFloat { dtype } => {
                write!(
                    f,
                    "NaN out-of-bounds fill needs a float element type, got {dtype:?}"
                )
            }
            TensorMapError::NanFillNotSimulated => {
                write!(
                    f,
                    "the CPU TMA simulation supports zero out-of-bounds fill only"
                )
            }
        }
    }
}

impl core::error::Error for TensorMapError {}

impl TensorMapDesc {
    /// A rank-2 map of a row-major `rows × cols` matrix with `row_pitch`
    /// bytes between rows, moved in `box_rows × box_cols` boxes; zero OOB
    /// fill, no L2 promotion.
    #[allow(clippy::too_many_arguments)]
    pub const fn matrix_2d(
        dtype: ElemType,
        base: u64,
        rows: u64,
        cols: u64,
        row_pitch: u64,
        box_rows: u32,
        box_cols: u32,
        swizzle: Swizzle,
    ) -> Self {
        TensorMapDesc {
            dtype,
            rank: 2,
            base,
            dims: [cols, rows, 1],
            strides_bytes: [row_pitch, row_pitch * rows],
            box_dims: [box_cols, box_rows, 1],
            swizzle,
            oob_fill: OobFill::Zero,
            l2_promotion: L2Promotion::None,
        }
    }

    /// A vector of `len` elements at `base` (16-byte aligned) moved in boxes
    /// of `box_len` elements, as a one-row rank-2 map (dims {len, 1}, the
    /// row pitch `len` elements rounded up to 16 bytes, never stepped):
    /// loads at `(c0, 0)` read elements `c0..c0 + box_len`, those past
    /// `len` as the zero fill. No row stride applies, so a buffer whose
    /// logical rows are not 16 bytes apart can be read in place. Zero OOB
    /// fill, no L2 promotion.
    ///
    /// ```
    /// use baton::tensor_map::{ElemType, TensorMapDesc};
    /// let d = TensorMapDesc::vector(ElemType::F32, 0x1000, 3 * 67 + 66, 132);
    /// assert_eq!((d.dims[0], d.dims[1], d.strides_bytes[0]), (267, 1, 1072));
    /// assert_eq!(d.box_bytes(), 528);
    /// assert!(d.validate().is_ok());
    /// ```
    pub const fn vector(dtype: ElemType, base: u64, len: u64, box_len: u32) -> Self {
        let pitch = (len * dtype.bytes() as u64).next_multiple_of(16);
        TensorMapDesc {
            dtype,
            rank: 2,
            base,
            dims: [len, 1, 1],
            strides_bytes: [pitch, pitch],
            box_dims: [box_len, 1, 1],
            swizzle: Swizzle::None,
            oob_fill: OobFill::Zero,
            l2_promotion: L2Promotion::None,
        }
    }

    /// Bytes one box occupies in shared memory (and the transaction bytes a
    /// load of it completes, out-of-bounds fill included).
    pub const fn box_bytes(&self) -> u32 {
        let mut bytes = self.dtype.bytes();
        let mut d = 0;
        while d < self.rank as usize && d < MAX_RANK {
            bytes *= self.box_dims[d];
            d += 1;
        }
        bytes
    }

    /// Bytes of one inner box row.
    pub const fn inner_box_bytes(&self) -> u32 {
        self.box_dims[0] * self.dtype.bytes()
    }

    /// Checks every constraint `cuTensorMapEncodeTiled` puts on the
    /// description (see [`TensorMapError`]); the first violation wins.
    pub fn validate(&self) -> Result<(), TensorMapError> {
        let rank = self.rank as usize;
        if !(2..=MAX_RANK).contains(&rank) {
            return Err(TensorMapError::RankUnsupported { rank: self.rank });
        }
        if !self.base.is_multiple_of(16) {
            return Err(TensorMapError::BaseMisaligned { base: self.base });
        }
        for (dim, &value) in self.dims[..rank].iter().enumerate() {
            if value == 0 {
                return Err(TensorMapError::DimZero { dim });
            }
            if value > 1 << 32 {
                return Err(TensorMapError::DimTooLarge { dim, value });
            }
        }
        let mut below = self.dims[0] * self.dtype.bytes() as u64;
        for d in 1..rank {
            let stride = self.strides_bytes[d - 1];
            if !stride.is_multiple_of(16) {
                return Err(TensorMapError::StrideMisaligned { dim: d, stride });
            }
            if stride >= 1 << 40 {
                return Err(TensorMapError::StrideTooLarge { dim: d, stride });
            }
            if stride < below {
                return Err(TensorMapError::StrideTooSmall {
                    dim: d,
                    stride,
                    min: below,
                });
            }
            below = stride * self.dims[d];
        }
        for (dim, &value) in self.box_dims[..rank].iter().enumerate() {
            if value == 0 || value > 256 {
                return Err(TensorMapError::BoxDimOutOfRange { dim, value });
            }
        }
        let bytes = self.inner_box_bytes();
        if !bytes.is_multiple_of(16) {
            return Err(TensorMapError::InnerBoxNotMultipleOf16 { bytes });
        }
        if let Some(span) = self.swizzle.span_bytes()
            && bytes > span
        {
            return Err(TensorMapError::InnerBoxExceedsSwizzle { bytes, span });
        }
        if self.oob_fill == OobFill::NanRequestZeroFma && !self.dtype.is_float() {
            return Err(TensorMapError::NanFillRequiresFloat { dtype: self.dtype });
        }
        Ok(())
    }
}
