//! Why an attention call was refused (before launch) or failed.

use baton_attention_abi::HEAD_DIMS;

/// One of the call's tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorName {
    /// Queries.
    Q,
    /// Keys.
    K,
    /// Values.
    V,
    /// The output.
    O,
}

/// A size of the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Batch entries.
    Batch,
    /// Query rows per head.
    SeqQ,
    /// Key/value rows per head.
    SeqKv,
    /// Query heads.
    QHeads,
    /// Key/value heads.
    KvHeads,
    /// Head dimension.
    HeadDim,
}

/// Errors of [`validate`](crate::validate) and
/// [`Attention::forward`](crate::Attention::forward).
///
/// ```
/// use baton_attention::{validate, AttentionError, AttentionShape, Strides};
/// let shape = AttentionShape { batch: 1, seq_q: 8, seq_kv: 8, q_heads: 2, kv_heads: 2, head_dim: 96 };
/// let s = Strides::bshd(8, 2, 96);
/// let err = validate(&shape, [(s, 1536); 4], None).unwrap_err();
/// assert!(matches!(err, AttentionError::UnsupportedHeadDim { head_dim: 96, .. }));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum AttentionError {
    /// The head dimension has no kernel.
    #[error("head_dim {head_dim} is not supported: the kernels exist for head_dim {supported:?}")]
    UnsupportedHeadDim {
        /// The head dimension given.
        head_dim: usize,
        /// The supported ones.
        supported: [u32; 3],
    },
    /// GQA/MQA needs every K/V head shared by the same number of query heads.
    #[error(
        "kv_heads {kv_heads} does not divide q_heads {q_heads}: each K/V head must serve q_heads / kv_heads query heads"
    )]
    KvHeadsNotDividing {
        /// Query heads.
        q_heads: usize,
        /// Key/value heads.
        kv_heads: usize,
    },
    /// A size is zero.
    #[error("{dim:?} is 0: every size must be at least 1")]
    ZeroSize {
        /// Which size.
        dim: Dim,
    },
    /// A stride TMA cannot use.
    #[error(
        "tensor {tensor:?}: {which} stride {stride} (elements) is not allowed: strides must be multiples of 8 elements (16 bytes, TMA's rule) and below 2^39 elements; the head dimension must be contiguous"
    )]
    MisalignedStride {
        /// Which tensor.
        tensor: TensorName,
        /// `"batch"`, `"seq"` or `"head"`.
        which: &'static str,
        /// The stride given, in elements.
        stride: usize,
    },
    /// A buffer is shorter than its shape and strides reach.
    #[error(
        "tensor {tensor:?} has {len} elements but its shape and strides reach element {needed} - 1: the buffer must hold at least {needed}"
    )]
    WrongLength {
        /// Which tensor.
        tensor: TensorName,
        /// Its length in elements.
        len: usize,
        /// The length its shape and strides need.
        needed: usize,
    },
    /// The logsumexp buffer is not `batch · q_heads · seq_q` floats.
    #[error("lse has {len} floats but must have batch·q_heads·seq_q = {needed}")]
    LseWrongLength {
        /// Its length.
        len: usize,
        /// `batch · q_heads · seq_q`.
        needed: usize,
    },
    /// A size past what the kernel's grid and 32-bit indices allow.
    #[error("{dim:?} = {value} is too large: at most {max} ({why})")]
    TooLarge {
        /// Which size.
        dim: Dim,
        /// The value given.
        value: usize,
        /// The limit.
        max: usize,
        /// The reason.
        why: &'static str,
    },
    /// The scale is not a finite positive number.
    #[error("scale {scale} is not allowed: it must be finite and > 0")]
    BadScale {
        /// The scale given.
        scale: f32,
    },
    /// A raw tensor's address is not 16-byte aligned (TMA's rule for a
    /// tensor map's base).
    #[error(
        "tensor {tensor:?} starts at {addr:#x}: its address must be a multiple of 16 bytes (TMA's rule)"
    )]
    MisalignedAddress {
        /// Which tensor.
        tensor: TensorName,
        /// The address given.
        addr: u64,
    },
    /// The output shares memory with an input.
    #[error("the output O overlaps input {tensor:?}: O must not share memory with Q, K or V")]
    OutputOverlaps {
        /// The input it meets.
        tensor: TensorName,
    },
    /// Loading, encoding or launching failed in the runtime.
    #[error(transparent)]
    Runtime(#[from] baton_runtime::Error),
}

impl AttentionError {
    /// The supported head dimensions (for [`AttentionError::UnsupportedHeadDim`]).
    pub const SUPPORTED: [u32; 3] = HEAD_DIMS;
}
