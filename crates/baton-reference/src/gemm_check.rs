//! Correctness checks and the side-by-side benchmark of the BF16 GEMM.
//!
//! Inputs are fresh random bf16 values in [-1, 1) for every check; outputs
//! are poisoned (bf16 NaN) before each run, so an unwritten element fails as
//! NaN; NaN never passes.

use crate::Result;
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use baton_runtime::gemm::{GemmConfig, GemmPlan, Repack, bf16_to_f32, f32_to_bf16};
use baton_runtime::{Gpu, Kernels};
use cudarc::driver::CudaSlice;

/// Output poison: a bf16 quiet NaN.
pub const POISON_BF16: u16 = 0x7FC1;

/// `n` random bf16 values in [-1, 1).
pub fn random_bf16(n: usize, rng: &mut XorShift) -> Vec<u16> {
    (0..n)
        .map(|_| f32_to_bf16((rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0))
        .collect()
}

/// f64 reference of `alpha·A·Bᵀ + beta·C` (row-major, B N×K).
#[allow(clippy::too_many_arguments)]
pub fn reference_f64(
    a: &[u16],
    b: &[u16],
    c: Option<&[u16]>,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    beta: f32,
) -> Vec<f64> {
    let af: Vec<f64> = a.iter().map(|&x| bf16_to_f32(x) as f64).collect();
    let bf: Vec<f64> = b.iter().map(|&x| bf16_to_f32(x) as f64).collect();
    let mut out = vec![0f64; m * n];
    for i in 0..m {
        let ar = &af[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &bf[j * k..(j + 1) * k];
            let dot: f64 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
            let cv = c.map_or(0.0, |c| bf16_to_f32(c[i * n + j]) as f64);
            out[i * n + j] = alpha as f64 * dot + beta as f64 * cv;
        }
    }
    out
}

/// How the checks and the benchmark set up our GEMM plan: every field
/// `None` means the plan's defaults (the heuristic's configuration, the
/// default rasterization group, no stream-K).
///
/// ```
/// use baton_runtime::gemm::GemmConfig;
/// use baton_reference::gemm_check::GemmTuning;
/// let t: GemmTuning = Some(GemmConfig::T128x256C2).into();
/// assert_eq!(t.config, Some(GemmConfig::T128x256C2));
/// assert_eq!(GemmTuning { stream_k: Some(4), ..t }.stream_k, Some(4));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GemmTuning {
    /// Force a tile configuration ([`GemmPlan::with_config`]).
    pub config: Option<GemmConfig>,
    /// Rasterization group ([`GemmPlan::set_group_m`]).
    pub group_m: Option<u32>,
    /// Stream-K minimum segment in K blocks ([`GemmPlan::set_stream_k`]):
    /// `None` keeps the plan's default (the heuristic's, with `config`
    /// unset), `Some(0)` turns stream-K off.
    pub stream_k: Option<u32>,
    /// Stream-K extra full waves ([`GemmPlan::set_stream_k_extra_waves`];
    /// only with `stream_k`).
    pub stream_k_waves: Option<u32>,
    /// Split-K workers per unit ([`GemmPlan::set_split_k`]; 1 turns split-
    /// and stream-K off), applied after `stream_k`.
    pub split_k: Option<u32>,
    /// With `config`: the operand read from a copy at rows 128 bytes apart
    /// ([`GemmPlan::with_config_repacked`]); `None` reads both in place.
    /// (Without `config` the heuristic decides.)
    pub repack: Option<Repack>,
}

impl From<Option<GemmConfig>> for GemmTuning {
    fn from(config: Option<GemmConfig>) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }
}

impl From<GemmConfig> for GemmTuning {
    fn from(config: GemmConfig) -> Self {
        Some(config).into()
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn plan<'a>(
    gpu: &Gpu,
    kernels: &Kernels,
    tuning: GemmTuning,
    a: &'a CudaSlice<u16>,
    b: &'a CudaSlice<u16>,
    c: Option<&'a CudaSlice<u16>>,
    d: &'a mut CudaSlice<u16>,
    (m, n, k): (usize, usize, usize),
) -> Result<GemmPlan<'a>> {
    let mut plan = match tuning.config {
        Some(cfg) => {
            GemmPlan::with_config_repacked(gpu, kernels, cfg, tuning.repack, a, b, c, d, m, n, k)
        }
        None => GemmPlan::new(gpu, kernels, a, b, c, d, m, n, k),
    }?;
    if let Some(g) = tuning.group_m {
        plan.set_group_m(g);
    }
    match tuning.stream_k {
        Some(0) => plan.set_stream_k(gpu, None)?,
        Some(s) => plan.set_stream_k(gpu, Some(s))?,
        None => {}
    }
    if let Some(w) = tuning.stream_k_waves {
        plan.set_stream_k_extra_waves(w)?;
    }
    if let Some(s) = tuning.split_k {
        plan.set_split_k(gpu, s)?;
    }
    Ok(plan)
}

/// How an output compares with a reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// ‖out − ref‖ / ‖ref‖ (Frobenius); infinite when any output is NaN or
    /// the reference is all zeros.
    pub rel_error: f64,
    /// Largest |out − ref|.
    pub max_abs_error: f64,
    /// NaN or infinite outputs (unwritten elements show up here).
    pub non_finite: usize,
}

impl Comparison {
    /// Compares `out` (bf16 bits) with `reference`.
    pub fn new(out: &[u16], reference: &[f64]) -> Self {
        let (mut num, mut den, mut max_abs, mut non_finite) = (0f64, 0f64, 0f64, 0usize);
        for (&o, &r) in out.iter().zip(reference) {
            let o = bf16_to_f32(o) as f64;
            if !o.is_finite() {
                non_finite += 1;
                continue;
            }
            num += (o - r) * (o - r);
            den += r * r;
            max_abs = max_abs.max((o - r).abs());
        }
        let rel_error = if non_finite > 0 {
            f64::INFINITY
        } else {
            (num / den.max(f64::MIN_POSITIVE)).sqrt()
        };
        Self {
            rel_error,
            max_abs_error: max_abs,
            non_finite,
        }
    }

    /// Passes when every output is finite and the relative error is at most `tol`.
    pub fn passes(&self, tol: f64) -> bool {
        self.non_finite == 0 && self.rel_error <= tol
    }
}

/// Runs ours on fresh random inputs and compares with the f64 CPU reference.
pub fn check_vs_f64(
    gpu: &Gpu,
    kernels: &Kernels,
    tuning: impl Into<GemmTuning>,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
) -> Result<Comparison> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let (a, b) = (random_bf16(m * k, &mut rng), random_bf16(n * k, &mut rng));
    let c = (beta != 0.0).then(|| random_bf16(m * n, &mut rng));
    let stream = gpu.stream();
    let (a_d, b_d) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let c_d = c.as_ref().map(|c| stream.clone_htod(c)).transpose()?;
    let mut d_d = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    plan(
        gpu,
        kernels,
        tuning.into(),
        &a_d,
        &b_d,
        c_d.as_ref(),
        &mut d_d,
        (m, n, k),
    )?
    .run(gpu, alpha, beta)?;
    gpu.synchronize()?;
    let d = stream.clone_dtoh(&d_d)?;
    Ok(Comparison::new(
        &d,
        &reference_f64(&a, &b, c.as_deref(), m, n, k, alpha, beta),
    ))
}

/// The residual epilogue's cost: ours with beta = 0.5 over ours with
/// beta = 0 on the same operands (C given in both), launched alternately
/// `reps` times each after warm-up, so clock and temperature drift hit both
/// alike; returns the median of the per-pair time ratios minus 1 (0.02 =
/// 2% slower with the residual).
pub fn residual_cost(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    tuning: GemmTuning,
    reps: usize,
) -> Result<f64> {
    let stream = gpu.stream();
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = stream.clone_htod(&random_bf16(m * k, &mut rng))?;
    let b = stream.clone_htod(&random_bf16(n * k, &mut rng))?;
    let c = stream.clone_htod(&random_bf16(m * n, &mut rng))?;
    let mut d = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let plan = plan(gpu, kernels, tuning, &a, &b, Some(&c), &mut d, (m, n, k))?;
    let mut timer = QueuedTimer::<2>::new();
    for _ in 0..reps + 3 {
        for (slot, beta) in [0.0f32, 0.5].into_iter().enumerate() {
            timer.time(gpu, slot, || plan.run(gpu, 1.0, beta))?;
        }
    }
    let [beta0, beta_half] = timer.finish(gpu, 3)?;
    let ratios = beta_half.iter().zip(&beta0).map(|(b, z)| b / z).collect();
    Ok(median(ratios) - 1.0)
}

/// The ragged shapes the GPU tests check every configuration on: M = 1,
/// tiny and unaligned-to-the-tile M/N/K, exact tiles, long K.
pub const RAGGED_SHAPES: [(usize, usize, usize); 8] = [
    (1, 8, 8),
    (128, 256, 64),
    (129, 264, 72),
    (300, 520, 136),
    (1, 1024, 512),
    (77, 200, 8),
    (256, 256, 1024),
    (513, 8, 40),
];

/// Checks each of `configs` against the f64 reference on
/// [`RAGGED_SHAPES`] with beta 0, 0.5 and 1, and once with alpha −1.5,
/// beta 0.25; panics naming the first configuration, shape and beta that
/// fails (relative Frobenius error above 1e-2, or any NaN).
pub fn assert_ragged_shapes_match_f64(gpu: &Gpu, kernels: &Kernels, configs: &[GemmConfig]) {
    assert_ragged_shapes_match_f64_with(gpu, kernels, configs, None)
}

/// [`assert_ragged_shapes_match_f64`] with stream-K set to `stream_k`
/// (e.g. `Some(1)`: split units into segments as short as one K block, so
/// even these small shapes spread each unit over many workers).
pub fn assert_ragged_shapes_match_f64_with(
    gpu: &Gpu,
    kernels: &Kernels,
    configs: &[GemmConfig],
    stream_k: Option<u32>,
) {
    for &c in configs {
        let config = GemmTuning {
            config: Some(c),
            stream_k,
            ..GemmTuning::default()
        };
        for &(m, n, k) in &RAGGED_SHAPES {
            for beta in [0.0f32, 0.5, 1.0] {
                let cmp = check_vs_f64(gpu, kernels, config, (m, n, k), 1.0, beta)
                    .unwrap_or_else(|e| panic!("{config:?} {m}x{n}x{k}: {e}"));
                println!(
                    "{config:?} {m}x{n}x{k} beta {beta}: rel {:.2e} max abs {:.2e}",
                    cmp.rel_error, cmp.max_abs_error
                );
                assert!(
                    cmp.passes(1e-2),
                    "{config:?} {m}x{n}x{k} beta {beta}: {cmp:?}"
                );
            }
        }
        let cmp = check_vs_f64(gpu, kernels, config, (200, 200, 64), -1.5, 0.25)
            .unwrap_or_else(|e| panic!("{config:?} alpha -1.5: {e}"));
        assert!(cmp.passes(1e-2), "{config:?} alpha -1.5: {cmp:?}");
    }
}
