//! The BF16 GEMM beside cuBLAS (`cublasGemmEx`, bf16 in/out, fp32
//! compute): the cuBLAS call, the check of ours against it and the
//! side-by-side benchmark (`baton bench gemm`). Behind the `cublas` feature.

use crate::cold_inputs;
use crate::gemm_check::{Comparison, GemmTuning, POISON_BF16, plan, random_bf16};
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use crate::{Error, Result};
use baton_runtime::gemm::{GemmConfig, GemmPlan, Repack, bf16_to_f32};
use baton_runtime::{Gpu, Kernels};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// cuBLAS reference: `D = alpha·A·Bᵀ + beta·D` (cublasGemmEx, bf16 in/out,
/// fp32 compute). For the residual case, fill D with C first.
#[allow(clippy::too_many_arguments)]
pub fn cublas_gemm_bf16(
    blas: &cudarc::cublas::CudaBlas,
    gpu: &Gpu,
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    d: &mut CudaSlice<u16>,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    beta: f32,
) -> Result<()> {
    use cudarc::cublas::sys as bs;
    let stream = gpu.stream();
    let (a_ptr, _s0) = a.device_ptr(stream);
    let (b_ptr, _s1) = b.device_ptr(stream);
    let (d_ptr, _s2) = d.device_ptr_mut(stream);
    // Row-major D (M×N) is column-major Dᵀ (N×M) = B·Aᵀ: "TN" with B first.
    // SAFETY: pointers are live device buffers of the validated sizes.
    unsafe {
        cudarc::cublas::result::gemm_ex(
            *blas.handle(),
            bs::cublasOperation_t::CUBLAS_OP_T,
            bs::cublasOperation_t::CUBLAS_OP_N,
            n as i32,
            m as i32,
            k as i32,
            &alpha as *const f32 as *const _,
            b_ptr as *const _,
            bs::cudaDataType::CUDA_R_16BF,
            k as i32,
            a_ptr as *const _,
            bs::cudaDataType::CUDA_R_16BF,
            k as i32,
            &beta as *const f32 as *const _,
            d_ptr as *mut _,
            bs::cudaDataType::CUDA_R_16BF,
            n as i32,
            bs::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            bs::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }
    .map_err(|status| Error::Cublas {
        call: "cublasGemmEx",
        status,
    })
}

/// Runs ours and cuBLAS on the same fresh random inputs; compares ours with
/// cuBLAS's output (as f64).
pub fn check_vs_cublas(
    gpu: &Gpu,
    kernels: &Kernels,
    tuning: impl Into<GemmTuning>,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
) -> Result<Comparison> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let (a, b) = (random_bf16(m * k, &mut rng), random_bf16(n * k, &mut rng));
    let c = random_bf16(m * n, &mut rng);
    let stream = gpu.stream();
    let (a_d, b_d, c_d) = (
        stream.clone_htod(&a)?,
        stream.clone_htod(&b)?,
        stream.clone_htod(&c)?,
    );
    let mut ours = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let mut theirs = stream.clone_htod(&c)?;
    plan(
        gpu,
        kernels,
        tuning.into(),
        &a_d,
        &b_d,
        // C only where it is read: a plan without C may be swap-AB.
        (beta != 0.0).then_some(&c_d),
        &mut ours,
        (m, n, k),
    )?
    .run(gpu, alpha, beta)?;
    let blas = cudarc::cublas::CudaBlas::new(stream.clone()).map_err(|status| Error::Cublas {
        call: "cublasCreate",
        status,
    })?;
    cublas_gemm_bf16(&blas, gpu, &a_d, &b_d, &mut theirs, m, n, k, alpha, beta)?;
    gpu.synchronize()?;
    let (o, t) = (stream.clone_dtoh(&ours)?, stream.clone_dtoh(&theirs)?);
    let reference: Vec<f64> = t.iter().map(|&x| bf16_to_f32(x) as f64).collect();
    Ok(Comparison::new(&o, &reference))
}

/// One benchmark row.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// The configuration the heuristic chose.
    pub config: GemmConfig,
    /// The operand the plan re-packs before each launch, if any
    /// ([`GemmPlan::repack`]).
    pub repack: Option<Repack>,
    /// Stream-K (minimum segment, extra waves), when on.
    pub stream_k: Option<(u32, u32)>,
    /// CTAs launched.
    pub grid: u32,
    /// (M, N, K).
    pub mnk: (usize, usize, usize),
    /// beta used.
    pub beta: f32,
    /// Our median time, ms.
    pub ours_ms: f64,
    /// cuBLAS median time, ms.
    pub cublas_ms: f64,
    /// Ours vs cuBLAS on the first input set, checked before timing
    /// (`‖ours − cuBLAS‖ / ‖cuBLAS‖`; infinite when ours has a NaN).
    pub check: Comparison,
}

impl BenchRow {
    fn tflops(&self, ms: f64) -> f64 {
        2.0 * self.mnk.0 as f64 * self.mnk.1 as f64 * self.mnk.2 as f64 / (ms * 1e-3) / 1e12
    }
    /// Our TFLOP/s.
    pub fn ours_tflops(&self) -> f64 {
        self.tflops(self.ours_ms)
    }
    /// cuBLAS TFLOP/s.
    pub fn cublas_tflops(&self) -> f64 {
        self.tflops(self.cublas_ms)
    }
    /// ours / cuBLAS throughput.
    pub fn ratio(&self) -> f64 {
        self.cublas_ms / self.ours_ms
    }
}

/// One library's input sets in [`bench_shape`]: A, B, C (only when
/// `beta ≠ 0`) and D per set.
struct InputSets {
    a: Vec<CudaSlice<u16>>,
    b: Vec<CudaSlice<u16>>,
    c: Vec<CudaSlice<u16>>,
    d: Vec<CudaSlice<u16>>,
}

impl InputSets {
    /// One plan per set, each over that set's A, B, C and D. C only where
    /// it is read (beta ≠ 0: sets without C have none): the plans of a
    /// GEMM without C may be swap-AB (small M), as a caller's would.
    fn plans(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        tuning: GemmTuning,
        mnk: (usize, usize, usize),
    ) -> Result<Vec<GemmPlan<'_>>> {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        self.d
            .iter_mut()
            .enumerate()
            .map(|(i, d)| plan(gpu, kernels, tuning, &a[i], &b[i], c.get(i), d, mnk))
            .collect()
    }

    /// Fresh random A, B (and C when `with_c`) copied into two libraries'
    /// input sets, each enough sets that a rotation reads more than twice
    /// the L2 cache ([`cold_inputs`]), or one set each when `hot` (every
    /// launch then finds its operands in L2, as far as they fit); returns
    /// (ours, the reference's, sets per library).
    fn cold_pair(
        gpu: &Gpu,
        (m, n, k): (usize, usize, usize),
        with_c: bool,
        hot: bool,
    ) -> Result<(Self, Self, usize)> {
        let stream = gpu.stream();
        let mut rng = XorShift::new(XorShift::seed_from_time());
        // Bytes one launch reads: A, B and (with beta) C.
        let read_bytes = 2 * (m * k + n * k + if with_c { m * n } else { 0 });
        let sets = if hot {
            1
        } else {
            cold_inputs::sets_per_library(read_bytes, cold_inputs::l2_bytes(gpu))
        };
        let (a0, b0) = (
            stream.clone_htod(&random_bf16(m * k, &mut rng))?,
            stream.clone_htod(&random_bf16(n * k, &mut rng))?,
        );
        let c0 = with_c
            .then(|| stream.clone_htod(&random_bf16(m * n, &mut rng)))
            .transpose()?;
        let first = (&a0, &b0, c0.as_ref());
        Ok((
            Self::copies(gpu, first, m, n, sets)?,
            Self::copies(gpu, first, m, n, sets)?,
            sets,
        ))
    }

    /// `sets` copies of the first set's A, B and C (device-to-device: the
    /// same values at other addresses), each with its own NaN-poisoned D.
    fn copies(
        gpu: &Gpu,
        (a, b, c): (&CudaSlice<u16>, &CudaSlice<u16>, Option<&CudaSlice<u16>>),
        m: usize,
        n: usize,
        sets: usize,
    ) -> Result<Self> {
        let stream = gpu.stream();
        let poison = vec![POISON_BF16; m * n];
        let mut s = Self {
            a: Vec::with_capacity(sets),
            b: Vec::with_capacity(sets),
            c: Vec::with_capacity(sets),
            d: Vec::with_capacity(sets),
        };
        for _ in 0..sets {
            s.a.push(stream.clone_dtod(a)?);
            s.b.push(stream.clone_dtod(b)?);
            if let Some(c) = c {
                s.c.push(stream.clone_dtod(c)?);
            }
            s.d.push(stream.clone_htod(&poison)?);
        }
        Ok(s)
    }
}

/// Runs ours and cuBLAS once on the first input set and compares the
/// outputs ([`BenchRow::check`]), then times them on (m, n, k) with
/// `beta`, interleaved, `reps` event-timed runs each after warm-up (queued
/// back to back: see [`crate::timing`]), and returns the medians.
///
/// Each library reads cold operands: ours and cuBLAS each rotate through
/// their own input sets, enough that a rotation reads more than twice the
/// L2 cache ([`crate::cold_inputs`], which says why this and not an L2
/// flush). cuBLAS therefore never reads the lines ours has just read (as it
/// did before session 10, reading byte-bound operands from L2 at
/// 4.4–4.9 TB/s). `progress` is called after each timed pair.
#[allow(clippy::too_many_arguments)]
pub fn bench_shape(
    gpu: &Gpu,
    kernels: &Kernels,
    blas: &cudarc::cublas::CudaBlas,
    (m, n, k): (usize, usize, usize),
    tuning: GemmTuning,
    beta: f32,
    reps: usize,
    mut progress: impl FnMut(),
) -> Result<BenchRow> {
    let stream = gpu.stream();
    let (mut ours_in, mut ref_in, sets) = InputSets::cold_pair(gpu, (m, n, k), beta != 0.0, false)?;
    // Verify before timing: ours and cuBLAS on their first sets (same
    // values; D poisoned).
    {
        plan(
            gpu,
            kernels,
            tuning,
            &ours_in.a[0],
            &ours_in.b[0],
            ours_in.c.first(),
            &mut ours_in.d[0],
            (m, n, k),
        )?
        .run(gpu, 1.0, beta)?;
        let d = &mut ref_in.d[0];
        if let Some(c) = ref_in.c.first() {
            stream.memcpy_dtod(c, d)?;
        }
        let (a, b) = (&ref_in.a[0], &ref_in.b[0]);
        cublas_gemm_bf16(blas, gpu, a, b, d, m, n, k, 1.0, beta)?;
    }
    gpu.synchronize()?;
    let theirs: Vec<f64> = stream
        .clone_dtoh(&ref_in.d[0])?
        .iter()
        .map(|&x| bf16_to_f32(x) as f64)
        .collect();
    let check = Comparison::new(&stream.clone_dtoh(&ours_in.d[0])?, &theirs);
    drop(theirs);
    let plans = ours_in.plans(gpu, kernels, tuning, (m, n, k))?;
    // Queued back to back, each launch between its own events (see
    // `timing`): neither side's host launch overhead is timed.
    let warmup = cold_inputs::warmup_launches(sets);
    let mut timer = QueuedTimer::<2>::new();
    for rep in 0..reps + warmup {
        let i = rep % sets;
        timer.time(gpu, 0, || plans[i].run(gpu, 1.0, beta))?;
        // cuBLAS computes D = A·Bᵀ + beta·D in place: D holds C before it runs
        // (the copy is outside the timed region).
        let d = &mut ref_in.d[i];
        if let Some(c) = ref_in.c.get(i) {
            stream.memcpy_dtod(c, d)?;
        }
        let (a, b) = (&ref_in.a[i], &ref_in.b[i]);
        timer.time(gpu, 1, || {
            cublas_gemm_bf16(blas, gpu, a, b, d, m, n, k, 1.0, beta)
        })?;
        if rep >= warmup {
            progress();
        }
    }
    let [ours, theirs] = timer.finish(gpu, warmup)?;
    Ok(BenchRow {
        config: plans[0].config(),
        repack: plans[0].repack(),
        stream_k: plans[0]
            .stream_k()
            .map(|s| (s, plans[0].stream_k_extra_waves().unwrap_or(0))),
        grid: plans[0].grid(),
        mnk: (m, n, k),
        beta,
        ours_ms: median(ours),
        cublas_ms: median(theirs),
        check,
    })
}

/// A traced launch of ours beside cuBLAS ([`trace_shape`]).
#[derive(Clone, Debug)]
pub struct TraceRow {
    /// The plan's configuration, split count (1: whole tiles) and CTAs.
    pub plan: (GemmConfig, u32, u32),
    /// Our median time over the queued repetitions, ms.
    pub ours_ms: f64,
    /// cuBLAS's median time over the same repetitions, ms.
    pub cublas_ms: f64,
    /// The traced launch's own event time, ms (after a cuBLAS launch, as
    /// in the repetitions).
    pub traced_ms: f64,
    /// The traced launch's timeline.
    pub timeline: baton_runtime::trace::Timeline,
}

/// Times ours and cuBLAS as [`bench_shape`] does (cold inputs, queued,
/// `reps` each, beta = 0), then traces one more launch of ours, enqueued
/// after a cuBLAS launch like every timed one: zero the trace array, cuBLAS,
/// ours between its events. With `hot`, each library runs on one input
/// set, so its operands stay in L2 between launches (as far as they fit):
/// what is left of the time to the first full stage is not DRAM's.
/// `kernels` must be a traced module
/// ([`baton_runtime::trace::TraceBuffer::of`]); otherwise
/// [`Error::NotTraced`] says how to build one.
pub fn trace_shape(
    gpu: &Gpu,
    kernels: &Kernels,
    blas: &cudarc::cublas::CudaBlas,
    (m, n, k): (usize, usize, usize),
    tuning: GemmTuning,
    reps: usize,
    hot: bool,
) -> Result<TraceRow> {
    let Some(trace) = baton_runtime::trace::TraceBuffer::of(kernels)? else {
        return Err(Error::NotTraced);
    };
    let (mut ours_in, mut ref_in, sets) = InputSets::cold_pair(gpu, (m, n, k), false, hot)?;
    let plans = ours_in.plans(gpu, kernels, tuning, (m, n, k))?;
    let warmup = cold_inputs::warmup_launches(sets);
    let mut timer = QueuedTimer::<3>::new();
    let total = reps + warmup;
    for rep in 0..=total {
        let i = rep % sets;
        let (a, b, d) = (&ref_in.a[i], &ref_in.b[i], &mut ref_in.d[i]);
        if rep == total {
            trace.clear(gpu)?;
        }
        timer.time(gpu, 1, || {
            cublas_gemm_bf16(blas, gpu, a, b, d, m, n, k, 1.0, 0.0)
        })?;
        let slot = if rep == total { 2 } else { 0 };
        timer.time(gpu, slot, || plans[i].run(gpu, 1.0, 0.0))?;
    }
    let timeline = trace.read(gpu)?;
    let [ours, theirs, traced] = timer.finish(gpu, 0)?;
    let p = &plans[0];
    Ok(TraceRow {
        plan: (p.config(), p.split_k().unwrap_or(1), p.grid()),
        ours_ms: median(ours.into_iter().skip(warmup).collect()),
        cublas_ms: median(theirs.into_iter().skip(warmup).collect()),
        traced_ms: traced.first().copied().unwrap_or(f64::NAN),
        timeline,
    })
}
