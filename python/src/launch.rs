//! The GEMM calls of the Python package on caller-owned device memory:
//! validation (shape rules from `baton_runtime::gemm`, view rules from
//! [`crate::view`]), the Rust API's plans (kernel, split-K, tensor maps
//! encoded on the host once per operand set and passed by value in the
//! kernel parameters), and the launch on the caller's stream. Nothing here
//! allocates device memory or synchronizes once an operand set's plan
//! exists (the first call with it may allocate a split-K workspace or the
//! FP8 A scales' padded copy for a start that is not 16-byte aligned, in
//! stream order, never while capturing), so
//! every call can be captured in a CUDA graph.
//!
//! Both run the Rust API's own plans (`GemmPlan::from_views`,
//! `Fp8GemmPlan::from_views`, kept per operand set and stream in
//! [`crate::plan_cache`]): the same configuration, split-K or stream-K and
//! tensor maps as a Rust caller's. The FP8 A scales may have any row
//! stride (`Scales::with_ld`): the kernel reads them in place (DeepGEMM's
//! TMA-aligned layout and torch's M-major one alike); only a view whose
//! start is not 16-byte aligned goes through the plan's padded copy.

use crate::device::DeviceState;
use crate::plan_cache::PlanKey;
use crate::view::{MatrixView, ViewError};
use baton_runtime::cudarc::driver::sys;
use baton_runtime::gemm::fp8::{self, Fp8GemmPlan};
use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
use baton_runtime::gemm::{self, Fp8ShapeError, GemmPlan, GemmShapeError, Scales};

/// Why a call was refused or failed. All but the last are the caller's
/// (Python `ValueError`), the last the device's (`RuntimeError`).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// A BF16 shape rule of `baton_runtime::gemm::validate`.
    #[error(transparent)]
    Shape(#[from] GemmShapeError),
    /// An FP8 shape rule of `baton_runtime::gemm::fp8::validate`.
    #[error(transparent)]
    Fp8Shape(#[from] Fp8ShapeError),
    /// A strided-view rule.
    #[error(transparent)]
    View(#[from] ViewError),
    /// A plan refused the call's operands or stream state (e.g. FP8 A
    /// scales whose start is not 16-byte aligned, which need a copy, while
    /// a graph is being captured).
    #[error(transparent)]
    Plan(gemm::GemmError),
    /// The device, driver or launch failed.
    #[error("{0}")]
    Device(String),
}

impl From<baton_runtime::Error> for CallError {
    fn from(e: baton_runtime::Error) -> Self {
        match e {
            baton_runtime::Error::GemmShape(s) => CallError::Shape(s),
            baton_runtime::Error::Fp8Shape(s) => CallError::Fp8Shape(s),
            baton_runtime::Error::Gemm(
                g @ (gemm::GemmError::AScalesCopyInGraph { .. }
                | gemm::GemmError::OutputOverlapsInput { .. }),
            ) => CallError::Plan(g),
            e => CallError::Device(e.to_string()),
        }
    }
}

impl From<crate::device::DeviceError> for CallError {
    fn from(e: crate::device::DeviceError) -> Self {
        CallError::Device(e.0)
    }
}

/// A torch tensor of rank 2 as the Python side sees it.
#[derive(Clone, Copy, Debug)]
pub struct Tensor2d {
    /// `data_ptr()`.
    pub ptr: u64,
    /// `size(0), size(1)`.
    pub sizes: [u64; 2],
    /// `stride(0), stride(1)`, in elements.
    pub strides: [i64; 2],
}

impl Tensor2d {
    /// A view of the tensor (`transposed`: of its transpose), rows
    /// contiguous. A dimension of size 1 has no stride that matters: a
    /// single row gets the smallest 16-byte aligned row stride.
    fn view(
        &self,
        operand: &'static str,
        elem_bytes: u64,
        transposed: bool,
        what: &'static str,
        hint: &'static str,
    ) -> Result<MatrixView, ViewError> {
        let v = self.rows(operand, elem_bytes, transposed, what, hint)?;
        v.check_layout(operand)?;
        Ok(v)
    }

    /// [`view`](Self::view) without TMA's stride rule: for operands the
    /// runtime reads in place or copies (the FP8 A scales); rows still
    /// must not overlap.
    fn rows(
        &self,
        operand: &'static str,
        elem_bytes: u64,
        transposed: bool,
        what: &'static str,
        hint: &'static str,
    ) -> Result<MatrixView, ViewError> {
        let (r, c) = if transposed { (1, 0) } else { (0, 1) };
        let (rows, cols) = (self.sizes[r], self.sizes[c]);
        if cols > 1 && self.strides[c] != 1 {
            return Err(ViewError::NotRowMajor {
                operand,
                col_stride: self.strides[c],
                what,
                hint,
            });
        }
        let ld = if rows <= 1 {
            cols.next_multiple_of(crate::view::TMA_ALIGN / elem_bytes)
        } else {
            self.strides[r].max(0) as u64
        };
        if ld < cols {
            return Err(ViewError::LeadingDimTooSmall { operand, ld, cols });
        }
        Ok(MatrixView {
            ptr: self.ptr,
            rows,
            cols,
            ld,
            elem_bytes,
        })
    }
}

const K_MAJOR: &str = "K (K-major)";
const A_HINT: &str = "; a is [M, K] with K contiguous: pass a.contiguous()";
const B_HINT: &str = "; b is [N, K] with K contiguous, as torch.nn.functional.linear's weight (a @ b.T): pass b.contiguous()";
const BF16_A_RULE: &str =
    "K or M (a.stride(1) == 1, or a.stride(0) == 1 for a transposed [K, M] tensor)";
const BF16_A_HINT: &str = "; a is [M, K]: pass a.contiguous()";
const BF16_B_RULE: &str = "K or N (b.stride(1) == 1 for an [N, K] weight, or b.stride(0) == 1 for w.T of a [K, N] tensor w)";
const BF16_B_HINT: &str = "; b is [N, K] (a @ b.T): pass b.contiguous()";

/// A BF16 input read K-major (its rows contiguous), or, when its first
/// dimension is the contiguous one, MN-major: the view of its transpose
/// and `true`.
fn k_or_mn_major(
    t: &Tensor2d,
    operand: &'static str,
    what: &'static str,
    hint: &'static str,
) -> Result<(MatrixView, bool), ViewError> {
    if t.sizes[1] <= 1 || t.strides[1] == 1 {
        return Ok((t.view(operand, 2, false, what, hint)?, false));
    }
    if t.strides[0] == 1 {
        return Ok((t.view(operand, 2, true, what, hint)?, true));
    }
    Err(ViewError::NotRowMajor {
        operand,
        col_stride: t.strides[1],
        what,
        hint,
    })
}

/// A checked BF16 problem: `D = alpha·A·Bᵀ + beta·C`.
#[derive(Clone, Copy, Debug)]
pub struct Bf16Problem {
    /// M, N, K.
    pub mnk: (u64, u64, u64),
    /// A `[M, K]`.
    pub a: MatrixView,
    /// B `[N, K]`.
    pub b: MatrixView,
    /// C `[M, N]`, optional.
    pub c: Option<MatrixView>,
    /// D `[M, N]`.
    pub d: MatrixView,
    /// A is M-major (`a` is the view of its transpose, `[K, M]`).
    pub a_mn: bool,
    /// B is N-major (`b` is the view of its transpose, `[K, N]`).
    pub b_mn: bool,
}

fn same_shape(
    operand: &'static str,
    v: &MatrixView,
    rows: u64,
    cols: u64,
) -> Result<(), ViewError> {
    if (v.rows, v.cols) == (rows, cols) {
        Ok(())
    } else {
        Err(ViewError::ShapeMismatch {
            operand,
            got: (v.rows, v.cols),
            expected: (rows, cols),
        })
    }
}

/// Checks a BF16 call's shapes, dtypes aside (the Python side checks
/// those): the runtime's shape rules, then the view rules. Addresses are
/// not looked at (fake tensors have none): see [`check_addresses`].
pub fn check_bf16(
    a: &Tensor2d,
    b: &Tensor2d,
    c: Option<&Tensor2d>,
    d: &Tensor2d,
    beta: f32,
) -> Result<Bf16Problem, CallError> {
    let (m, k) = (a.sizes[0], a.sizes[1]);
    let n = b.sizes[0];
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let c_len = c.map(|_| mu * nu);
    gemm::validate(mu, nu, ku, mu * ku, nu * ku, c_len, mu * nu, beta)?;
    let (a, a_mn) = k_or_mn_major(a, "a", BF16_A_RULE, BF16_A_HINT)?;
    let (b, b_mn) = k_or_mn_major(b, "b", BF16_B_RULE, BF16_B_HINT)?;
    same_shape("b", &b, if b_mn { k } else { n }, if b_mn { n } else { k })?;
    let row = "N (row-major)";
    let c = match c {
        Some(c) => {
            let v = c.view("c", 2, false, row, "; pass c.contiguous()")?;
            same_shape("c", &v, m, n)?;
            Some(v)
        }
        None => None,
    };
    let d = d.view("out", 2, false, row, "")?;
    same_shape("out", &d, m, n)?;
    Ok(Bf16Problem {
        mnk: (m, n, k),
        a,
        b,
        c,
        d,
        a_mn,
        b_mn,
    })
}

/// The address rules: 16-byte aligned operands, an output that meets no
/// input (C may be the output itself, for `D = alpha·A·Bᵀ + beta·D`).
pub fn check_addresses(
    inputs: &[(&'static str, &MatrixView)],
    out: &MatrixView,
) -> Result<(), ViewError> {
    for (name, v) in inputs {
        v.check(name)?;
    }
    out.check("out")?;
    for (name, v) in inputs {
        if *name != "c" && out.overlaps(v) {
            return Err(ViewError::OutputOverlaps { operand: name });
        }
    }
    Ok(())
}

/// The first 12 words of a launch's [`PlanKey`]: `kind` (1: BF16, 2:
/// FP8), M, N, K, and the address and row stride of each mapped operand
/// (their shapes follow from M, N, K); the caller fills the rest (stream,
/// capture, operands the maps do not name).
fn plan_key(kind: u64, mnk: (u64, u64, u64), views: [&MatrixView; 4]) -> PlanKey {
    let mut key = [0u64; 16];
    key[0] = kind;
    (key[1], key[2], key[3]) = mnk;
    for (i, v) in views.iter().enumerate() {
        key[4 + 2 * i] = v.ptr;
        key[5 + 2 * i] = v.ld;
    }
    key
}

/// Elements from the view's first to its last (its buffer's length for
/// [`Matrix::from_raw`]).
fn elems(v: &MatrixView) -> usize {
    (v.span_bytes() / v.elem_bytes) as usize
}

/// The device's `Gpu` on the caller's `stream`, with the context current
/// (the driver encodes maps in it), and whether the stream is capturing a
/// CUDA graph (plans made then get no split-K or stream-K).
///
/// # Safety
/// `stream` must be a live stream of the device's context.
unsafe fn plan_stream(
    dev: &DeviceState,
    stream: sys::CUstream,
) -> Result<(baton_runtime::Gpu, bool), CallError> {
    dev.context()
        .bind_to_thread()
        .map_err(|e| CallError::Device(e.to_string()))?;
    // SAFETY: the caller guarantees `stream` belongs to the device's
    // context; wrapping does not take ownership.
    let s = unsafe { dev.context().wrap_borrowed_stream(stream) };
    let capturing = s
        .capture_status()
        .map_err(|e| CallError::Device(e.to_string()))?
        != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    Ok((dev.gpu.with_stream(s)?, capturing))
}

/// Enqueues `D = alpha·A·Bᵀ + beta·C` on `stream` (a stream of the
/// device's primary context, e.g. torch's current stream).
///
/// # Safety
/// The views must name live device memory of the device's context that
/// stays valid until the kernel has run, and `stream` must be a live
/// stream of that context.
pub unsafe fn gemm_bf16(
    dev: &DeviceState,
    stream: sys::CUstream,
    p: &Bf16Problem,
    alpha: f32,
    beta: f32,
) -> Result<(), CallError> {
    if beta != 0.0 && p.c.is_none() {
        return Err(GemmShapeError::MissingC.into());
    }
    let mut inputs = vec![("a", &p.a), ("b", &p.b)];
    if let Some(c) = &p.c {
        inputs.push(("c", c));
    }
    check_addresses(&inputs, &p.d)?;
    let (m, n, k) = p.mnk;
    // SAFETY: forwarded (`stream` is a live stream of the device's context).
    let (gpu, capturing) = unsafe { plan_stream(dev, stream) }?;
    let c = p.c.as_ref().unwrap_or(&p.d);
    let mut key = plan_key(1, p.mnk, [&p.a, &p.b, c, &p.d]);
    key[12] = stream as u64;
    key[13] = capturing as u64;
    key[14] = p.c.is_some() as u64;
    key[15] = p.a_mn as u64 | (p.b_mn as u64) << 1;
    let mut plans = dev.plans.lock().unwrap_or_else(|e| e.into_inner());
    let plan = plans.get_or_make(&key, || {
        // SAFETY: the views name live device memory of this context for as
        // long as the caller's tensors live (the plan is only run with the
        // same addresses, per its key, while the caller holds them).
        let (a, b, c, d) = unsafe {
            (
                Matrix::<u16>::from_raw(
                    p.a.ptr,
                    elems(&p.a),
                    if p.a_mn {
                        MatrixDesc::col_major(m as usize, k as usize)
                    } else {
                        MatrixDesc::row_major(m as usize, k as usize)
                    }
                    .with_ld(p.a.ld as usize),
                ),
                Matrix::<u16>::from_raw(
                    p.b.ptr,
                    elems(&p.b),
                    if p.b_mn {
                        MatrixDesc::row_major(k as usize, n as usize)
                    } else {
                        MatrixDesc::col_major(k as usize, n as usize)
                    }
                    .with_ld(p.b.ld as usize),
                ),
                p.c.map(|c| {
                    Matrix::<u16>::from_raw(
                        c.ptr,
                        elems(&c),
                        MatrixDesc::row_major(m as usize, n as usize).with_ld(c.ld as usize),
                    )
                })
                .transpose(),
                MatrixMut::<u16>::from_raw(
                    p.d.ptr,
                    elems(&p.d),
                    MatrixDesc::row_major(m as usize, n as usize).with_ld(p.d.ld as usize),
                ),
            )
        };
        let (a, b, c, d) = (
            a.map_err(baton_runtime::Error::from)?,
            b.map_err(baton_runtime::Error::from)?,
            c.map_err(baton_runtime::Error::from)?,
            d.map_err(baton_runtime::Error::from)?,
        );
        GemmPlan::from_views(&gpu, &dev.kernels, a, b, c, d)
    })?;
    plan.run(&gpu, alpha, beta)?;
    Ok(())
}

/// A checked blockwise FP8 problem (DeepSeek scales).
#[derive(Clone, Copy, Debug)]
pub struct Fp8Problem {
    /// M, N, K.
    pub mnk: (u64, u64, u64),
    /// A `[M, K]` e4m3.
    pub a: MatrixView,
    /// B `[N, K]` e4m3.
    pub b: MatrixView,
    /// A scales as the kernel reads them: `[K/128, M]`, M contiguous.
    pub sa: MatrixView,
    /// B scales `[⌈N/128⌉, K/128]`, contiguous.
    pub sb: MatrixView,
    /// D `[M, N]` bf16.
    pub d: MatrixView,
}

/// Checks a blockwise FP8 call's shapes (dtypes aside): the runtime's
/// shape rules, then the view rules. `a_scales` is the torch tensor
/// `[M, K/128]` with M contiguous (`stride(0) == 1`), `b_scales`
/// `[⌈N/128⌉, K/128]` contiguous.
pub fn check_fp8(
    a: &Tensor2d,
    sa: &Tensor2d,
    b: &Tensor2d,
    sb: &Tensor2d,
    d: &Tensor2d,
) -> Result<Fp8Problem, CallError> {
    let (m, k) = (a.sizes[0], a.sizes[1]);
    let n = b.sizes[0];
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let (sa_len, sb_len) = fp8::scale_lens(mu, nu, ku);
    let kb = k / fp8::SCALE_BLOCK as u64;
    let nb = n.div_ceil(fp8::SCALE_BLOCK as u64);
    fp8::validate(mu, nu, ku, mu * ku, nu * ku, sa_len, sb_len, mu * nu)?;
    let a = a.view("a", 1, false, K_MAJOR, A_HINT)?;
    let b = b.view("b", 1, false, K_MAJOR, B_HINT)?;
    same_shape("b", &b, n, k)?;
    // Any row stride: TMA reads 16-byte aligned rows (DeepGEMM's layout)
    // in place, the plan copies others.
    let sa_view = sa.rows(
        "a_scales",
        4,
        true,
        "M (one fp32 scale per row of a and 128 of K, M-major: a_scales.stride(0) == 1)",
        "; pass a_scales.t().contiguous().t(), or DeepGEMM's TMA-aligned column-major layout",
    )?;
    same_shape("a_scales (as [K/128, M])", &sa_view, kb, m)?;
    let sb_view = sb.view(
        "b_scales",
        4,
        false,
        "K/128 (row-major)",
        "; pass b_scales.contiguous()",
    )?;
    same_shape("b_scales", &sb_view, nb, kb)?;
    if nb > 1 && sb_view.ld != kb {
        return Err(ViewError::NotContiguous {
            operand: "b_scales",
            ld: sb_view.ld,
            cols: kb,
        }
        .into());
    }
    let d = d.view("out", 2, false, "N (row-major)", "")?;
    same_shape("out", &d, m, n)?;
    Ok(Fp8Problem {
        mnk: (m, n, k),
        a,
        b,
        sa: sa_view,
        sb: sb_view,
        d,
    })
}

/// Enqueues the blockwise FP8 GEMM `D = (A ⊙ Sa)·(B ⊙ Sb)ᵀ` on `stream`
/// with the Rust API's plan (`Fp8GemmPlan::from_views`: kernel, split-K
/// and tensor maps of the cost model, A scales read in place or through
/// the plan's padded copy), kept per operand set and stream as the BF16
/// plans are.
///
/// # Safety
/// As [`gemm_bf16`].
pub unsafe fn gemm_fp8_blockwise(
    dev: &DeviceState,
    stream: sys::CUstream,
    p: &Fp8Problem,
) -> Result<(), CallError> {
    // The A scales need no alignment: the kernel reads any row stride in
    // place, the plan copies only a start that is not 16-byte aligned
    // (`fp8::a_scales_copied`). The B scales are read through a plain
    // pointer.
    check_addresses(&[("a", &p.a), ("b", &p.b), ("b_scales", &p.sb)], &p.d)?;
    if p.d.overlaps(&p.sa) {
        return Err(ViewError::OutputOverlaps {
            operand: "a_scales",
        }
        .into());
    }
    let (m, n, k) = p.mnk;
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    // SAFETY: forwarded.
    let (gpu, capturing) = unsafe { plan_stream(dev, stream) }?;
    let mut key = plan_key(2, p.mnk, [&p.a, &p.b, &p.sa, &p.d]);
    key[12] = stream as u64;
    key[13] = capturing as u64;
    key[14] = p.sb.ptr;
    let mut plans = dev.fp8_plans.lock().unwrap_or_else(|e| e.into_inner());
    let plan = plans.get_or_make(&key, || {
        // SAFETY: as in `gemm_bf16`: the views name live device memory of
        // this context while the caller holds its tensors, and the plan
        // only runs with the same addresses (its key).
        let (a, b, d, sa, sb) = unsafe {
            (
                Matrix::<u8>::from_raw(
                    p.a.ptr,
                    elems(&p.a),
                    MatrixDesc::row_major(mu, ku).with_ld(p.a.ld as usize),
                ),
                Matrix::<u8>::from_raw(
                    p.b.ptr,
                    elems(&p.b),
                    MatrixDesc::col_major(ku, nu).with_ld(p.b.ld as usize),
                ),
                MatrixMut::<u16>::from_raw(
                    p.d.ptr,
                    elems(&p.d),
                    MatrixDesc::row_major(mu, nu).with_ld(p.d.ld as usize),
                ),
                Scales::from_raw(p.sa.ptr, elems(&p.sa)).with_ld(p.sa.ld as usize),
                Scales::from_raw(p.sb.ptr, elems(&p.sb)),
            )
        };
        let (a, b, d) = (
            a.map_err(baton_runtime::Error::from)?,
            b.map_err(baton_runtime::Error::from)?,
            d.map_err(baton_runtime::Error::from)?,
        );
        Fp8GemmPlan::from_views(&gpu, &dev.kernels, a, b, sa, sb, d)
    })?;
    plan.run(&gpu)?;
    Ok(())
}
