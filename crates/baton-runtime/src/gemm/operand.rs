//! One operand as the Hopper GEMM kernels read it: a row-major matrix
//! (K-major for A and B) with a row stride and a batch stride. The slice
//! APIs make packed ones, the view APIs ([`super::matrix`]) strided ones;
//! both plans encode their tensor maps from it.

use crate::Result;
use crate::tensor_map::{EncodedTensorMap, encode_strided_batch, encode_strided_matrix};
use baton::tensor_map::{ElemType, Swizzle};
use baton_kernels_abi::gemm_params::TensorMapParam;

/// A row-major `rows × cols` matrix of `elem`, rows `ld` elements apart,
/// batch `b` at `address + b · batch_stride` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowMajorOperand {
    pub address: u64,
    pub elem: ElemType,
    pub rows: u64,
    pub cols: u64,
    pub ld: u64,
    pub batch_stride: u64,
}

impl RowMajorOperand {
    /// A packed matrix (ld = cols), one batch.
    pub fn packed(address: u64, elem: ElemType, rows: usize, cols: usize) -> Self {
        Self {
            address,
            elem,
            rows: rows as u64,
            cols: cols as u64,
            ld: cols as u64,
            batch_stride: (rows * cols) as u64,
        }
    }

    /// The device address of batch `b`'s first element.
    pub fn batch_address(&self, b: usize) -> u64 {
        self.address + b as u64 * self.batch_stride * self.elem.bytes() as u64
    }

    /// Bytes from the start to one past the last element of `batch`
    /// matrices (the range D must not overlap).
    pub fn span_bytes(&self, batch: usize) -> u64 {
        let elems = (batch as u64 - 1) * self.batch_stride + (self.rows - 1) * self.ld + self.cols;
        elems * self.elem.bytes() as u64
    }

    /// Whether `batch` matrices of this operand fit one rank-3 tensor map
    /// ([`map_batch`](Self::map_batch)): one matrix, a batch stride of 0
    /// (one matrix shared by the batch), or a stride of at least one
    /// whole matrix (`rows · ld`: TMA's rule for the third dimension; a
    /// smaller nonzero stride, overlapping matrices, is launched matrix by
    /// matrix).
    pub fn fits_one_map(&self, batch: usize) -> bool {
        batch == 1 || self.batch_stride == 0 || self.batch_stride >= self.rows * self.ld
    }

    /// The rank-3 tensor map (dims {cols, rows, batch}, boxes of
    /// `box_rows × box_cols × 1`) of matrices `first..first + batch`; a
    /// shared operand (batch stride 0) gets a batch dimension of 1.
    pub fn map_batch(
        &self,
        first: usize,
        batch: usize,
        box_rows: u32,
        box_cols: u32,
        swizzle: Swizzle,
    ) -> Result<EncodedTensorMap> {
        let batch = if self.batch_stride == 0 { 1 } else { batch };
        encode_strided_batch(
            self.batch_address(first),
            self.elem,
            self.rows,
            self.cols,
            self.ld,
            batch as u64,
            self.batch_stride,
            box_rows,
            box_cols,
            swizzle,
        )
    }

    /// The tensor map of batch `b` in `box_rows × box_cols` boxes.
    pub fn map(
        &self,
        b: usize,
        box_rows: u32,
        box_cols: u32,
        swizzle: Swizzle,
    ) -> Result<EncodedTensorMap> {
        encode_strided_matrix(
            self.batch_address(b),
            self.elem,
            self.rows,
            self.cols,
            self.ld,
            box_rows,
            box_cols,
            swizzle,
        )
    }
}

/// An encoded map as a by-value kernel parameter.
pub(crate) fn param(map: EncodedTensorMap) -> TensorMapParam {
    TensorMapParam { bytes: map.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_and_spans_count_strides() {
        let op = RowMajorOperand {
            address: 0x1000,
            elem: ElemType::BF16,
            rows: 3,
            cols: 8,
            ld: 16,
            batch_stride: 64,
        };
        assert_eq!(op.batch_address(2), 0x1000 + 2 * 64 * 2);
        // Last element of batch 1: 64 + 2·16 + 7 → 104 elements.
        assert_eq!(op.span_bytes(2), 2 * 104);
        let packed = RowMajorOperand::packed(0, ElemType::U8, 4, 32);
        assert_eq!((packed.ld, packed.span_bytes(1)), (32, 128));
    }

    #[test]
    fn one_rank3_map_needs_a_whole_matrix_per_batch_step() {
        let op = |batch_stride| RowMajorOperand {
            address: 0x1000,
            elem: ElemType::BF16,
            rows: 3,
            cols: 8,
            ld: 16,
            batch_stride,
        };
        // rows · ld = 48 elements: TMA's least third-dimension stride.
        assert!(op(48).fits_one_map(4));
        assert!(op(64).fits_one_map(4));
        // Shared (0) and single matrices always fit.
        assert!(op(0).fits_one_map(4));
        assert!(op(40).fits_one_map(1));
        // Overlapping matrices (the last row's end at 40 < 48): per matrix.
        assert!(!op(40).fits_one_map(2));
    }
}
