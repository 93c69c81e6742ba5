//! Why a matrix view, or a GEMM over views, was refused: each variant names
//! the rule that was broken and what is allowed.

use crate::gemm::matrix::Layout;

/// A refused matrix view ([`Matrix`](crate::gemm::matrix::Matrix),
/// [`MatrixMut`](crate::gemm::matrix::MatrixMut)) or a refused combination
/// of views in a GEMM.
///
/// ```
/// use baton_runtime::gemm::matrix::{MatrixDesc, MatrixError};
/// let e = MatrixDesc::row_major(4, 8).with_ld(6).check::<u16>("A", 0, 64).unwrap_err();
/// assert!(matches!(e, MatrixError::LeadingDimensionTooSmall { ld: 6, min: 8, .. }));
/// assert!(e.to_string().contains("at least 8"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MatrixError {
    /// Zero rows or columns.
    #[error("{operand} is {rows}x{cols}; a matrix needs at least 1 row and 1 column")]
    EmptyDimension {
        /// Which operand (`A`, `B`, `C`, `D`).
        operand: &'static str,
        /// Rows as given.
        rows: usize,
        /// Columns as given.
        cols: usize,
    },
    /// A batch of zero matrices.
    #[error("{operand} has batch 0; the batch count must be at least 1")]
    ZeroBatch {
        /// Which operand.
        operand: &'static str,
    },
    /// The leading dimension is shorter than a row (row-major) or a column
    /// (column-major).
    #[error(
        "{operand} is {layout} with leading dimension {ld}; it must be at least {min} \
         (its {})",
        if matches!(layout, Layout::RowMajor) { "columns" } else { "rows" }
    )]
    LeadingDimensionTooSmall {
        /// Which operand.
        operand: &'static str,
        /// Its layout.
        layout: Layout,
        /// The leading dimension as given (elements).
        ld: usize,
        /// The least allowed.
        min: usize,
    },
    /// A stride (leading dimension or batch stride) that is not a multiple
    /// of 16 bytes: TMA addresses every row (and every batch) at 16-byte
    /// aligned offsets.
    #[error(
        "{operand}'s {stride} is {elems} elements = {bytes} bytes of {elem}; TMA needs strides \
         that are multiples of 16 bytes, so it must be a multiple of {multiple} elements"
    )]
    StrideNotAligned {
        /// Which operand.
        operand: &'static str,
        /// `leading dimension` or `batch stride`.
        stride: &'static str,
        /// The stride in elements.
        elems: usize,
        /// The stride in bytes.
        bytes: usize,
        /// The element type's name.
        elem: &'static str,
        /// The element multiple that is 16 bytes.
        multiple: usize,
    },
    /// The first element is not 16-byte aligned (TMA's base alignment).
    #[error(
        "{operand} starts at device address {address:#x}; TMA needs a 16-byte aligned base address"
    )]
    BaseNotAligned {
        /// Which operand.
        operand: &'static str,
        /// Its device address.
        address: u64,
    },
    /// The buffer does not reach the last element the view describes.
    #[error(
        "{operand}'s view needs {needed} elements from its start (the last element of its last \
         batch), but the buffer holds {len}"
    )]
    TooShort {
        /// Which operand.
        operand: &'static str,
        /// Elements needed.
        needed: usize,
        /// Elements in the buffer.
        len: usize,
    },
    /// A dimension, the leading dimension or the batch stride beyond what
    /// TMA and the kernels index.
    #[error(
        "{operand} is too large: rows, columns and batch must be below 2^31 and strides below 2^40 bytes"
    )]
    TooLarge {
        /// Which operand.
        operand: &'static str,
    },
    /// The batches of the output overlap (batch stride shorter than one
    /// matrix), so two batches would write the same element.
    #[error(
        "{operand}'s batch stride {batch_stride} is shorter than one matrix ({matrix} elements); \
         output batches must not overlap"
    )]
    OutputBatchesOverlap {
        /// Which operand.
        operand: &'static str,
        /// Its batch stride (elements).
        batch_stride: usize,
        /// Elements one matrix spans.
        matrix: usize,
    },
    /// Operand shapes that do not multiply: A is M×K, B K×N, C and D M×N.
    #[error(
        "{what}: A is {a:?}, B is {b:?}, D is {d:?} (rows, cols); a GEMM needs A M×K, B K×N, C and D M×N"
    )]
    ShapeMismatch {
        /// The rule broken (`A's columns ≠ B's rows`, …).
        what: &'static str,
        /// A's (rows, cols).
        a: (usize, usize),
        /// B's (rows, cols).
        b: (usize, usize),
        /// D's (rows, cols).
        d: (usize, usize),
    },
    /// Batch counts that differ.
    #[error(
        "{operand} has batch {got} but D has batch {expected}; every operand needs D's batch count (an input may repeat one matrix with batch stride 0)"
    )]
    BatchMismatch {
        /// Which operand.
        operand: &'static str,
        /// D's batch.
        expected: usize,
        /// This operand's batch.
        got: usize,
    },
    /// A layout the kernel does not read for this element type.
    #[error("layout {layout} of {operand} is not supported for {dtype} yet: {rule}")]
    LayoutNotSupported {
        /// Which operand.
        operand: &'static str,
        /// Its layout.
        layout: Layout,
        /// The GEMM's element type (`BF16`, `FP8 e4m3`).
        dtype: &'static str,
        /// What is allowed and why.
        rule: &'static str,
    },
    /// C and D in different layouts.
    #[error("C is {c} but D is {d}; C and D must have the same layout")]
    CLayoutDiffers {
        /// C's layout.
        c: Layout,
        /// D's layout.
        d: Layout,
    },
    /// A feature of views that this GEMM does not have yet.
    #[error("{what} is not supported by the {gemm} yet: {allowed}")]
    NotSupported {
        /// The feature asked for.
        what: &'static str,
        /// The GEMM.
        gemm: &'static str,
        /// What is allowed instead.
        allowed: &'static str,
    },
}
