//! Strided matrix views of caller-owned device memory (a torch tensor's
//! `data_ptr`, sizes and strides) and the rules a view must follow to be
//! read or written by TMA.

/// A row-major matrix in device memory: `rows × cols` elements of
/// `elem_bytes` bytes, row `r` starting `r · ld` elements after `ptr`
/// (columns contiguous: a torch tensor with `stride(1) == 1` and
/// `ld = stride(0)`).
///
/// ```
/// use _baton::view::MatrixView;
/// let v = MatrixView { ptr: 0x1000, rows: 4, cols: 8, ld: 16, elem_bytes: 2 };
/// assert_eq!(v.span_bytes(), (3 * 16 + 8) * 2);
/// assert!(v.check("A").is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixView {
    /// Device address of element (0, 0).
    pub ptr: u64,
    /// Rows.
    pub rows: u64,
    /// Columns (contiguous).
    pub cols: u64,
    /// Elements from one row to the next (`>= cols`).
    pub ld: u64,
    /// Bytes per element.
    pub elem_bytes: u64,
}

/// TMA's alignment of a global base address and of a row stride, in bytes.
pub const TMA_ALIGN: u64 = 16;

/// Why a [`MatrixView`] cannot be read or written by TMA. Each message
/// names the rule and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// The leading dimension is shorter than a row.
    #[error(
        "{operand}: row stride {ld} is less than its {cols} columns; rows must not overlap (stride(0) >= size(1))"
    )]
    LeadingDimTooSmall {
        /// Which operand.
        operand: &'static str,
        /// Its row stride, in elements.
        ld: u64,
        /// Its columns.
        cols: u64,
    },
    /// TMA needs row strides in multiples of 16 bytes.
    #[error(
        "{operand}: row stride {ld} elements = {bytes} bytes is not a multiple of 16 bytes (TMA's rule for strides); allowed: row strides of a multiple of {per} elements"
    )]
    StrideNotAligned {
        /// Which operand.
        operand: &'static str,
        /// Its row stride, in elements.
        ld: u64,
        /// The stride in bytes.
        bytes: u64,
        /// Elements per 16 bytes.
        per: u64,
    },
    /// TMA needs 16-byte aligned base addresses.
    #[error(
        "{operand}: data pointer {ptr:#x} is not 16-byte aligned (TMA's rule for base addresses); views must start on a 16-byte boundary"
    )]
    PtrNotAligned {
        /// Which operand.
        operand: &'static str,
        /// Its address.
        ptr: u64,
    },
    /// Columns are not contiguous.
    #[error(
        "{operand}: column stride is {col_stride}; baton's Hopper GEMMs read {operand} with contiguous {what} (stride(1) == 1){hint}"
    )]
    NotRowMajor {
        /// Which operand.
        operand: &'static str,
        /// Its stride between columns, in elements.
        col_stride: i64,
        /// What must be contiguous, e.g. "K (K-major)".
        what: &'static str,
        /// How to get such a view.
        hint: &'static str,
    },
    /// An operand's shape does not match the others'.
    #[error(
        "{operand}: shape {got:?} does not match the {expected:?} that the other operands imply"
    )]
    ShapeMismatch {
        /// Which operand.
        operand: &'static str,
        /// Its (rows, columns).
        got: (u64, u64),
        /// The (rows, columns) it must have.
        expected: (u64, u64),
    },
    /// An operand read through a plain pointer must be contiguous.
    #[error(
        "{operand}: row stride {ld} but {cols} columns; {operand} is read through a plain pointer and must be contiguous (pass {operand}.contiguous())"
    )]
    NotContiguous {
        /// Which operand.
        operand: &'static str,
        /// Its row stride, in elements.
        ld: u64,
        /// Its columns.
        cols: u64,
    },
    /// The output's memory meets an input's.
    #[error(
        "the output overlaps input {operand}; allowed: an output that shares no memory with {operand}"
    )]
    OutputOverlaps {
        /// Which input.
        operand: &'static str,
    },
}

impl MatrixView {
    /// Bytes from the first to one past the last element.
    pub fn span_bytes(&self) -> u64 {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        ((self.rows - 1) * self.ld + self.cols) * self.elem_bytes
    }

    /// The row stride in bytes.
    pub fn ld_bytes(&self) -> u64 {
        self.ld * self.elem_bytes
    }

    /// Checks the shape rules that hold without an address: rows do not
    /// overlap, and (when there is more than one row) the row stride is a
    /// multiple of 16 bytes.
    ///
    /// ```
    /// use _baton::view::{MatrixView, ViewError};
    /// let v = MatrixView { ptr: 0, rows: 2, cols: 8, ld: 12, elem_bytes: 2 };
    /// assert!(matches!(v.check_layout("B"), Err(ViewError::StrideNotAligned { .. })));
    /// ```
    pub fn check_layout(&self, operand: &'static str) -> Result<(), ViewError> {
        if self.ld < self.cols {
            return Err(ViewError::LeadingDimTooSmall {
                operand,
                ld: self.ld,
                cols: self.cols,
            });
        }
        if !self.ld_bytes().is_multiple_of(TMA_ALIGN) {
            return Err(ViewError::StrideNotAligned {
                operand,
                ld: self.ld,
                bytes: self.ld_bytes(),
                per: TMA_ALIGN / self.elem_bytes,
            });
        }
        Ok(())
    }

    /// [`check_layout`](Self::check_layout) and the base address's
    /// 16-byte alignment.
    pub fn check(&self, operand: &'static str) -> Result<(), ViewError> {
        self.check_layout(operand)?;
        if !self.ptr.is_multiple_of(TMA_ALIGN) {
            return Err(ViewError::PtrNotAligned {
                operand,
                ptr: self.ptr,
            });
        }
        Ok(())
    }

    /// Whether the byte ranges of `self` and `other` meet.
    pub fn overlaps(&self, other: &MatrixView) -> bool {
        let (a, b) = (self.ptr, other.ptr);
        a < b + other.span_bytes() && b < a + self.span_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(ptr: u64, rows: u64, cols: u64, ld: u64, elem_bytes: u64) -> MatrixView {
        MatrixView {
            ptr,
            rows,
            cols,
            ld,
            elem_bytes,
        }
    }

    #[test]
    fn rules_name_the_problem() {
        assert_eq!(
            v(0, 4, 64, 32, 2).check("A"),
            Err(ViewError::LeadingDimTooSmall {
                operand: "A",
                ld: 32,
                cols: 64
            })
        );
        let e = v(0, 4, 8, 12, 2).check("B").unwrap_err();
        assert!(e.to_string().contains("multiple of 8 elements"), "{e}");
        assert_eq!(
            v(0x1008, 4, 8, 8, 2).check("C"),
            Err(ViewError::PtrNotAligned {
                operand: "C",
                ptr: 0x1008
            })
        );
        assert!(v(0x1010, 4, 8, 24, 2).check("C").is_ok());
        // fp8: 16 elements per 16 bytes.
        assert!(v(0, 2, 128, 136, 1).check("A").is_err());
        assert!(v(0, 2, 128, 144, 1).check("A").is_ok());
    }

    #[test]
    fn overlap_follows_the_span() {
        let a = v(0x1000, 2, 8, 16, 2); // bytes [0x1000, 0x1030)
        assert_eq!(a.span_bytes(), 48);
        assert!(a.overlaps(&v(0x102e, 1, 8, 8, 2)));
        assert!(!a.overlaps(&v(0x1030, 1, 8, 8, 2)));
    }
}
