//! `baton._baton`: the native part of the `baton` Python package. It
//! receives torch tensors as plain numbers (data pointer, sizes, strides),
//! the device ordinal and the CUDA stream handle, checks them against
//! baton's rules and launches baton's GEMMs on that stream. The Python
//! side (`baton/_ops.py`) registers the `torch.library` ops around it.
//!
//! Errors: the caller's mistakes (shape, stride, alignment rules) raise
//! `ValueError` with the rule's text; device failures `RuntimeError`.

mod attention;
mod device;
mod eager;
mod launch;
mod plan_cache;
pub mod view;

use launch::{CallError, Tensor2d};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// A tensor as Python passes it: `(data_ptr, size0, size1, stride0, stride1)`.
type PyTensor = (u64, u64, u64, i64, i64);

fn tensor((ptr, s0, s1, t0, t1): PyTensor) -> Tensor2d {
    Tensor2d {
        ptr,
        sizes: [s0, s1],
        strides: [t0, t1],
    }
}

pub(crate) fn py_err(e: CallError) -> PyErr {
    match e {
        CallError::Device(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Checks a BF16 GEMM's shapes and strides (no addresses, no device).
#[pyfunction]
#[pyo3(signature = (a, b, c, out, beta))]
fn check_gemm(
    a: PyTensor,
    b: PyTensor,
    c: Option<PyTensor>,
    out: PyTensor,
    beta: f32,
) -> PyResult<()> {
    let c = c.map(tensor);
    launch::check_bf16(&tensor(a), &tensor(b), c.as_ref(), &tensor(out), beta)
        .map(|_| ())
        .map_err(py_err)
}

/// `out = alpha·a·bᵀ + beta·c` on `stream` of device `device`.
#[pyfunction]
#[pyo3(signature = (device, stream, a, b, c, out, alpha, beta))]
#[allow(clippy::too_many_arguments)]
fn gemm(
    device: usize,
    stream: usize,
    a: PyTensor,
    b: PyTensor,
    c: Option<PyTensor>,
    out: PyTensor,
    alpha: f32,
    beta: f32,
) -> PyResult<()> {
    let c = c.map(tensor);
    let p = launch::check_bf16(&tensor(a), &tensor(b), c.as_ref(), &tensor(out), beta)
        .map_err(py_err)?;
    let dev = device::device(device).map_err(|e| py_err(e.into()))?;
    // SAFETY: the Python side passes live CUDA tensors of `device` (which
    // torch keeps alive for the duration of the op and, through its
    // caching allocator's stream semantics, until the work enqueued on
    // `stream` has run) and torch's current stream of that device.
    unsafe { launch::gemm_bf16(dev, stream as _, &p, alpha, beta) }.map_err(py_err)
}

/// Checks a blockwise FP8 GEMM's shapes and strides (no addresses, no
/// device).
#[pyfunction]
fn check_gemm_fp8_blockwise(
    a: PyTensor,
    a_scales: PyTensor,
    b: PyTensor,
    b_scales: PyTensor,
    out: PyTensor,
) -> PyResult<()> {
    launch::check_fp8(
        &tensor(a),
        &tensor(a_scales),
        &tensor(b),
        &tensor(b_scales),
        &tensor(out),
    )
    .map(|_| ())
    .map_err(py_err)
}

/// `out = (a ⊙ a_scales)·(b ⊙ b_scales)ᵀ` on `stream` of device `device`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn gemm_fp8_blockwise(
    device: usize,
    stream: usize,
    a: PyTensor,
    a_scales: PyTensor,
    b: PyTensor,
    b_scales: PyTensor,
    out: PyTensor,
) -> PyResult<()> {
    let p = launch::check_fp8(
        &tensor(a),
        &tensor(a_scales),
        &tensor(b),
        &tensor(b_scales),
        &tensor(out),
    )
    .map_err(py_err)?;
    let dev = device::device(device).map_err(|e| py_err(e.into()))?;
    // SAFETY: as in `gemm`.
    unsafe { launch::gemm_fp8_blockwise(dev, stream as _, &p) }.map_err(py_err)
}

/// How the kernels' PTX got into this build (`baton_runtime::ptx::SOURCE`),
/// and whether the sm_90a release PTX is embedded.
#[pyfunction]
fn ptx_info() -> (&'static str, bool) {
    (
        baton_runtime::ptx::SOURCE,
        baton_runtime::ptx::get(baton_runtime::Variant::Release).is_ok(),
    )
}

/// Bench helper: host seconds per call of the Rust API's
/// `GemmPlan::run` (the plan made once, on the device's default stream)
/// over `iters` launches, or with `oneshot` of `gemm::gemm_bf16` (a plan
/// per call), for the host-overhead comparison with the Python path.
/// Synchronizes after the loop only.
#[pyfunction]
#[pyo3(signature = (device, m, n, k, iters, oneshot=false))]
fn bench_rust_plan_run(
    device: usize,
    m: usize,
    n: usize,
    k: usize,
    iters: usize,
    oneshot: bool,
) -> PyResult<f64> {
    let dev = device::device(device).map_err(|e| py_err(e.into()))?;
    let run = || -> baton_runtime::Result<f64> {
        let gpu = &dev.gpu;
        let s = gpu.stream();
        let a = s.alloc_zeros::<u16>(m * k)?;
        let b = s.alloc_zeros::<u16>(n * k)?;
        let mut d = s.alloc_zeros::<u16>(m * n)?;
        let plan =
            baton_runtime::gemm::GemmPlan::new(gpu, &dev.kernels, &a, &b, None, &mut d, m, n, k)?;
        for _ in 0..10 {
            plan.run(gpu, 1.0, 0.0)?;
        }
        gpu.synchronize()?;
        let t = std::time::Instant::now();
        for _ in 0..iters {
            plan.run(gpu, 1.0, 0.0)?;
        }
        let dt = t.elapsed().as_secs_f64() / iters as f64;
        gpu.synchronize()?;
        drop(plan);
        if !oneshot {
            return Ok(dt);
        }
        let t = std::time::Instant::now();
        for _ in 0..iters {
            baton_runtime::gemm::gemm_bf16(
                gpu,
                &dev.kernels,
                &a,
                &b,
                None,
                &mut d,
                (m, n, k),
                1.0,
                0.0,
            )?;
        }
        let dt = t.elapsed().as_secs_f64() / iters as f64;
        gpu.synchronize()?;
        Ok(dt)
    };
    run().map_err(|e| py_err(e.into()))
}

/// Bench helper: host seconds per call of this module's own Rust path
/// (checks, cached maps, launch) over `iters` calls, without Python.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn bench_rust_call(
    device: usize,
    stream: usize,
    a: PyTensor,
    b: PyTensor,
    out: PyTensor,
    iters: usize,
) -> PyResult<f64> {
    let dev = device::device(device).map_err(|e| py_err(e.into()))?;
    let t = std::time::Instant::now();
    for _ in 0..iters {
        let p =
            launch::check_bf16(&tensor(a), &tensor(b), None, &tensor(out), 0.0).map_err(py_err)?;
        // SAFETY: as in `gemm`.
        unsafe { launch::gemm_bf16(dev, stream as _, &p, 1.0, 0.0) }.map_err(py_err)?;
    }
    Ok(t.elapsed().as_secs_f64() / iters as f64)
}

/// The native module.
#[pymodule]
fn _baton(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_gemm, m)?)?;
    m.add_function(wrap_pyfunction!(gemm, m)?)?;
    m.add_function(wrap_pyfunction!(eager::gemm_eager, m)?)?;
    m.add_function(wrap_pyfunction!(eager::init_eager, m)?)?;
    m.add_function(wrap_pyfunction!(check_gemm_fp8_blockwise, m)?)?;
    m.add_function(wrap_pyfunction!(gemm_fp8_blockwise, m)?)?;
    m.add_function(wrap_pyfunction!(attention::check_attention, m)?)?;
    m.add_function(wrap_pyfunction!(attention::attention, m)?)?;
    m.add_function(wrap_pyfunction!(ptx_info, m)?)?;
    m.add_function(wrap_pyfunction!(bench_rust_plan_run, m)?)?;
    m.add_function(wrap_pyfunction!(bench_rust_call, m)?)?;
    Ok(())
}
