//! The GEMMs over [matrix views](super::matrix): `D = alpha·A·B + beta·C`
//! with A M×K, B K×N, C and D M×N, each with its own leading dimension,
//! layout and batch stride, element types from [`super::element`].
//!
//! Layouts the Hopper kernels read (others are refused with
//! [`MatrixError::LayoutNotSupported`], naming the rule):
//!
//! | GEMM | A | B | C, D |
//! |---|---|---|---|
//! | BF16 | row- or column-major | row- or column-major | row- or column-major (both the same) |
//! | FP8 blockwise | row-major | column-major | row-major, batch 1 |
//!
//! A column-major D is computed as `Dᵀ = Bᵀ·Aᵀ` by the same kernel, so it
//! costs nothing. BF16 operands whose contiguous dimension is M (a
//! column-major A) or N (a row-major B: `torch.mm`'s `[in, out]` weight)
//! are read MN-major by their own kernel entries ([`super::mn_major`]: the
//! 128x256 and 128x128 configurations).
//!
//! A batched BF16 GEMM is one launch (strided batched GEMM: rank-3 tensor
//! maps, carried by value, work units = batch × tiles; stream-K and
//! split-K run over all of them); an input with batch stride 0 is one
//! matrix shared by the whole batch (read at batch coordinate 0: TMA
//! refuses a zero stride). An input whose batch stride is nonzero but
//! smaller than one matrix (`rows · ld`: the matrices overlap, which a
//! TMA map's third dimension cannot describe) falls back to one launch per
//! matrix ([`GemmPlan::launches`]).
//!
//! Everything runs on the [`Gpu`]'s stream: make it with
//! [`Gpu::from_stream`](crate::Gpu::from_stream) on yours. A stream owned
//! by another library (PyTorch's current stream, a raw `CUstream`) is
//! wrapped by cudarc's `CudaContext::wrap_borrowed_stream` (unsafe: the
//! owner keeps it alive) on the [`Gpu::context`](crate::Gpu::context) of the
//! same device. To capture plans in a CUDA graph, use a stream of your own:
//! the context's legacy default stream cannot be captured.

use super::bf16::{Bf16Operands, GemmConfig, GemmPlan, validate};
use super::element::{Bf16Storage, E4M3Storage, Element};
use super::fp8::{self, Fp8GemmPlan, Fp8Operands};
use super::matrix::{Layout, Matrix, MatrixDesc, MatrixError, MatrixMut};
use super::mn_major::Bf16Layouts;
use super::operand::RowMajorOperand;
use super::ranges_overlap;
use crate::error::{Error, Fp8ShapeError, GemmError, Result};
use crate::{Gpu, Kernels};
use baton::tensor_map::ElemType;
use cudarc::driver::DevicePtr;
use std::marker::PhantomData;

/// What the Hopper BF16 kernel reads: every layout of A and B (K-major,
/// or MN-major through `wgmma`'s transpose bits: [`super::mn_major`]); C
/// and D in the same layout ([`MatrixError::CLayoutDiffers`]).
pub const BF16_LAYOUT_RULE: &str = "the Hopper BF16 GEMM reads A and B row- or column-major \
     (K-major, or MN-major through wgmma's transpose bits); C and D must share one layout";

/// What the Hopper FP8 kernels read, for [`MatrixError::LayoutNotSupported`].
pub const FP8_LAYOUT_RULE: &str = "FP8 operands must be K-major on Hopper (wgmma reads e4m3 from \
     shared memory K-major only): A row-major (M×K) and B column-major (K×N: an N×K row-major \
     buffer)";

/// A view in kernel form: row-major (a column-major view is its
/// transpose, read row-major).
fn row_major<T: Element>(address: u64, desc: &MatrixDesc) -> RowMajorOperand {
    let d = match desc.layout {
        Layout::RowMajor => *desc,
        Layout::ColMajor => desc.transposed(),
    };
    RowMajorOperand {
        address,
        elem: T::TMA,
        rows: d.rows as u64,
        cols: d.cols as u64,
        ld: d.ld as u64,
        batch_stride: d.batch_stride as u64,
    }
}

fn require_layout(
    operand: &'static str,
    desc: &MatrixDesc,
    layout: Layout,
    dtype: &'static str,
    rule: &'static str,
) -> Result<(), MatrixError> {
    if desc.layout == layout {
        Ok(())
    } else {
        Err(MatrixError::LayoutNotSupported {
            operand,
            layout: desc.layout,
            dtype,
            rule,
        })
    }
}

/// A M×K, B K×N, C and D M×N, all of D's batch.
fn check_shapes(
    a: &MatrixDesc,
    b: &MatrixDesc,
    c: Option<&MatrixDesc>,
    d: &MatrixDesc,
) -> Result<(), MatrixError> {
    let mismatch = |what| MatrixError::ShapeMismatch {
        what,
        a: (a.rows, a.cols),
        b: (b.rows, b.cols),
        d: (d.rows, d.cols),
    };
    if a.cols != b.rows {
        return Err(mismatch("A's columns differ from B's rows (K)"));
    }
    if a.rows != d.rows {
        return Err(mismatch("A's rows differ from D's rows (M)"));
    }
    if b.cols != d.cols {
        return Err(mismatch("B's columns differ from D's columns (N)"));
    }
    if let Some(c) = c
        && (c.rows, c.cols) != (d.rows, d.cols)
    {
        return Err(mismatch("C's shape differs from D's (M×N)"));
    }
    for (operand, desc) in [("A", Some(a)), ("B", Some(b)), ("C", c)] {
        if let Some(x) = desc
            && x.batch != d.batch
        {
            return Err(MatrixError::BatchMismatch {
                operand,
                expected: d.batch,
                got: x.batch,
            });
        }
    }
    Ok(())
}

impl<'a> GemmPlan<'a> {
    /// The plan of `D = A·B` (scaled by `run`'s alpha, plus beta·C) over
    /// views: checks every view under its name, the shapes (A M×K, B K×N,
    /// C and D M×N), batches, layouts ([`BF16_LAYOUT_RULE`]; C and D the
    /// same) and overlaps (D may be C itself, nothing else), then picks
    /// the configuration as [`GemmPlan::new`] does (stream-K included).
    /// [`run`](GemmPlan::run) computes the whole batch in one launch
    /// (see the module docs for the exception).
    ///
    /// ```no_run
    /// use baton_runtime::{Gpu, Variant};
    /// use baton_runtime::gemm::GemmPlan;
    /// use baton_runtime::gemm::element::bf16;
    /// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
    /// let gpu = Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(Variant::Release)?;
    /// let (m, n, k) = (300, 200, 128);
    /// let a = gpu.stream().alloc_zeros::<bf16>(m * k)?;
    /// let w = gpu.stream().alloc_zeros::<bf16>(n * k)?; // N×K, as nn.Linear keeps it
    /// let mut d = gpu.stream().alloc_zeros::<bf16>(m * n)?;
    /// let plan = GemmPlan::from_views(
    ///     &gpu,
    ///     &kernels,
    ///     Matrix::new(&a, MatrixDesc::row_major(m, k))?,
    ///     Matrix::new(&w, MatrixDesc::col_major(k, n))?, // B = Wᵀ
    ///     None,
    ///     MatrixMut::new(&mut d, MatrixDesc::row_major(m, n))?,
    /// )?;
    /// plan.run(&gpu, 1.0, 0.0)?;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn from_views<T: Bf16Storage>(
        gpu: &Gpu,
        kernels: &Kernels,
        a: Matrix<'a, T>,
        b: Matrix<'a, T>,
        c: Option<Matrix<'a, T>>,
        d: MatrixMut<'a, T>,
    ) -> Result<Self> {
        let (ops, mnk) = bf16_operands(&a, &b, c.as_ref(), &d)?;
        Self::for_operands(gpu, kernels, None, ops, mnk)
    }

    /// [`from_views`](Self::from_views) with an explicit tile
    /// configuration (tuning; no split-K or stream-K unless set on the
    /// plan). With an MN-major operand (a column-major A, a row-major B)
    /// `config` must be one of [`Bf16Layouts::CONFIGS`], else
    /// [`MatrixError::NotSupported`] names the rule.
    ///
    /// ```no_run
    /// use baton_runtime::{Gpu, Variant};
    /// use baton_runtime::gemm::{GemmConfig, GemmPlan};
    /// use baton_runtime::gemm::element::bf16;
    /// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
    /// let gpu = Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(Variant::Release)?;
    /// let (m, n, k) = (512, 1024, 256);
    /// let x = gpu.stream().alloc_zeros::<bf16>(m * k)?;
    /// let w = gpu.stream().alloc_zeros::<bf16>(k * n)?; // [in, out], as torch.mm takes it
    /// let mut y = gpu.stream().alloc_zeros::<bf16>(m * n)?;
    /// let plan = GemmPlan::from_views_with_config(
    ///     &gpu,
    ///     &kernels,
    ///     GemmConfig::T128x128,
    ///     Matrix::new(&x, MatrixDesc::row_major(m, k))?,
    ///     Matrix::new(&w, MatrixDesc::row_major(k, n))?, // N-major B
    ///     None,
    ///     MatrixMut::new(&mut y, MatrixDesc::row_major(m, n))?,
    /// )?;
    /// assert!(plan.layouts().b_n_major);
    /// plan.run(&gpu, 1.0, 0.0)?;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn from_views_with_config<T: Bf16Storage>(
        gpu: &Gpu,
        kernels: &Kernels,
        config: GemmConfig,
        a: Matrix<'a, T>,
        b: Matrix<'a, T>,
        c: Option<Matrix<'a, T>>,
        d: MatrixMut<'a, T>,
    ) -> Result<Self> {
        let (ops, mnk) = bf16_operands(&a, &b, c.as_ref(), &d)?;
        Self::for_operands(gpu, kernels, Some(config), ops, mnk)
    }
}

/// The kernel operands and (M, N, K) of a BF16 GEMM over views.
fn bf16_operands<T: Bf16Storage>(
    a: &Matrix<'_, T>,
    b: &Matrix<'_, T>,
    c: Option<&Matrix<'_, T>>,
    d: &MatrixMut<'_, T>,
) -> Result<(Bf16Operands, (usize, usize, usize))> {
    a.check_as("A")?;
    b.check_as("B")?;
    if let Some(c) = c {
        c.check_as("C")?;
    }
    d.check_as("D")?;
    let (ad, bd, dd) = (a.desc(), b.desc(), d.desc());
    check_shapes(ad, bd, c.map(|c| c.desc()), dd)?;
    // Which dimension is contiguous: M for a column-major A, N for a
    // row-major B (the kernel's MN-major entries).
    let layouts = Bf16Layouts {
        a_m_major: ad.layout == Layout::ColMajor,
        b_n_major: bd.layout == Layout::RowMajor,
    };
    if let Some(c) = c
        && c.desc().layout != dd.layout
    {
        return Err(MatrixError::CLayoutDiffers {
            c: c.desc().layout,
            d: dd.layout,
        }
        .into());
    }
    if let Some(c) = c {
        let (cs, cb) = c.byte_range();
        let (ds, db) = d.byte_range();
        let same = cs == ds && c.desc() == dd;
        if !same && ranges_overlap(ds, db, cs, cb) {
            return Err(GemmError::OutputOverlapsInput {
                inputs: "C (unless C is exactly D, an in-place residual)",
                may_alias_c: false,
            }
            .into());
        }
    }
    let (m, n, k) = (dd.rows, dd.cols, ad.cols);
    let a_op = row_major::<T>(a.address(), ad);
    let b_op = row_major::<T>(b.address(), bd);
    // A column-major C or D is read as its transpose (N×M row-major).
    let c_op = c.map(|c| row_major::<T>(c.address(), c.desc()));
    let d_op = row_major::<T>(d.address(), dd);
    // A column-major D is Dᵀ = Bᵀ·Aᵀ: the kernel's A is B's buffer.
    // (`row_major` stores an M-major A as K×M and an N-major B as K×N:
    // what the MN-major entries read, swapped or not.)
    let (ops, mnk, layouts) = match dd.layout {
        Layout::RowMajor => ((a_op, b_op), (m, n, k), layouts),
        Layout::ColMajor => ((b_op, a_op), (n, m, k), layouts.swapped()),
    };
    let (km, kn, kk) = mnk;
    // The kernel's row rules (K and its N in 16-byte rows), on lengths
    // that the views already checked.
    validate(km, kn, kk, km * kk, kn * kk, None, km * kn, 0.0)?;
    Ok((
        Bf16Operands {
            a: ops.0,
            b: ops.1,
            layouts,
            c: c_op,
            d: d_op,
            batch: dd.batch,
        },
        mnk,
    ))
}

/// One-shot `D = alpha·A·B + beta·C` over BF16 views on the GPU's stream
/// ([`GemmPlan::from_views`] then [`GemmPlan::run`]). `beta ≠ 0` needs C.
///
/// ```no_run
/// use baton_runtime::{Gpu, Variant, gemm};
/// use baton_runtime::gemm::element::bf16;
/// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
/// let gpu = Gpu::new(0)?;
/// let kernels = gpu.load_kernels(Variant::Release)?;
/// // 4 independent 128×256×64 products, B shared (batch stride 0).
/// let a = gpu.stream().alloc_zeros::<bf16>(4 * 128 * 64)?;
/// let b = gpu.stream().alloc_zeros::<bf16>(256 * 64)?;
/// let mut d = gpu.stream().alloc_zeros::<bf16>(4 * 128 * 256)?;
/// gemm::matmul_bf16(
///     &gpu,
///     &kernels,
///     Matrix::new(&a, MatrixDesc::row_major(128, 64).with_batch(4, 128 * 64))?,
///     Matrix::new(&b, MatrixDesc::col_major(64, 256).with_batch(4, 0))?,
///     None,
///     MatrixMut::new(&mut d, MatrixDesc::row_major(128, 256).with_batch(4, 128 * 256))?,
///     1.0,
///     0.0,
/// )?;
/// # Ok::<(), baton_runtime::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn matmul_bf16<T: Bf16Storage>(
    gpu: &Gpu,
    kernels: &Kernels,
    a: Matrix<'_, T>,
    b: Matrix<'_, T>,
    c: Option<Matrix<'_, T>>,
    d: MatrixMut<'_, T>,
    alpha: f32,
    beta: f32,
) -> Result<()> {
    GemmPlan::from_views(gpu, kernels, a, b, c, d)?.run(gpu, alpha, beta)
}

/// Blockwise FP8 scales in device memory (f32, laid out as
/// [`fp8`] describes): a cudarc buffer or, for FFI, a raw
/// pointer. Packed, or for the A scales `[K/128, M]` with a row stride
/// ([`with_ld`](Self::with_ld)): DeepGEMM's TMA-aligned layout, a torch
/// tensor `[M, K/128]` with `stride(0) == 1`.
#[derive(Clone, Copy, Debug)]
pub struct Scales<'a> {
    address: u64,
    len: usize,
    /// Floats from one row to the next; `None`: packed.
    ld: Option<usize>,
    _data: PhantomData<&'a [f32]>,
}

impl<'a> Scales<'a> {
    /// The scales in `data` (a `CudaSlice<f32>` or `CudaView<f32>`).
    pub fn new<V: DevicePtr<f32>>(data: &'a V) -> Self {
        let (address, _sync) = data.device_ptr(data.stream());
        Self {
            address,
            len: data.len(),
            ld: None,
            _data: PhantomData,
        }
    }

    /// The same scales read as rows `ld` floats apart: for the A scales,
    /// row `kb` (K block `kb`) holds the M scales of that K block at
    /// `kb · ld`, `ld ≥ M`, and the buffer needs `(K/128 − 1) · ld + M`
    /// floats (any more are not read). They are read in place for any
    /// `ld` from a 16-byte aligned buffer, through a copy from one that is
    /// not ([`fp8::a_scales_copied`]). The B scales are read
    /// packed only ([`MatrixError::NotSupported`] otherwise).
    ///
    /// ```
    /// // SAFETY: never launched.
    /// let s = unsafe { baton_runtime::gemm::Scales::from_raw(0x1000, 3 * 68 + 66) }.with_ld(68);
    /// assert_eq!(s.ld(), Some(68));
    /// ```
    pub fn with_ld(self, ld: usize) -> Self {
        Self {
            ld: Some(ld),
            ..self
        }
    }

    /// The row stride given by [`with_ld`](Self::with_ld); `None`: packed.
    ///
    /// ```
    /// // SAFETY: never launched.
    /// let s = unsafe { baton_runtime::gemm::Scales::from_raw(0x1000, 8) };
    /// assert_eq!(s.ld(), None);
    /// ```
    pub fn ld(&self) -> Option<usize> {
        self.ld
    }

    /// `len` scales at device address `address`.
    ///
    /// # Safety
    /// As [`Matrix::from_raw`]: readable device memory of the `Gpu`'s
    /// context for all of `'a`, not written while GEMMs on it may run.
    ///
    /// ```
    /// // SAFETY: never launched.
    /// let s = unsafe { baton_runtime::gemm::Scales::from_raw(0x1000, 4) };
    /// assert_eq!(s.len(), 4);
    /// ```
    pub unsafe fn from_raw(address: u64, len: usize) -> Self {
        Self {
            address,
            len,
            ld: None,
            _data: PhantomData,
        }
    }

    /// Scales in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<'a> Fp8GemmPlan<'a> {
    /// The plan of the blockwise FP8 GEMM `D = (A ⊙ Sa)·(B ⊙ Sb)` over
    /// views: A M×K row-major and B K×N column-major e4m3 with any leading
    /// dimensions ([`FP8_LAYOUT_RULE`]), scales as in [`fp8::validate`]
    /// (`a_scales` `[K/128, M]`, packed or with a row stride:
    /// [`Scales::with_ld`]; `b_scales` `[⌈N/128⌉, K/128]` packed), D M×N
    /// row-major bf16; batch 1. Picks the kernel and split-K count as
    /// [`Fp8GemmPlan::new`] does (no split while the GPU's stream captures
    /// a graph; a split plan made outside a capture and run inside one
    /// needs [`set_split_k`](Fp8GemmPlan::set_split_k)`(gpu, 1)` first, or
    /// `run` refuses with [`GemmError::StreamKInGraph`]).
    ///
    /// Errors: the views' and the kernel's shape rules;
    /// [`Fp8ShapeError::ScaleStrideTooSmall`] / [`Fp8ShapeError::ScalesTooShort`]
    /// for strided A scales; [`GemmError::AScalesCopyInGraph`] for A scales
    /// whose base is not 16-byte aligned ([`fp8::a_scales_copied`]) while
    /// capturing.
    ///
    /// ```no_run
    /// use baton_runtime::{Gpu, Variant};
    /// use baton_runtime::gemm::{Scales, element::{bf16, E4M3}};
    /// use baton_runtime::gemm::fp8::{Fp8GemmPlan, scale_lens};
    /// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
    /// let gpu = Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(Variant::Release)?;
    /// let (m, n, k) = (256, 512, 1024);
    /// let (sa_len, sb_len) = scale_lens(m, n, k);
    /// let a = gpu.stream().alloc_zeros::<E4M3>(m * k)?;
    /// let b = gpu.stream().alloc_zeros::<E4M3>(n * k)?;
    /// let sa = gpu.stream().alloc_zeros::<f32>(sa_len)?;
    /// let sb = gpu.stream().alloc_zeros::<f32>(sb_len)?;
    /// let mut d = gpu.stream().alloc_zeros::<bf16>(m * n)?;
    /// let plan = Fp8GemmPlan::from_views(
    ///     &gpu,
    ///     &kernels,
    ///     Matrix::new(&a, MatrixDesc::row_major(m, k))?,
    ///     Matrix::new(&b, MatrixDesc::col_major(k, n))?,
    ///     Scales::new(&sa),
    ///     Scales::new(&sb),
    ///     MatrixMut::new(&mut d, MatrixDesc::row_major(m, n))?,
    /// )?;
    /// plan.run(&gpu)?;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn from_views<E: E4M3Storage, D: Bf16Storage>(
        gpu: &Gpu,
        kernels: &Kernels,
        a: Matrix<'a, E>,
        b: Matrix<'a, E>,
        a_scales: Scales<'a>,
        b_scales: Scales<'a>,
        d: MatrixMut<'a, D>,
    ) -> Result<Self> {
        a.check_as("A")?;
        b.check_as("B")?;
        d.check_as("D")?;
        let (ad, bd, dd) = (a.desc(), b.desc(), d.desc());
        check_shapes(ad, bd, None, dd)?;
        require_layout("A", ad, Layout::RowMajor, "FP8 e4m3", FP8_LAYOUT_RULE)?;
        require_layout("B", bd, Layout::ColMajor, "FP8 e4m3", FP8_LAYOUT_RULE)?;
        require_layout(
            "D",
            dd,
            Layout::RowMajor,
            "FP8 e4m3",
            "the blockwise FP8 GEMM writes D row-major (its scales are per row of A)",
        )?;
        if dd.batch != 1 {
            return Err(MatrixError::NotSupported {
                what: "batch > 1",
                gemm: "blockwise FP8 GEMM",
                allowed: "batch 1 (launch one plan per matrix)",
            }
            .into());
        }
        let (m, n, k) = (dd.rows, dd.cols, ad.cols);
        let a_scales = a_scales_operand(a_scales, b_scales, (m, n, k))?;
        let ops = Fp8Operands {
            a: row_major::<E>(a.address(), ad),
            b: row_major::<E>(b.address(), bd),
            a_scales,
            b_scales: b_scales.address,
            d: row_major::<D>(d.address(), dd),
        };
        // The kernel and split-K count of `Fp8GemmPlan::new`.
        let (kernel, cost) = fp8::plan_for_gpu(gpu, m, n, k);
        Self::for_operands(gpu, kernels, kernel, ops, (m, n, k))?
            .with_planned_split(gpu, cost.splits as u32)
    }
}

/// The A scales of an M×N×K blockwise FP8 GEMM as the kernel reads them
/// (`[K/128, M]`, rows `ld` apart), after the kernel's shape rules
/// ([`fp8::validate`]; lengths of A, B and D are the views' business) and
/// the scales' own: packed scales hold exactly their count, strided A
/// scales `ld ≥ M` and at least `(K/128 − 1) · ld + M` floats, B scales
/// packed.
fn a_scales_operand(
    a_scales: Scales<'_>,
    b_scales: Scales<'_>,
    (m, n, k): (usize, usize, usize),
) -> Result<RowMajorOperand> {
    let (sa_len, _) = fp8::scale_lens(m, n, k);
    let kb = k / fp8::SCALE_BLOCK;
    // A strided view is checked for its span below; `validate` sees it as
    // the packed count it stands for.
    let sa_as_packed = if a_scales.ld.is_some() {
        sa_len
    } else {
        a_scales.len
    };
    fp8::validate(m, n, k, m * k, n * k, sa_as_packed, b_scales.len, m * n)
        .map_err(Error::Fp8Shape)?;
    if b_scales.ld.is_some() {
        return Err(MatrixError::NotSupported {
            what: "a row stride on the B scales",
            gemm: "blockwise FP8 GEMM",
            allowed: "packed B scales [⌈N/128⌉, K/128] (the kernel reads them through a plain pointer)",
        }
        .into());
    }
    let ld = a_scales.ld.unwrap_or(m);
    if ld < m {
        return Err(Error::Fp8Shape(Fp8ShapeError::ScaleStrideTooSmall {
            ld,
            m,
        }));
    }
    let span = (kb - 1) * ld + m;
    if a_scales.len < span {
        return Err(Error::Fp8Shape(Fp8ShapeError::ScalesTooShort {
            needed: span,
            got: a_scales.len,
            ld,
        }));
    }
    Ok(RowMajorOperand {
        address: a_scales.address,
        elem: ElemType::F32,
        rows: kb as u64,
        cols: m as u64,
        ld: ld as u64,
        batch_stride: (kb * ld) as u64,
    })
}

/// One-shot blockwise FP8 GEMM over views on the GPU's stream
/// ([`Fp8GemmPlan::from_views`] then [`Fp8GemmPlan::run`]).
///
/// ```no_run
/// # use baton_runtime::{Gpu, Variant, gemm::{self, Scales, element::{bf16, E4M3}}};
/// # use baton_runtime::gemm::matrix::{Matrix, MatrixDesc, MatrixMut};
/// # let gpu = Gpu::new(0)?;
/// # let kernels = gpu.load_kernels(Variant::Release)?;
/// # let (m, n, k) = (128, 256, 256);
/// # let (sa_len, sb_len) = gemm::fp8::scale_lens(m, n, k);
/// # let a = gpu.stream().alloc_zeros::<E4M3>(m * k)?;
/// # let b = gpu.stream().alloc_zeros::<E4M3>(n * k)?;
/// # let sa = gpu.stream().alloc_zeros::<f32>(sa_len)?;
/// # let sb = gpu.stream().alloc_zeros::<f32>(sb_len)?;
/// # let mut d = gpu.stream().alloc_zeros::<bf16>(m * n)?;
/// gemm::matmul_fp8_blockwise(
///     &gpu,
///     &kernels,
///     Matrix::new(&a, MatrixDesc::row_major(m, k))?,
///     Matrix::new(&b, MatrixDesc::col_major(k, n))?,
///     Scales::new(&sa),
///     Scales::new(&sb),
///     MatrixMut::new(&mut d, MatrixDesc::row_major(m, n))?,
/// )?;
/// # Ok::<(), baton_runtime::Error>(())
/// ```
pub fn matmul_fp8_blockwise<E: E4M3Storage, D: Bf16Storage>(
    gpu: &Gpu,
    kernels: &Kernels,
    a: Matrix<'_, E>,
    b: Matrix<'_, E>,
    a_scales: Scales<'_>,
    b_scales: Scales<'_>,
    d: MatrixMut<'_, D>,
) -> Result<()> {
    Fp8GemmPlan::from_views(gpu, kernels, a, b, a_scales, b_scales, d)?.run(gpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::element::{E4M3, bf16};

    const BASE: u64 = 0x7f00_0000_0000;

    // SAFETY (all views below): never launched; views are plain data.
    fn view<T: Element>(address: u64, desc: MatrixDesc) -> Matrix<'static, T> {
        unsafe { Matrix::from_raw(address, desc.span().unwrap(), desc) }.unwrap()
    }
    fn view_mut<T: Element>(address: u64, desc: MatrixDesc) -> MatrixMut<'static, T> {
        unsafe { MatrixMut::from_raw(address, desc.span().unwrap(), desc) }.unwrap()
    }

    const A_AT: u64 = BASE;
    const B_AT: u64 = BASE + (1 << 24);
    const C_AT: u64 = BASE + (2 << 24);
    const D_AT: u64 = BASE + (3 << 24);

    fn ops(
        a: MatrixDesc,
        b: MatrixDesc,
        c: Option<MatrixDesc>,
        d: MatrixDesc,
    ) -> Result<(Bf16Operands, (usize, usize, usize))> {
        let c = c.map(|c| view::<bf16>(C_AT, c));
        bf16_operands(
            &view::<bf16>(A_AT, a),
            &view::<bf16>(B_AT, b),
            c.as_ref(),
            &view_mut::<bf16>(D_AT, d),
        )
    }

    // SAFETY (scales below): never launched.
    fn scales(address: u64, len: usize) -> Scales<'static> {
        unsafe { Scales::from_raw(address, len) }
    }

    #[test]
    fn a_scales_packed_or_strided_become_the_rows_the_kernel_reads() {
        // M = 66, K = 512 (4 K blocks), N = 200 (2 B-scale rows).
        let (m, n, k) = (66, 200, 512);
        let sb = scales(B_AT, 2 * 4);
        // Packed: exactly K/128 · M floats, rows M apart.
        let o = a_scales_operand(scales(A_AT, 4 * 66), sb, (m, n, k)).unwrap();
        assert_eq!((o.address, o.rows, o.cols, o.ld), (A_AT, 4, 66, 66));
        assert!(
            !fp8::a_scales_copied(o.address),
            "264-byte rows: read in place (one vector)"
        );
        assert!(
            fp8::a_scales_copied(o.address + 4),
            "a base mid-granule: copied"
        );
        // DeepGEMM's layout: rows 68 apart, the last row only M long.
        let o = a_scales_operand(scales(A_AT, 3 * 68 + 66).with_ld(68), sb, (m, n, k)).unwrap();
        assert_eq!((o.rows, o.cols, o.ld), (4, 66, 68));
        assert_eq!(o.span_bytes(1), 4 * (3 * 68 + 66));
        assert!(!fp8::a_scales_copied(o.address), "read in place");
        // A longer buffer (a torch tensor's storage) is fine.
        assert!(a_scales_operand(scales(A_AT, 4 * 68).with_ld(68), sb, (m, n, k)).is_ok());
    }

    #[test]
    fn a_scale_refusals_name_the_rule() {
        let (m, n, k) = (66, 200, 512);
        let sb = scales(B_AT, 8);
        let err = |sa, sb| a_scales_operand(sa, sb, (m, n, k)).unwrap_err();
        // Packed scales keep the exact count.
        assert!(matches!(
            err(scales(A_AT, 4 * 66 + 1), sb),
            Error::Fp8Shape(Fp8ShapeError::WrongLength {
                operand: "A scales",
                expected: 264,
                got: 265
            })
        ));
        let e = err(scales(A_AT, 4 * 64).with_ld(64), sb);
        assert!(matches!(
            e,
            Error::Fp8Shape(Fp8ShapeError::ScaleStrideTooSmall { ld: 64, m: 66 })
        ));
        assert!(e.to_string().contains("ld >= M"), "{e}");
        let e = err(scales(A_AT, 3 * 68 + 65).with_ld(68), sb);
        assert!(matches!(
            e,
            Error::Fp8Shape(Fp8ShapeError::ScalesTooShort {
                needed: 270,
                got: 269,
                ld: 68
            })
        ));
        assert!(e.to_string().contains("(K/128 - 1) * ld + M"), "{e}");
        let e = err(scales(A_AT, 4 * 68).with_ld(68), scales(B_AT, 8).with_ld(4));
        assert!(
            matches!(e, Error::Matrix(MatrixError::NotSupported { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("packed B scales"), "{e}");
        // The kernel's shape rules come first.
        assert!(matches!(
            a_scales_operand(scales(A_AT, 4 * 68).with_ld(68), sb, (m, n, 500)).unwrap_err(),
            Error::Fp8Shape(Fp8ShapeError::KNotMultipleOf128 { k: 500 })
        ));
    }

    #[test]
    fn row_major_d_maps_views_straight() {
        let (m, n, k) = (100, 40, 72);
        let (o, mnk) = ops(
            MatrixDesc::row_major(m, k).with_ld(80),
            MatrixDesc::col_major(k, n).with_ld(96),
            Some(MatrixDesc::row_major(m, n).with_ld(48)),
            MatrixDesc::row_major(m, n).with_ld(56).with_batch(1, 0),
        )
        .unwrap();
        assert_eq!(mnk, (m, n, k));
        assert_eq!((o.a.rows, o.a.cols, o.a.ld), (100, 72, 80));
        assert_eq!(
            (o.b.rows, o.b.cols, o.b.ld, o.b.address),
            (40, 72, 96, B_AT)
        );
        assert_eq!(o.c.unwrap().ld, 48);
        assert_eq!((o.d.rows, o.d.cols, o.d.ld), (100, 40, 56));
    }

    #[test]
    fn column_major_d_swaps_a_and_b() {
        let (m, n, k) = (24, 40, 64);
        let (o, mnk) = ops(
            MatrixDesc::row_major(m, k).with_batch(3, m * k),
            MatrixDesc::col_major(k, n).with_batch(3, 0),
            None,
            MatrixDesc::col_major(m, n).with_batch(3, m * n),
        )
        .unwrap();
        assert_eq!(mnk, (n, m, k));
        assert_eq!((o.a.address, o.a.rows, o.a.batch_stride), (B_AT, 40, 0));
        assert_eq!((o.b.address, o.b.rows), (A_AT, 24));
        assert_eq!((o.d.rows, o.d.cols, o.d.ld, o.batch), (40, 24, 24, 3));
    }

    #[test]
    fn refusals_name_the_rule() {
        let (m, n, k) = (16, 16, 32);
        let a = MatrixDesc::row_major(m, k);
        let b = MatrixDesc::col_major(k, n);
        let d = MatrixDesc::row_major(m, n);
        let err = |r: Result<_>| match r {
            Err(Error::Matrix(e)) => e,
            Err(e) => panic!("not a matrix error: {e}"),
            Ok(_) => panic!("accepted"),
        };
        let e = err(ops(a, MatrixDesc::col_major(k + 8, n), None, d));
        assert!(matches!(e, MatrixError::ShapeMismatch { .. }), "{e}");
        let e = err(ops(a, b, None, MatrixDesc::row_major(m, n + 8)));
        assert!(matches!(e, MatrixError::ShapeMismatch { .. }), "{e}");
        let e = err(ops(a.with_batch(2, m * k), b, None, d));
        assert_eq!(
            e,
            MatrixError::BatchMismatch {
                operand: "A",
                expected: 1,
                got: 2
            }
        );
        let e = err(ops(a, b, Some(MatrixDesc::col_major(m, n)), d));
        assert_eq!(
            e,
            MatrixError::CLayoutDiffers {
                c: Layout::ColMajor,
                d: Layout::RowMajor
            }
        );
    }

    #[test]
    fn mn_major_operands_map_to_their_layouts() {
        let (m, n, k) = (96, 40, 72);
        // Column-major A (ld 104 ≥ M), row-major K×N B (ld 48 ≥ N).
        let a = MatrixDesc::col_major(m, k).with_ld(104);
        let b = MatrixDesc::row_major(k, n).with_ld(48);
        let (o, mnk) = ops(a, b, None, MatrixDesc::row_major(m, n)).unwrap();
        assert_eq!(mnk, (m, n, k));
        assert_eq!(
            o.layouts,
            Bf16Layouts {
                a_m_major: true,
                b_n_major: true
            }
        );
        // Stored K×M and K×N row-major: what the MN-major entries read.
        assert_eq!((o.a.rows, o.a.cols, o.a.ld), (72, 96, 104));
        assert_eq!((o.b.rows, o.b.cols, o.b.ld), (72, 40, 48));
        // One of each, column-major D: Dᵀ = Bᵀ·Aᵀ swaps the buffers and
        // which operand is MN-major.
        let (o, mnk) = ops(
            a,
            MatrixDesc::col_major(k, n),
            None,
            MatrixDesc::col_major(m, n).with_ld(104),
        )
        .unwrap();
        assert_eq!(mnk, (n, m, k));
        assert_eq!(
            o.layouts,
            Bf16Layouts {
                a_m_major: false,
                b_n_major: true
            }
        );
        assert_eq!((o.a.address, o.b.address), (B_AT, A_AT));
        // FP8 still refuses them, naming the rule.
        let e = require_layout("A", &a, Layout::RowMajor, "FP8 e4m3", FP8_LAYOUT_RULE).unwrap_err();
        assert!(e.to_string().contains("K-major on Hopper"), "{e}");
    }

    #[test]
    fn d_may_be_c_but_not_overlap_it_otherwise() {
        let d = MatrixDesc::row_major(16, 16);
        let a = view::<bf16>(A_AT, MatrixDesc::row_major(16, 32));
        let b = view::<bf16>(B_AT, MatrixDesc::col_major(32, 16));
        let out = view_mut::<bf16>(D_AT, d);
        let same_c = view::<bf16>(D_AT, d);
        assert!(bf16_operands(&a, &b, Some(&same_c), &out).is_ok());
        let shifted_c = view::<bf16>(D_AT + 32, d);
        assert!(matches!(
            bf16_operands(&a, &b, Some(&shifted_c), &out),
            Err(Error::Gemm(GemmError::OutputOverlapsInput { .. }))
        ));
    }

    #[test]
    fn views_are_rechecked_under_their_gemm_names() {
        // A view made as "A" but used as B names B.
        let b = view::<bf16>(B_AT, MatrixDesc::col_major(32, 16));
        assert_eq!(b.check_as("B"), Ok(()));
        let e8 = view::<E4M3>(A_AT, MatrixDesc::row_major(16, 16));
        assert_eq!(e8.desc().ld, 16);
    }
}
