//! The eager call of `baton.gemm` with the torch tensors' attributes read
//! here rather than in Python (the same attribute reads through the C API,
//! without the interpreter: measured in BENCHMARKS.md "Session 8 — PY").
//! Anything unusual returns `None` and the Python side takes its slower
//! path, which raises the descriptive error or goes through the op.

use crate::launch::{self, Tensor2d};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// What the fast path compares against, set once by `init_eager`:
/// `torch.Tensor`, `torch.bfloat16`, and the function returning the raw
/// current stream of a device.
struct Torch {
    tensor: Py<PyType>,
    bf16: Py<PyAny>,
    raw_stream: Py<PyAny>,
}

static TORCH: PyOnceLock<Torch> = PyOnceLock::new();

/// Records torch's `Tensor` type, `bfloat16` dtype and raw-stream getter.
#[pyfunction]
pub fn init_eager(
    py: Python<'_>,
    tensor: Bound<'_, PyType>,
    bf16: Bound<'_, PyAny>,
    raw_stream: Bound<'_, PyAny>,
) -> PyResult<()> {
    let _ = TORCH.get_or_init(py, || Torch {
        tensor: tensor.unbind(),
        bf16: bf16.unbind(),
        raw_stream: raw_stream.unbind(),
    });
    Ok(())
}

/// The operand as numbers when it is a plain bf16 CUDA tensor of rank 2
/// on `device` (or any device when `None`) that needs no gradient.
fn plain(
    t: &Torch,
    x: &Bound<'_, PyAny>,
    device: Option<i64>,
) -> PyResult<Option<(Tensor2d, i64)>> {
    let py = x.py();
    if !x.get_type().is(t.tensor.bind(py))
        || x.getattr(intern!(py, "requires_grad"))?.is_truthy()?
        || !x.getattr(intern!(py, "dtype"))?.is(t.bf16.bind(py))
        || !x.getattr(intern!(py, "is_cuda"))?.is_truthy()?
    {
        return Ok(None);
    }
    let dev: i64 = x.call_method0(intern!(py, "get_device"))?.extract()?;
    if device.is_some_and(|d| d != dev) {
        return Ok(None);
    }
    let Ok((s0, s1)) = x.getattr(intern!(py, "shape"))?.extract::<(u64, u64)>() else {
        return Ok(None);
    };
    let (t0, t1): (i64, i64) = x.call_method0(intern!(py, "stride"))?.extract()?;
    let ptr: u64 = x.call_method0(intern!(py, "data_ptr"))?.extract()?;
    Ok(Some((
        Tensor2d {
            ptr,
            sizes: [s0, s1],
            strides: [t0, t1],
        },
        dev,
    )))
}

/// `out = alpha·a·bᵀ + beta·c` on plain tensors (allocating `out` as
/// `a.new_empty((M, N))` when not given); `None` when the call needs the
/// Python side's checks or the op.
#[pyfunction]
#[pyo3(signature = (a, b, c, out, alpha, beta))]
pub fn gemm_eager<'py>(
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
    alpha: f32,
    beta: f32,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = a.py();
    let Some(t) = TORCH.get(py) else {
        return Ok(None);
    };
    if c.is_none() && beta != 0.0 {
        return Ok(None);
    }
    let Some((ta, dev)) = plain(t, a, None)? else {
        return Ok(None);
    };
    let Some((tb, _)) = plain(t, b, Some(dev))? else {
        return Ok(None);
    };
    let tc = match c {
        Some(c) => match plain(t, c, Some(dev))? {
            Some((tc, _)) => Some(tc),
            None => return Ok(None),
        },
        None => None,
    };
    let out = match out {
        Some(o) => o.clone(),
        None => a.call_method1(intern!(py, "new_empty"), ((ta.sizes[0], tb.sizes[0]),))?,
    };
    let Some((td, _)) = plain(t, &out, Some(dev))? else {
        return Ok(None);
    };
    let stream: usize = t.raw_stream.bind(py).call1((dev,))?.extract()?;
    let p = launch::check_bf16(&ta, &tb, tc.as_ref(), &td, beta).map_err(crate::py_err)?;
    let state = crate::device::device(dev as usize).map_err(|e| crate::py_err(e.into()))?;
    // SAFETY: live CUDA tensors of device `dev` (checked above), held by
    // the caller for the call, and torch's current stream of that device.
    unsafe { launch::gemm_bf16(state, stream as _, &p, alpha, beta) }.map_err(crate::py_err)?;
    Ok(Some(out))
}
