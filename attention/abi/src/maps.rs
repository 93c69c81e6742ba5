//! The tensor maps of the attention operands (Q, K, V, O): one rank-3 map
//! per tensor and batch entry, dims `{d, seq, heads}`, or `{d, heads, seq}`
//! when the head stride is the smaller (TMA's strides must grow with the
//! dimension). One rule for the host API (`crates/baton-attention`) and the
//! CPU run of the kernel (`tests/cpu_fwd.rs`).

use baton::tensor_map::{ElemType, L2Promotion, OobFill, Swizzle, TensorMapDesc};

/// How one tensor's maps lay out its `seq × heads` rows of `d` bf16
/// (strides in elements, as the host API takes them).
///
/// ```
/// use baton_attention_abi::maps::OperandMaps;
/// // [b, s, h, d] with 8 heads of 128: heads inner.
/// let m = OperandMaps::new(1024, 8, 8 * 128, 128, 64);
/// assert!(m.heads_inner);
/// let desc = m.desc(0x1000, 128);
/// assert_eq!(desc.dims, [128, 8, 1024]);
/// assert_eq!(desc.box_dims, [64, 1, 64]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandMaps {
    /// The heads are dimension 1 (and seq dimension 2).
    pub heads_inner: bool,
    /// Extent and byte stride of dimension 1.
    pub dim1: (u64, u64),
    /// Extent and byte stride of dimension 2.
    pub dim2: (u64, u64),
    /// The box: 64 columns of d, `box_rows` rows of seq, one head.
    pub box_dims: [u32; 3],
}

impl OperandMaps {
    /// The layout of a tensor of `seq` rows and `heads` heads with element
    /// strides `seq_stride` and `head_stride`, loaded `box_rows` rows at a
    /// time. A dimension of extent 1 goes last, its stride replaced by the
    /// span before it (TMA checks strides even where they are unused).
    ///
    /// ```
    /// use baton_attention_abi::maps::OperandMaps;
    /// // [b, h, s, d]: seq inner.
    /// let m = OperandMaps::new(200, 4, 128, 200 * 128, 128);
    /// assert!(!m.heads_inner);
    /// assert_eq!((m.dim1, m.dim2), ((200, 256), (4, 200 * 256)));
    /// ```
    pub fn new(
        seq: usize,
        heads: usize,
        seq_stride: usize,
        head_stride: usize,
        box_rows: u32,
    ) -> Self {
        let (seq_b, head_b) = (2 * seq_stride as u64, 2 * head_stride as u64);
        let heads_inner = if heads == 1 {
            false
        } else if seq == 1 {
            true
        } else {
            head_stride < seq_stride
        };
        if heads_inner {
            let seq_b = if seq == 1 {
                heads as u64 * head_b
            } else {
                seq_b
            };
            Self {
                heads_inner,
                dim1: (heads as u64, head_b),
                dim2: (seq as u64, seq_b),
                box_dims: [64, 1, box_rows],
            }
        } else {
            let head_b = if heads == 1 {
                seq as u64 * seq_b
            } else {
                head_b
            };
            Self {
                heads_inner,
                dim1: (seq as u64, seq_b),
                dim2: (heads as u64, head_b),
                box_dims: [64, box_rows, 1],
            }
        }
    }

    /// The map of the batch entry whose element (0, 0, 0) is at `base`,
    /// with head dimension `head_dim` (bf16, 128-byte swizzle, zero fill).
    ///
    /// ```
    /// use baton_attention_abi::maps::OperandMaps;
    /// let desc = OperandMaps::new(64, 2, 128, 64 * 128, 64).desc(0x2000, 64);
    /// assert_eq!((desc.base, desc.rank, desc.dims[0]), (0x2000, 3, 64));
    /// ```
    pub fn desc(&self, base: u64, head_dim: usize) -> TensorMapDesc {
        TensorMapDesc {
            dtype: ElemType::BF16,
            rank: 3,
            base,
            dims: [head_dim as u64, self.dim1.0, self.dim2.0],
            strides_bytes: [self.dim1.1, self.dim2.1],
            box_dims: self.box_dims,
            swizzle: Swizzle::B128,
            oob_fill: OobFill::Zero,
            l2_promotion: L2Promotion::B256,
        }
    }
}
