//! The BF16 GEMM beside cuBLAS (`cublasGemmEx`, bf16 in/out, fp32
//! compute): the cuBLAS call, the check of ours against it and the
//! side-by-side benchmark (`baton bench gemm`). Behind the `cublas` feature.

use crate::gemm_check::{Comparison, GemmTuning, POISON_BF16, plan, random_bf16};
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use crate::{Error, Result};
use baton_runtime::gemm::{GemmConfig, GemmPlan, bf16_to_f32};
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

/// Runs ours and cuBLAS once on the first input set and compares the
/// outputs ([`BenchRow::check`]), then times them on (m, n, k) with
/// `beta`, interleaved, `reps` event-timed runs each after warm-up (queued
/// back to back: see [`crate::timing`]), rotating among input sets so the
/// operands do not sit in L2; returns the medians. `progress` is called
/// after each timed pair.
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
    let mut rng = XorShift::new(XorShift::seed_from_time());
    // Enough sets that together they exceed L2 (50 MB) when one set is small.
    let bytes_per_set = 2 * (m * k + n * k + 3 * m * n);
    let sets = (120_000_000 / bytes_per_set).clamp(1, 4);
    let mut inputs: Vec<(CudaSlice<u16>, CudaSlice<u16>, CudaSlice<u16>)> = Vec::new();
    let (mut d_ours, mut d_ref): (Vec<CudaSlice<u16>>, Vec<CudaSlice<u16>>) =
        (Vec::new(), Vec::new());
    for _ in 0..sets {
        let a = stream.clone_htod(&random_bf16(m * k, &mut rng))?;
        let b = stream.clone_htod(&random_bf16(n * k, &mut rng))?;
        let c = stream.clone_htod(&random_bf16(m * n, &mut rng))?;
        inputs.push((a, b, c));
        d_ours.push(stream.clone_htod(&vec![POISON_BF16; m * n])?);
        d_ref.push(stream.clone_htod(&vec![POISON_BF16; m * n])?);
    }
    // Verify before timing: ours and cuBLAS on the first set (D poisoned).
    {
        let (a, b, c) = &inputs[0];
        plan(
            gpu,
            kernels,
            tuning,
            a,
            b,
            (beta != 0.0).then_some(c),
            &mut d_ours[0],
            (m, n, k),
        )?
        .run(gpu, 1.0, beta)?;
        let d = &mut d_ref[0];
        if beta != 0.0 {
            stream.memcpy_dtod(c, d)?;
        }
        cublas_gemm_bf16(blas, gpu, a, b, d, m, n, k, 1.0, beta)?;
    }
    gpu.synchronize()?;
    let theirs: Vec<f64> = stream
        .clone_dtoh(&d_ref[0])?
        .iter()
        .map(|&x| bf16_to_f32(x) as f64)
        .collect();
    let check = Comparison::new(&stream.clone_dtoh(&d_ours[0])?, &theirs);
    drop(theirs);
    let plans: Vec<GemmPlan<'_>> = inputs
        .iter()
        .zip(d_ours.iter_mut())
        // C only where it is read (beta ≠ 0): the plans of a GEMM
        // without C may be swap-AB (small M), as a caller's would.
        .map(|((a, b, c), d)| {
            let c = (beta != 0.0).then_some(c);
            plan(gpu, kernels, tuning, a, b, c, d, (m, n, k))
        })
        .collect::<Result<_>>()?;
    // Queued back to back, each launch between its own events (see
    // `timing`): neither side's host launch overhead is timed.
    let mut timer = QueuedTimer::<2>::new();
    for rep in 0..reps + 3 {
        let i = rep % sets;
        let (a, b, c) = &inputs[i];
        timer.time(gpu, 0, || plans[i].run(gpu, 1.0, beta))?;
        // cuBLAS computes D = A·Bᵀ + beta·D in place: D holds C before it runs
        // (the copy is outside the timed region).
        let d = &mut d_ref[i];
        if beta != 0.0 {
            stream.memcpy_dtod(c, d)?;
        }
        timer.time(gpu, 1, || {
            cublas_gemm_bf16(blas, gpu, a, b, d, m, n, k, 1.0, beta)
        })?;
        if rep >= 3 {
            progress();
        }
    }
    let [ours, theirs] = timer.finish(gpu, 3)?;
    Ok(BenchRow {
        config: plans[0].config(),
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
