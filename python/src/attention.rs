//! `baton.attention`: FlashAttention-style forward (`baton-attention`) on
//! torch CUDA tensors, zero-copy, on torch's current stream. The Python
//! side passes each tensor in `scaled_dot_product_attention`'s logical
//! order `[batch, heads, seq, head_dim]` with any strides whose head
//! dimension is contiguous (a `[batch, seq, heads, d]` tensor seen through
//! `.transpose(1, 2)` is FlashAttention's layout, and works as is).

use crate::device::{self, DeviceState};
use baton_attention::{
    Attention, AttentionError, AttentionOptions, AttentionShape, RawTensor, Strides,
};
use baton_runtime::cudarc::driver::sys;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// A torch tensor of rank 4 in SDPA's order: `(data_ptr, sizes, strides)`.
pub type PyTensor4 = (u64, [u64; 4], [i64; 4]);

/// Why an attention call was refused: the layout rules of this module,
/// or `baton-attention`'s typed errors.
#[derive(Debug, thiserror::Error)]
pub enum AttentionCallError {
    /// The head dimension is not contiguous, or a stride is negative.
    #[error(
        "baton.attention: {tensor} has strides {strides:?} (elements) for [batch, heads, seq, head_dim]: the head dimension must be contiguous (stride 1) and every stride ≥ 0; pass {tensor}.contiguous()"
    )]
    Layout {
        /// `q`, `k`, `v` or `out`.
        tensor: &'static str,
        /// The strides given.
        strides: [i64; 4],
    },
    /// Q, K, V disagree on batch or head_dim, or K and V on their shape.
    #[error(
        "baton.attention: shapes q {q:?}, k {k:?}, v {v:?} ([batch, heads, seq, head_dim]) do not fit: q, k and v must share batch and head_dim, and k and v must have the same shape (kv heads dividing q heads)"
    )]
    Shapes {
        /// Q's sizes.
        q: [u64; 4],
        /// K's sizes.
        k: [u64; 4],
        /// V's sizes.
        v: [u64; 4],
    },
    /// A rule of `baton-attention` (sizes, head_dim, GQA, strides, alignment).
    #[error("baton.attention: {0}")]
    Rule(AttentionError),
    /// Called while the stream is being captured into a CUDA graph.
    #[error(
        "baton.attention cannot be captured in a CUDA graph yet: it uploads its tensor maps on each call; call it outside torch.cuda.graph (the GEMMs can be captured)"
    )]
    Capturing,
    /// The device, driver or launch failed.
    #[error("baton.attention: {0}")]
    Device(String),
}

impl From<AttentionError> for AttentionCallError {
    fn from(e: AttentionError) -> Self {
        match e {
            AttentionError::Runtime(r) => AttentionCallError::Device(r.to_string()),
            e => AttentionCallError::Rule(e),
        }
    }
}

fn py_err(e: AttentionCallError) -> PyErr {
    match e {
        AttentionCallError::Device(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The tensor as `baton-attention` sees it: `Strides` are `(batch, seq,
/// head)`, `len` the elements its shape and strides reach.
fn raw(
    name: &'static str,
    (ptr, sizes, strides): PyTensor4,
) -> Result<RawTensor, AttentionCallError> {
    if strides.iter().any(|s| *s < 0) || (sizes[3] > 1 && strides[3] != 1) {
        return Err(AttentionCallError::Layout {
            tensor: name,
            strides,
        });
    }
    // A dimension of size 1 has no stride that matters: torch may report
    // anything there; give it one TMA accepts.
    let st = |i: usize| {
        if sizes[i] <= 1 {
            0
        } else {
            strides[i] as usize
        }
    };
    let reach: u64 = (0..3)
        .map(|i| (sizes[i].max(1) - 1) * st(i) as u64)
        .sum::<u64>()
        + sizes[3];
    Ok(RawTensor {
        ptr,
        len: reach as usize,
        strides: Strides {
            batch: st(0),
            head: st(1),
            seq: st(2),
        },
    })
}

/// Checks the call and returns the problem (no addresses read: fake
/// tensors have none).
pub fn check(
    q: PyTensor4,
    k: PyTensor4,
    v: PyTensor4,
    out: PyTensor4,
) -> Result<(AttentionShape, [RawTensor; 4]), AttentionCallError> {
    let (qs, ks, vs) = (q.1, k.1, v.1);
    if qs[0] != ks[0] || qs[3] != ks[3] || ks != vs {
        return Err(AttentionCallError::Shapes {
            q: qs,
            k: ks,
            v: vs,
        });
    }
    if out.1 != qs {
        return Err(AttentionCallError::Shapes {
            q: qs,
            k: out.1,
            v: vs,
        });
    }
    let shape = AttentionShape {
        batch: qs[0] as usize,
        q_heads: qs[1] as usize,
        seq_q: qs[2] as usize,
        kv_heads: ks[1] as usize,
        seq_kv: ks[2] as usize,
        head_dim: qs[3] as usize,
    };
    let t = [raw("q", q)?, raw("k", k)?, raw("v", v)?, raw("out", out)?];
    let lens = t.map(|r| (r.strides, r.len));
    baton_attention::validate(&shape, lens, None)?;
    Ok((shape, t))
}

/// The loaded attention kernels of a device (once).
fn kernels(dev: &DeviceState) -> Result<&Attention, AttentionCallError> {
    dev.attention
        .get_or_init(|| Attention::new(&dev.gpu).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| AttentionCallError::Device(e.clone()))
}

/// Raises `ValueError` naming the rule when the call is not allowed.
#[pyfunction]
pub fn check_attention(q: PyTensor4, k: PyTensor4, v: PyTensor4, out: PyTensor4) -> PyResult<()> {
    check(q, k, v, out).map(|_| ()).map_err(py_err)
}

/// Enqueues `out = softmax(scale·q·kᵀ [+ causal mask])·v` and the fp32
/// logsumexp into `lse` (`[batch, q_heads, seq_q]`, contiguous) on `stream`.
#[pyfunction]
#[pyo3(signature = (device, stream, q, k, v, out, lse, causal, scale))]
#[allow(clippy::too_many_arguments)]
pub fn attention(
    device: usize,
    stream: usize,
    q: PyTensor4,
    k: PyTensor4,
    v: PyTensor4,
    out: PyTensor4,
    lse: Option<(u64, usize)>,
    causal: bool,
    scale: Option<f32>,
) -> PyResult<()> {
    let (shape, tensors) = check(q, k, v, out).map_err(py_err)?;
    let dev = device::device(device).map_err(|e| py_err(AttentionCallError::Device(e.0)))?;
    let attn = kernels(dev).map_err(py_err)?;
    let opts = AttentionOptions {
        causal,
        scale,
        ..Default::default()
    };
    dev.context()
        .bind_to_thread()
        .map_err(|e| py_err(AttentionCallError::Device(e.to_string())))?;
    // SAFETY: `stream` is torch's current stream of `device`, whose
    // primary context the state holds; wrapping does not take ownership.
    let s = unsafe { dev.context().wrap_borrowed_stream(stream as sys::CUstream) };
    let capture = s
        .capture_status()
        .map_err(|e| py_err(AttentionCallError::Device(e.to_string())))?;
    if capture != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        return Err(py_err(AttentionCallError::Capturing));
    }
    // SAFETY: live CUDA tensors of `device` (checked by the Python side),
    // kept alive by torch for the op and, through its caching allocator's
    // stream semantics, until the work enqueued on `stream` has run.
    let prepared = unsafe { attn.prepare_raw(&s, &shape, &opts, tensors, lse) }
        .map_err(|e| py_err(e.into()))?;
    prepared
        .launch()
        .map_err(|e| py_err(AttentionCallError::Device(e.to_string())))
}
