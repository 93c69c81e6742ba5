//! cuBLASLt references for the blockwise FP8 GEMM ([`baton_runtime::gemm::fp8`]):
//! blockwise-scaled FP8 (`CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F` for A,
//! `BLK128x128_32F` for B) and tensorwise FP8 (one f32 scale per operand,
//! fast accumulation: the scaling work skipped), through cudarc's cuBLASLt
//! bindings.
//!
//! cuBLASLt is column-major and runs FP8 only as "TN": its A is our A
//! (M×K row-major = K×M column-major, transposed), its B our B (N×K
//! row-major = K×N column-major). Its D is therefore M×N **column-major**
//! (`D[i + j·M]`), the transpose of our row-major D; compare accordingly.
//! The scale tensors are ours as they are: A scales `[K/128, M]` (M
//! contiguous), B scales `[N/128, K/128]`. cuBLASLt wants M and K/128 to
//! be multiples of 4 (16-byte scale rows); [`LtFp8Plan::new`] refuses the
//! rest.

use crate::cold_inputs;
use crate::gemm_check::Comparison;
use crate::gemm_fp8_check::{POISON_BF16, random_e4m3, random_scales};
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use crate::{Error, Result};
use baton_runtime::gemm::bf16_to_f32;
use baton_runtime::gemm::fp8::{
    Fp8GemmPlan, SCALE_BLOCK, gemm_fp8_blockwise, scale_lens, validate,
};
use baton_runtime::{Gpu, Kernels};
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as ls;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::ffi::c_void;

/// Which cuBLASLt FP8 GEMM to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtScaling {
    /// 1×128 A scales and 128×128 B scales (the operation ours computes).
    Blockwise,
    /// One scale per operand (the first element of each scale buffer),
    /// `CUBLASLT_MATMUL_DESC_FAST_ACCUM` on: the tensor-core ceiling.
    Tensorwise,
}

impl LtScaling {
    /// The GEMM in words, for messages.
    ///
    /// ```
    /// use baton_reference::gemm_fp8_ref::LtScaling;
    /// assert_eq!(LtScaling::Blockwise.name(), "blockwise FP8");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            LtScaling::Blockwise => "blockwise FP8",
            LtScaling::Tensorwise => "tensorwise FP8",
        }
    }
}

/// Workspace cuBLASLt may use (NVIDIA's recommendation on Hopper).
const WORKSPACE_BYTES: usize = 32 << 20;

/// A cuBLASLt FP8 matmul bound to its operands: descriptors built and the
/// algorithm chosen once, so [`run`](Self::run) only enqueues the matmul.
pub struct LtFp8Plan<'a> {
    handle: ls::cublasLtHandle_t,
    desc: ls::cublasLtMatmulDesc_t,
    layouts: [ls::cublasLtMatrixLayout_t; 3],
    algo: ls::cublasLtMatmulAlgo_t,
    workspace: CudaSlice<u8>,
    ptrs: (u64, u64, u64),
    _operands: std::marker::PhantomData<(&'a CudaSlice<u8>, &'a mut CudaSlice<u16>)>,
}

fn lt_err(call: &'static str) -> impl Fn(lt::CublasError) -> Error {
    move |status| Error::CublasLt { call, status }
}

impl<'a> LtFp8Plan<'a> {
    /// Validates like ours (plus M and K/128 multiples of 4), builds the
    /// descriptors for `D (column-major M×N) = A · Bᵀ` with `scaling`, and
    /// asks cuBLASLt for its best algorithm.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        scaling: LtScaling,
        a: &'a CudaSlice<u8>,
        b: &'a CudaSlice<u8>,
        a_scales: &'a CudaSlice<f32>,
        b_scales: &'a CudaSlice<f32>,
        d: &'a mut CudaSlice<u16>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        validate(
            m,
            n,
            k,
            a.len(),
            b.len(),
            a_scales.len(),
            b_scales.len(),
            d.len(),
        )
        .map_err(baton_runtime::Error::Fp8Shape)?;
        if !m.is_multiple_of(4) || !(k / SCALE_BLOCK).is_multiple_of(4) {
            return Err(Error::LtBlockwiseShape { m, k });
        }
        let stream = gpu.stream();
        let (a_ptr, _s0) = a.device_ptr(stream);
        let (b_ptr, _s1) = b.device_ptr(stream);
        let (sa_ptr, _s2) = a_scales.device_ptr(stream);
        let (sb_ptr, _s3) = b_scales.device_ptr(stream);
        let d_ptr = {
            let (p, _s) = d.device_ptr_mut(stream);
            p
        };
        let workspace = stream.alloc_zeros::<u8>(WORKSPACE_BYTES)?;
        let handle = lt::create_handle().map_err(lt_err("create"))?;
        // From here on, Drop releases whatever was created.
        let mut plan = Self {
            handle,
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 3],
            // SAFETY: plain data, overwritten by the heuristic below.
            algo: unsafe { std::mem::zeroed() },
            workspace,
            ptrs: (a_ptr, b_ptr, d_ptr),
            _operands: std::marker::PhantomData,
        };
        plan.desc = lt::create_matmul_desc(
            ls::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ls::cudaDataType::CUDA_R_32F,
        )
        .map_err(lt_err("matmul desc"))?;
        use ls::cublasLtMatmulDescAttributes_t as A;
        let set = |attr: A, v: *const c_void, size: usize| {
            // SAFETY: `plan.desc` is live; `v` points at `size` bytes.
            unsafe { lt::set_matmul_desc_attribute(plan.desc, attr, v, size) }
                .map_err(lt_err("set matmul attribute"))
        };
        let (t, nop) = (1i32, 0i32);
        set(A::CUBLASLT_MATMUL_DESC_TRANSA, (&t as *const i32).cast(), 4)?;
        set(
            A::CUBLASLT_MATMUL_DESC_TRANSB,
            (&nop as *const i32).cast(),
            4,
        )?;
        let (sa_p, sb_p) = (sa_ptr as *const c_void, sb_ptr as *const c_void);
        set(
            A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
            (&sa_p as *const *const c_void).cast(),
            8,
        )?;
        set(
            A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
            (&sb_p as *const *const c_void).cast(),
            8,
        )?;
        match scaling {
            LtScaling::Blockwise => {
                let am = ls::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
                let bm =
                    ls::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
                set(
                    A::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                    &am as *const _ as *const c_void,
                    4,
                )?;
                set(
                    A::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                    &bm as *const _ as *const c_void,
                    4,
                )?;
            }
            LtScaling::Tensorwise => {
                let fast = 1i8;
                set(
                    A::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                    (&fast as *const i8).cast(),
                    1,
                )?;
            }
        }
        let e4m3 = ls::cudaDataType::CUDA_R_8F_E4M3;
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        plan.layouts[0] =
            lt::create_matrix_layout(e4m3, k64, m64, k as i64).map_err(lt_err("layout A"))?;
        plan.layouts[1] =
            lt::create_matrix_layout(e4m3, k64, n64, k as i64).map_err(lt_err("layout B"))?;
        plan.layouts[2] =
            lt::create_matrix_layout(ls::cudaDataType::CUDA_R_16BF, m64, n64, m as i64)
                .map_err(lt_err("layout D"))?;
        let pref = lt::create_matmul_pref().map_err(lt_err("preference"))?;
        let ws = WORKSPACE_BYTES;
        // SAFETY: `pref` is live; the attribute is a size_t.
        let heuristic = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                ls::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&ws as *const usize).cast(),
                std::mem::size_of::<usize>(),
            )
            .and_then(|()| {
                lt::get_matmul_algo_heuristic(
                    plan.handle,
                    plan.desc,
                    plan.layouts[0],
                    plan.layouts[1],
                    plan.layouts[2],
                    plan.layouts[2],
                    pref,
                )
            })
        };
        // SAFETY: created above, not used after.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        plan.algo = heuristic
            .map_err(|status| Error::CublasLtNoAlgorithm {
                gemm: scaling.name(),
                mnk: (m, n, k),
                status,
            })?
            .algo;
        Ok(plan)
    }

    /// Enqueues `D = A · Bᵀ` (column-major D) on the GPU's stream.
    pub fn run(&self, gpu: &Gpu) -> Result<()> {
        let (alpha, beta) = (1f32, 0f32);
        let (a, b, d) = self.ptrs;
        let stream = gpu.stream();
        let (ws, _s) = self.workspace.device_ptr(stream);
        // SAFETY: descriptors, algorithm and workspace are live; the
        // operand pointers name buffers validated in `new` and borrowed for
        // the plan's lifetime.
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                a as *const c_void,
                self.layouts[0],
                b as *const c_void,
                self.layouts[1],
                d as *const c_void,
                self.layouts[2],
                d as *mut c_void,
                self.layouts[2],
                &self.algo,
                ws as *mut c_void,
                WORKSPACE_BYTES,
                stream.cu_stream() as ls::cudaStream_t,
            )
        }
        .map_err(lt_err("matmul"))
    }
}

impl Drop for LtFp8Plan<'_> {
    fn drop(&mut self) {
        // SAFETY: each handle was created by this plan (or is null) and is
        // destroyed once.
        unsafe {
            for l in self.layouts {
                if !l.is_null() {
                    let _ = lt::destroy_matrix_layout(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}

/// Our D (row-major) against cuBLASLt's (column-major), as f64.
pub(crate) fn transposed_f64(d_colmajor: &[u16], m: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0f64; m * n];
    for j in 0..n {
        for i in 0..m {
            out[i * n + j] = bf16_to_f32(d_colmajor[i + j * m]) as f64;
        }
    }
    out
}

/// Random operands of an `m×n×k` problem on the GPU: e4m3 A and B, scales
/// (random, unequal, sized for an O(1) output) and a poisoned D.
pub struct Fp8Operands {
    /// A, M×K e4m3.
    pub a: CudaSlice<u8>,
    /// B, N×K e4m3.
    pub b: CudaSlice<u8>,
    /// A scales, `[K/128, M]`.
    pub a_scales: CudaSlice<f32>,
    /// B scales, `[⌈N/128⌉, K/128]`.
    pub b_scales: CudaSlice<f32>,
}

impl Fp8Operands {
    /// Fresh random operands.
    pub fn random(gpu: &Gpu, (m, n, k): (usize, usize, usize), rng: &mut XorShift) -> Result<Self> {
        let stream = gpu.stream();
        let (sa_len, sb_len) = scale_lens(m, n, k);
        let norm = 1.0 / (448.0 * (k as f32).sqrt());
        Ok(Self {
            a: stream.clone_htod(&random_e4m3(m * k, 448.0, rng))?,
            b: stream.clone_htod(&random_e4m3(n * k, 448.0, rng))?,
            a_scales: stream.clone_htod(&random_scales(sa_len, rng))?,
            b_scales: stream.clone_htod(
                &random_scales(sb_len, rng)
                    .into_iter()
                    .map(|s| s * norm)
                    .collect::<Vec<_>>(),
            )?,
        })
    }

    /// A copy at other device addresses (device to device): the same
    /// values, other L2 lines ([`crate::cold_inputs`]).
    pub fn copy(&self, gpu: &Gpu) -> Result<Self> {
        let stream = gpu.stream();
        Ok(Self {
            a: stream.clone_dtod(&self.a)?,
            b: stream.clone_dtod(&self.b)?,
            a_scales: stream.clone_dtod(&self.a_scales)?,
            b_scales: stream.clone_dtod(&self.b_scales)?,
        })
    }

    /// Bytes one GEMM reads of these operands (A, B and both scales).
    pub fn read_bytes(&self) -> usize {
        self.a.len() + self.b.len() + 4 * (self.a_scales.len() + self.b_scales.len())
    }
}

/// Runs ours and cuBLASLt's blockwise FP8 GEMM on the same fresh random
/// operands (poisoned outputs) and compares ours with cuBLASLt's result.
pub fn check_vs_cublaslt(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
) -> Result<Comparison> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let ops = Fp8Operands::random(gpu, (m, n, k), &mut rng)?;
    let stream = gpu.stream();
    let mut d_ours = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let mut d_lt = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    gemm_fp8_blockwise(
        gpu,
        kernels,
        &ops.a,
        &ops.b,
        &ops.a_scales,
        &ops.b_scales,
        &mut d_ours,
        (m, n, k),
    )?;
    LtFp8Plan::new(
        gpu,
        LtScaling::Blockwise,
        &ops.a,
        &ops.b,
        &ops.a_scales,
        &ops.b_scales,
        &mut d_lt,
        (m, n, k),
    )?
    .run(gpu)?;
    gpu.synchronize()?;
    let theirs = transposed_f64(&stream.clone_dtoh(&d_lt)?, m, n);
    if let Some(i) = theirs.iter().position(|x| !x.is_finite()) {
        return Err(Error::NonFiniteReference {
            reference: "cuBLASLt",
            gemm: LtScaling::Blockwise.name(),
            row: i / n,
            col: i % n,
            value: theirs[i],
        });
    }
    Ok(Comparison::new(&stream.clone_dtoh(&d_ours)?, &theirs))
}

/// Median times (ms) of one shape: ours, cuBLASLt blockwise, cuBLASLt
/// tensorwise (fast accumulation).
#[derive(Clone, Debug)]
pub struct Fp8BenchRow {
    /// (M, N, K).
    pub mnk: (usize, usize, usize),
    /// CTAs ours launched.
    pub grid: u32,
    /// The kernel ours launched (chosen by `baton_runtime::gemm::fp8::choose`).
    pub kernel: &'static str,
    /// Stream-K minimum segment, when on.
    pub stream_k: Option<(u32, u32)>,
    /// Workers per work unit when ours ran split-K (the heuristic's count
    /// or a forced one); `None` for whole units or stream-K.
    pub split_k: Option<u32>,
    /// Ours, ms.
    pub ours_ms: f64,
    /// cuBLASLt blockwise, ms.
    pub blockwise_ms: f64,
    /// cuBLASLt tensorwise, ms.
    pub tensorwise_ms: f64,
    /// Ours vs cuBLASLt blockwise on the same operands, checked before
    /// timing (infinite when ours has a NaN).
    pub check: Comparison,
}

impl Fp8BenchRow {
    /// TFLOP/s of a time in ms.
    pub fn tflops(&self, ms: f64) -> f64 {
        let (m, n, k) = self.mnk;
        2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12
    }
}

/// The kernel and split-K count that [`bench_shape`] runs: the heuristic's
/// (what `Fp8GemmPlan::new` runs), unless a kernel, a split count or
/// stream-K is forced.
fn kernel_and_split<'k>(
    gpu: &Gpu,
    (m, n, k): (usize, usize, usize),
    kernel: Option<&'k str>,
    (stream_k, forced_split): (Option<(u32, u32)>, Option<u32>),
) -> (&'k str, Option<u32>) {
    match kernel {
        Some(kernel) => (kernel, forced_split),
        // A forced count on the heuristic's kernel (a 256×128 pick runs
        // its stream-K twin, as a split plan of `fp8::plan` does).
        None if forced_split.is_some() => {
            let kernel = baton_runtime::gemm::fp8::plan_for_gpu(gpu, m, n, k).0;
            let kernel = baton_runtime::gemm::fp8::stream_k_kernel_of(kernel).unwrap_or(kernel);
            (kernel, forced_split)
        }
        None => {
            let (kernel, cost) = baton_runtime::gemm::fp8::plan_for_gpu(gpu, m, n, k);
            // Forced stream-K runs the tile's stream-K kernel (256x128's twin).
            let kernel = match stream_k {
                Some(_) => baton_runtime::gemm::fp8::stream_k_kernel_of(kernel).unwrap_or(kernel),
                None => kernel,
            };
            let split = (cost.splits > 1 && stream_k.is_none()).then_some(cost.splits as u32);
            (kernel, split)
        }
    }
}

/// One traced FP8 launch beside cuBLASLt blockwise ([`trace_shape`]).
pub struct Fp8TraceRow {
    /// Our kernel, its split-K count (1: whole tiles) and CTAs.
    pub plan: (&'static str, u32, u32),
    /// Our median time over the queued repetitions, ms.
    pub ours_ms: f64,
    /// cuBLASLt blockwise's median time over the same repetitions, ms.
    pub blockwise_ms: f64,
    /// The traced launch's own event time, ms (after a cuBLASLt launch, as
    /// in the repetitions).
    pub traced_ms: f64,
    /// The traced launch's timeline. The FP8 main loops record no
    /// first-full or main-loop-done events (a stamp there costs spills).
    pub timeline: baton_runtime::trace::Timeline,
}

/// Times ours and cuBLASLt blockwise as [`bench_shape`] does (cold inputs
/// rotated, queued, `reps` each, medians), then traces one more launch of
/// ours, enqueued after a cuBLASLt launch like every timed one: zero the
/// trace array, cuBLASLt, ours between its events. With `hot`, each runs
/// on one input set (operands L2-resident as far as they fit). `kernel`
/// and `split_k` force ours as in [`bench_shape`]. `kernels` must be a
/// traced module (`BATON_TRACE=1`); otherwise [`Error::NotTraced`].
pub fn trace_shape(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    kernel: Option<&str>,
    split_k: Option<u32>,
    reps: usize,
    hot: bool,
) -> Result<Fp8TraceRow> {
    let Some(trace) = baton_runtime::trace::TraceBuffer::of(kernels)? else {
        return Err(Error::NotTraced);
    };
    let mnk = (m, n, k);
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let first = Fp8Operands::random(gpu, mnk, &mut rng)?;
    let sets = match hot {
        true => 1,
        false => cold_inputs::sets_per_library(first.read_bytes(), cold_inputs::l2_bytes(gpu)),
    };
    let mut ours_in = InputSets::copies(gpu, &first, m, n, sets)?;
    let mut block_in = InputSets::copies(gpu, &first, m, n, sets)?;
    drop(first);
    let (kernel, split_k) = kernel_and_split(gpu, mnk, kernel, (None, split_k));
    let ours = ours_in.ours_plans(gpu, kernels, mnk, kernel, (None, split_k))?;
    let block = block_in.lt_plans(gpu, LtScaling::Blockwise, mnk)?;
    let warmup = cold_inputs::warmup_launches(sets);
    let total = reps + warmup;
    let mut timer = QueuedTimer::<3>::new();
    for rep in 0..=total {
        let i = rep % sets;
        if rep == total {
            trace.clear(gpu)?;
        }
        timer.time(gpu, 1, || block[i].run(gpu))?;
        let slot = if rep == total { 2 } else { 0 };
        timer.time(gpu, slot, || ours[i].run(gpu))?;
    }
    let timeline = trace.read(gpu)?;
    let [t_ours, t_block, traced] = timer.finish(gpu, 0)?;
    Ok(Fp8TraceRow {
        plan: (
            ours[0].kernel_name(),
            ours[0].split_k().unwrap_or(1),
            ours[0].grid(),
        ),
        ours_ms: median(t_ours.into_iter().skip(warmup).collect()),
        blockwise_ms: median(t_block.into_iter().skip(warmup).collect()),
        traced_ms: traced.first().copied().unwrap_or(f64::NAN),
        timeline,
    })
}

/// Our plan of [`bench_shape`]: `kernel`, stream-K or split-K as given.
fn ours_plan<'a>(
    gpu: &Gpu,
    kernels: &Kernels,
    ops: &'a Fp8Operands,
    d: &'a mut CudaSlice<u16>,
    mnk: (usize, usize, usize),
    kernel: &str,
    (stream_k, split_k): (Option<(u32, u32)>, Option<u32>),
) -> Result<Fp8GemmPlan<'a>> {
    let mut ours = Fp8GemmPlan::with_kernel(
        gpu,
        kernels,
        kernel,
        &ops.a,
        &ops.b,
        &ops.a_scales,
        &ops.b_scales,
        d,
        mnk,
    )?;
    ours.set_stream_k(gpu, stream_k.map(|(s, _)| s))?;
    if let Some((_, waves)) = stream_k {
        ours.set_stream_k_extra_waves(waves)?;
    }
    if let Some(splits) = split_k {
        ours.set_split_k(gpu, splits)?;
    }
    Ok(ours)
}

/// A cuBLASLt plan of [`bench_shape`] on `ops`, writing `d`.
fn lt_plan<'a>(
    gpu: &Gpu,
    scaling: LtScaling,
    ops: &'a Fp8Operands,
    d: &'a mut CudaSlice<u16>,
    mnk: (usize, usize, usize),
) -> Result<LtFp8Plan<'a>> {
    LtFp8Plan::new(
        gpu,
        scaling,
        &ops.a,
        &ops.b,
        &ops.a_scales,
        &ops.b_scales,
        d,
        mnk,
    )
}

/// One library's input sets in [`bench_shape`]: operands and D per set.
struct InputSets {
    ops: Vec<Fp8Operands>,
    d: Vec<CudaSlice<u16>>,
}

impl InputSets {
    /// Our plan on every set (`kernel`, stream-K or split-K as given).
    fn ours_plans(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        mnk: (usize, usize, usize),
        kernel: &str,
        tuning: (Option<(u32, u32)>, Option<u32>),
    ) -> Result<Vec<Fp8GemmPlan<'_>>> {
        self.ops
            .iter()
            .zip(self.d.iter_mut())
            .map(|(o, d)| ours_plan(gpu, kernels, o, d, mnk, kernel, tuning))
            .collect()
    }

    /// A cuBLASLt plan of `scaling` on every set.
    fn lt_plans(
        &mut self,
        gpu: &Gpu,
        scaling: LtScaling,
        mnk: (usize, usize, usize),
    ) -> Result<Vec<LtFp8Plan<'_>>> {
        self.ops
            .iter()
            .zip(self.d.iter_mut())
            .map(|(o, d)| lt_plan(gpu, scaling, o, d, mnk))
            .collect()
    }

    /// `sets` copies of `first` (other addresses), each with its own
    /// NaN-poisoned D.
    fn copies(gpu: &Gpu, first: &Fp8Operands, m: usize, n: usize, sets: usize) -> Result<Self> {
        let poison = vec![POISON_BF16; m * n];
        let mut s = Self {
            ops: Vec::with_capacity(sets),
            d: Vec::with_capacity(sets),
        };
        for _ in 0..sets {
            s.ops.push(first.copy(gpu)?);
            s.d.push(gpu.stream().clone_htod(&poison)?);
        }
        Ok(s)
    }
}

/// Runs ours and cuBLASLt blockwise once and compares the outputs
/// ([`Fp8BenchRow::check`]), then times ours and both cuBLASLt FP8 GEMMs,
/// interleaved per repetition (event-timed after warm-up), medians of
/// `reps`. `kernel` forces one of the FP8 kernel variants (default: the
/// heuristic's choice and split-K count, `fp8::plan`);
/// `stream_k = Some((min_segment, extra_waves))` turns stream-K on
/// ([`Fp8GemmPlan::set_stream_k`],
/// [`Fp8GemmPlan::set_stream_k_extra_waves`]); `split_k = Some(n)` runs
/// each work unit's K blocks on `n` workers ([`Fp8GemmPlan::set_split_k`];
/// with a forced `kernel` that kernel's, else instead of the heuristic's
/// count on its kernel; `Some(1)`: whole units). A count the kernel or the
/// problem does not allow is the plan's typed error
/// (`GemmError::SplitKCount`, or the kernel's lack of split-K).
///
/// Each of the three reads cold operands: each rotates through its own
/// copies of the random operands, enough that a rotation reads more than
/// twice the L2 cache ([`crate::cold_inputs`], which says why this and not
/// an L2 flush). Until session 10 all three read one set, so the two
/// cuBLASLt GEMMs found what ours had just read in L2.
pub fn bench_shape(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    kernel: Option<&str>,
    (stream_k, forced_split): (Option<(u32, u32)>, Option<u32>),
    reps: usize,
    mut progress: impl FnMut(),
) -> Result<Fp8BenchRow> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let first = Fp8Operands::random(gpu, (m, n, k), &mut rng)?;
    let sets = cold_inputs::sets_per_library(first.read_bytes(), cold_inputs::l2_bytes(gpu));
    let mut ours_in = InputSets::copies(gpu, &first, m, n, sets)?;
    let mut block_in = InputSets::copies(gpu, &first, m, n, sets)?;
    let mut tensor_in = InputSets::copies(gpu, &first, m, n, sets)?;
    drop(first);
    let stream = gpu.stream();
    let mnk = (m, n, k);
    let (kernel, split_k) = kernel_and_split(gpu, mnk, kernel, (stream_k, forced_split));
    let tuning = (stream_k, split_k);
    // Verify before timing (D poisoned): ours against cuBLASLt blockwise,
    // each on its first set (the same values).
    ours_plan(
        gpu,
        kernels,
        &ours_in.ops[0],
        &mut ours_in.d[0],
        mnk,
        kernel,
        tuning,
    )?
    .run(gpu)?;
    lt_plan(
        gpu,
        LtScaling::Blockwise,
        &block_in.ops[0],
        &mut block_in.d[0],
        mnk,
    )?
    .run(gpu)?;
    gpu.synchronize()?;
    // cuBLASLt writes D column-major (as in `check_vs_cublaslt`).
    let theirs = transposed_f64(&stream.clone_dtoh(&block_in.d[0])?, m, n);
    let check = Comparison::new(&stream.clone_dtoh(&ours_in.d[0])?, &theirs);
    drop(theirs);
    let ours = ours_in.ours_plans(gpu, kernels, mnk, kernel, tuning)?;
    let block = block_in.lt_plans(gpu, LtScaling::Blockwise, mnk)?;
    let tensor = tensor_in.lt_plans(gpu, LtScaling::Tensorwise, mnk)?;
    // Queued back to back, each launch between its own events (see
    // `timing`): no side's host launch overhead is timed.
    let warmup = cold_inputs::warmup_launches(sets);
    let mut timer = QueuedTimer::<3>::new();
    for rep in 0..reps + warmup {
        let i = rep % sets;
        timer.time(gpu, 0, || ours[i].run(gpu))?;
        timer.time(gpu, 1, || block[i].run(gpu))?;
        timer.time(gpu, 2, || tensor[i].run(gpu))?;
        if rep >= warmup {
            progress();
        }
    }
    let [t_ours, t_block, t_tensor] = timer.finish(gpu, warmup)?;
    Ok(Fp8BenchRow {
        mnk,
        grid: ours[0].grid(),
        kernel: ours[0].kernel_name(),
        // Split-K runs as stream-K with 1-block segments, no extra waves.
        stream_k: stream_k
            .filter(|_| ours[0].stream_k().is_some())
            .or(ours[0].split_k().map(|_| (1, 0))),
        split_k: ours[0].split_k(),
        ours_ms: median(t_ours),
        blockwise_ms: median(t_block),
        tensorwise_ms: median(t_tensor),
        check,
    })
}
