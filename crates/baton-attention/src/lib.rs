//! FlashAttention-style attention forward on baton (Hopper, sm_90a):
//! `O = softmax(scale·Q·Kᵀ [+ causal mask])·V`, bf16 in and out, fp32
//! accumulation, optional fp32 logsumexp, launched on the caller's stream.
//!
//! * [`AttentionShape`], [`Strides`], [`AttentionOptions`]: what to compute;
//!   [`validate`] checks them against the buffers before anything is
//!   launched and names the broken rule ([`AttentionError`]).
//! * [`Attention`]: the loaded kernels; [`Attention::forward`] validates,
//!   encodes the tensor maps and launches on the given stream.
//!
//! The kernels and their ABI live in `attention/kernel` and
//! `baton-attention-abi` (built by this crate's build script).
#![warn(missing_docs)]

mod error;
mod forward;
mod shape;

pub use error::{AttentionError, Dim, TensorName};
pub use forward::{Attention, PreparedAttention, RawTensor, TensorMut, TensorRef};
pub use shape::{
    AttentionOptions, AttentionShape, Ctas, KvBlock, Plan, Schedule, Strides, Warpgroups, validate,
};

/// The release PTX of the attention kernels.
pub static PTX: &str = baton_runtime::include_ptx!("baton_attention_kernel", "sm90a");
/// The debug PTX (bounded waits that report a hung pipeline).
pub static PTX_DEBUG: &str = baton_runtime::include_ptx!("baton_attention_kernel", "sm90a_debug");
/// The module name the PTX is loaded under.
pub const MODULE: &str = "baton_attention_kernel";
