//! `baton gemm` / `baton bench gemm` and `baton bench zero-cost`: ours and
//! the reference side by side in one process.

use crate::chart::{self, BarChart, BarGroup};
use crate::commands::{Outcome, open_any_gpu_kernels, open_gpu_selftest_kernels};
use crate::progress;
use crate::report::{self, BenchReport, ReferenceResult, ShapeCheck, ShapeResult, Summary};
use crate::sweep::Family;
use baton_reference::copy_bandwidth;
use baton_reference::gemm_check::{self, GemmTuning};
use baton_reference::gemm_cublas::{self, BenchRow};
use baton_runtime::error::GemmError;
use baton_runtime::{Error, Gpu, Kernels, Variant};
use baton_selftest::pipeline_gpu;
use std::path::Path;
use xtask::codegen::{Dialect, kernel_loops};

/// The shape set (M, N, K).
pub const GEMM_SHAPES: [(usize, usize, usize); 7] = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 16384, 16384),
    (8192, 28672, 8192),
    (8192, 8192, 28672),
    (2048, 7168, 2048),
    (128, 8192, 8192),
];

/// Geometric mean.
pub fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// Runs one of [`verify`]'s checks with `tuning`; where a forced split
/// count is refused at that (small) shape — too few K blocks or resident
/// workers — prints so and runs the check unsplit instead: the timed shapes
/// check the split against cuBLAS.
fn unsplit_where_refused<T>(
    shape: &str,
    tuning: GemmTuning,
    check: impl Fn(GemmTuning) -> baton_reference::Result<T>,
) -> baton_reference::Result<T> {
    match check(tuning) {
        Err(baton_reference::Error::Runtime(Error::Gemm(GemmError::SplitKCount {
            splits,
            ..
        }))) => {
            println!("verify {shape}: split-K {splits} refused at this size, checked unsplit");
            check(GemmTuning {
                split_k: None,
                ..tuning
            })
        }
        run => run,
    }
}

/// The BF16 GEMM's checks before any timing: f64 references at small and
/// ragged shapes (beta 0, 0.5, 1; a forced swap-AB configuration, which has
/// no C, at beta 0 only), and cuBLAS at 2048³; prints one line per check and
/// returns whether all passed.
pub fn verify(gpu: &Gpu, kernels: &Kernels, tuning: GemmTuning) -> bool {
    let checks: [(usize, usize, usize, f32); 5] = [
        (129, 264, 72, 0.0),
        (300, 520, 136, 0.5),
        (1, 1024, 512, 1.0),
        (128, 256, 64, 0.0),
        (256, 512, 1024, 0.5),
    ];
    let mut ok = true;
    // A forced swap-AB configuration has no C (beta ≠ 0 is refused):
    // checked at beta = 0 only.
    let no_c = tuning.config.is_some_and(|c| c.is_swap_ab());
    for (m, n, k, beta) in checks {
        let beta = if no_c { 0.0 } else { beta };
        let run = unsplit_where_refused(&format!("{m}x{n}x{k}"), tuning, |t| {
            gemm_check::check_vs_f64(gpu, kernels, t, (m, n, k), 1.0, beta)
        });
        match run {
            Ok(c) => {
                let pass = c.passes(1e-2);
                ok &= pass;
                println!(
                    "verify {m}x{n}x{k} beta={beta} vs f64: rel err {:.2e} {}",
                    c.rel_error,
                    if pass { "PASS" } else { "FAIL" }
                );
            }
            Err(e) => {
                ok = false;
                println!("verify {m}x{n}x{k}: FAIL {e}");
            }
        }
    }
    let beta = if no_c { 0.0 } else { 0.5 };
    let run = unsplit_where_refused("2048^3", tuning, |t| {
        gemm_cublas::check_vs_cublas(gpu, kernels, t, (2048, 2048, 2048), 1.0, beta)
    });
    match run {
        Ok(c) => {
            let pass = c.passes(1e-2);
            ok &= pass;
            println!(
                "verify 2048^3 beta={beta} vs cuBLAS: rel diff {:.2e} {}",
                c.rel_error,
                if pass { "PASS" } else { "FAIL" }
            );
        }
        Err(e) => {
            ok = false;
            println!("verify 2048^3 vs cuBLAS: FAIL {e}");
        }
    }
    ok
}

/// A timed BF16 row as a [`ShapeResult`] (`reps` timed runs per side).
pub fn bf16_result(r: &BenchRow, reps: usize) -> ShapeResult {
    let (m, n, k) = r.mnk;
    let ours_gbps = copy_bandwidth::gbps(Family::Bf16.min_bytes(m, n, k) as usize, r.ours_ms);
    let finite = |x: f64| x.is_finite().then_some(x);
    ShapeResult {
        m,
        n,
        k,
        beta: r.beta,
        config: match r.repack {
            None => r.config.name(),
            Some(which) => format!("{}+repack{which:?}", r.config.name()),
        },
        grid: r.grid,
        stream_k: r.stream_k.map(|(s, w)| [s, w]),
        reps,
        ours_ms: r.ours_ms,
        ours_tflops: r.ours_tflops(),
        ours_gbps,
        byte_bound: Family::Bf16.byte_bound(m, n, k),
        references: vec![ReferenceResult {
            name: "cuBLAS".into(),
            ms: r.cublas_ms,
            tflops: r.cublas_tflops(),
            ratio: r.ratio(),
        }],
        ratio: r.ratio(),
        check: Some(ShapeCheck {
            reference: "cuBLAS".into(),
            rel_diff: finite(r.check.rel_error),
            tolerance: CHECK_TOLERANCE,
            passed: r.check.passes(CHECK_TOLERANCE),
        }),
    }
}

/// Relative difference ours vs cuBLAS a shape's check allows (bf16 output
/// rounding and fp32 accumulation order).
pub const CHECK_TOLERANCE: f64 = 1e-2;

/// The bar chart of BF16 results: ours vs cuBLAS TFLOP/s per shape, the
/// ratio above each.
pub fn bf16_chart(gpu: &str, rows: &[ShapeResult]) -> BarChart {
    BarChart {
        title: format!("BF16 GEMM: baton vs cuBLAS ({gpu})"),
        series: vec!["baton".into(), "cuBLAS".into()],
        groups: rows
            .iter()
            .map(|r| BarGroup {
                label: if r.beta == 0.0 {
                    format!("{}×{}×{}", r.m, r.n, r.k)
                } else {
                    format!("{}×{}×{} β={}", r.m, r.n, r.k, r.beta)
                },
                values: std::iter::once(r.ours_tflops)
                    .chain(r.references.iter().map(|x| x.tflops))
                    .collect(),
                note: Some(format!("{:.3}×", r.ratio)),
            })
            .collect(),
        y_label: "TFLOP/s".into(),
        note_meaning: "above the bars: baton / cuBLAS throughput".into(),
    }
}

/// Verifies the GEMM (f64 reference at small/ragged shapes, cuBLAS at
/// 2048³), then benchmarks it against cuBLAS over `shapes` with `reps` timed
/// runs each (each shape's output checked against cuBLAS's first); prints a
/// table and the geometric mean of the ratios; writes the bar chart to
/// `chart` and every result to `json` when given. `tuning` forces a
/// configuration, rasterization group or stream-K for every verification
/// and timed run.
pub fn gemm(
    ordinal: usize,
    tuning: GemmTuning,
    shapes: &[(usize, usize, usize)],
    reps: usize,
    chart: Option<&Path>,
    json: Option<&Path>,
) -> Outcome {
    // Hopper runs the sm_90a family, Blackwell the sm_100a kernel; the
    // heuristic (GemmPlan::new) picks by the GPU's target.
    let (gpu, kernels) = match open_any_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    crate::commands::print_gpu_line(&gpu);
    // 1. Correctness first.
    if !verify(&gpu, &kernels, tuning) {
        println!("GEMM verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    // 2. Side-by-side benchmark.
    println!(
        "{}",
        baton_reference::cold_inputs::describe(baton_reference::cold_inputs::l2_bytes(&gpu))
    );
    let blas = match cudarc_blas(&gpu) {
        Ok(b) => b,
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    let mut jobs: Vec<((usize, usize, usize), f32)> = shapes.iter().map(|&s| (s, 0.0)).collect();
    if shapes.contains(&(8192, 8192, 8192)) {
        jobs.push(((8192, 8192, 8192), 0.5));
    }
    let bar = progress::bar((jobs.len() * reps) as u64);
    let mut rows: Vec<ShapeResult> = Vec::new();
    let mut outcome = Outcome::Pass;
    for &(shape, beta) in &jobs {
        let what = format!("{}x{}x{} beta={beta}", shape.0, shape.1, shape.2);
        bar.set_message(what.clone());
        let row =
            gemm_cublas::bench_shape(&gpu, &kernels, &blas, shape, tuning, beta, reps, || {
                bar.inc(1)
            });
        match row {
            Ok(r) => rows.push(bf16_result(&r, reps)),
            Err(e) => {
                bar.suspend(|| println!("bench {what}: FAIL {e}"));
                bar.finish_and_clear();
                return Outcome::Fail;
            }
        }
    }
    bar.finish_and_clear();
    println!(
        "{:<22} {:<13} {:>6} {:>10} {:>10} {:>9} {:>9} {:>7}  check vs cuBLAS",
        "M x N x K", "tile", "beta", "ours ms", "cuBLAS ms", "ours TF/s", "cuBLAS TF", "ratio"
    );
    for r in &rows {
        let reference = &r.references[0];
        println!(
            "{:<22} {:<13} {:>6} {:>10.4} {:>10.4} {:>9.1} {:>9.1} {:>7.3}  {}",
            format!("{}x{}x{}", r.m, r.n, r.k),
            match r.stream_k {
                Some([s, w]) => format!("{}/{}/sk{s}w{w}", r.config, r.grid),
                None => format!("{}/{}", r.config, r.grid),
            },
            r.beta,
            r.ours_ms,
            reference.ms,
            r.ours_tflops,
            reference.tflops,
            r.ratio,
            check_cell(r),
        );
        if !r.check_passed() {
            outcome = Outcome::Fail;
        }
    }
    let base: Vec<f64> = rows
        .iter()
        .filter(|r| r.beta == 0.0)
        .map(|r| r.ratio)
        .collect();
    println!(
        "geometric mean ours/cuBLAS (beta = 0): {:.3}",
        geomean(&base)
    );
    let at = |beta: f32| {
        rows.iter()
            .find(|r| (r.m, r.n, r.k) == (8192, 8192, 8192) && r.beta == beta)
    };
    if let (Some(b0), Some(b5)) = (at(0.0), at(0.5)) {
        println!(
            "8192^3 beta 0.5 vs beta 0 rows above (timed minutes apart): {:+.1}%",
            100.0 * (b5.ours_ms / b0.ours_ms - 1.0)
        );
        // The rows are timed one after the other, so the card's clock drift
        // between them shows up as "cost"; alternate the two instead.
        match gemm_check::residual_cost(&gpu, &kernels, (8192, 8192, 8192), tuning, reps) {
            Ok(c) => println!(
                "residual cost at 8192^3 (ours, beta 0.5 vs 0, alternating launches, median of {reps} pairs): {:+.1}%",
                100.0 * c
            ),
            Err(e) => println!("residual cost: FAIL {e}"),
        }
    }
    if let Some(path) = chart {
        match chart::write_bar_chart(path, &bf16_chart(gpu.name(), &rows)) {
            Ok(()) => println!("chart: {}", path.display()),
            Err(e) => println!("chart not written: {e}"),
        }
    }
    let report = BenchReport {
        command: "bench gemm".into(),
        gpu: gpu.name().into(),
        sms: gpu.sm_count(),
        copy_gbps: None,
        summary: Summary::of(&base),
        results: rows,
        skipped: Vec::new(),
    };
    if !report::write_if_asked(json, &report) {
        outcome = Outcome::Fail;
    }
    outcome
}

/// A result's check against the reference, as a table cell.
pub fn check_cell(r: &ShapeResult) -> String {
    match &r.check {
        Some(ShapeCheck {
            rel_diff: Some(d),
            passed,
            ..
        }) => format!("{d:.1e} {}", if *passed { "PASS" } else { "FAIL" }),
        Some(ShapeCheck { rel_diff: None, .. }) => "non-finite FAIL".into(),
        None => "-".into(),
    }
}

/// A cuBLAS handle on the GPU's stream.
pub(crate) fn cudarc_blas(
    gpu: &Gpu,
) -> Result<baton_runtime::cudarc::cublas::CudaBlas, baton_reference::Error> {
    baton_runtime::cudarc::cublas::CudaBlas::new(gpu.stream().clone()).map_err(|status| {
        baton_reference::Error::Cublas {
            call: "cublasCreate",
            status,
        }
    })
}

/// Instructions per iteration of each steady-state loop of the two
/// zero-cost kernels, from `text` in `dialect`: (pipeline, hand-written).
pub fn loop_sizes(text: &str, dialect: Dialect) -> Option<(Vec<usize>, Vec<usize>)> {
    let sizes = |k| {
        kernel_loops(text, k, dialect).map(|l| l.iter().map(|l| l.instructions).collect::<Vec<_>>())
    };
    Some((
        sizes("baton_bench_handoff_pipeline")?,
        sizes("baton_bench_handoff_handwritten")?,
    ))
}

/// `baton bench zero-cost --json`: both kernels' results.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZeroCostReport {
    /// The GPU's name.
    pub gpu: String,
    /// PTX instructions per iteration of each steady-state loop, pipeline
    /// API and hand-written (`None` without PTX).
    pub loop_sizes: Option<(Vec<usize>, Vec<usize>)>,
    /// (kernel, handoffs per µs, median ms): pipeline API, then hand-written.
    pub results: Vec<(String, f64, f64)>,
    /// Pipeline / hand-written throughput.
    pub ratio: f64,
}

/// `baton bench zero-cost`: handoffs/µs of the pipeline-API kernel and the
/// hand-written one, interleaved in one process, plus their PTX loop sizes;
/// both to `json` when given.
pub fn zero_cost(ordinal: usize, json: Option<&Path>) -> Outcome {
    let sizes = baton_selftest::kernels::ptx(Variant::Release)
        .ok()
        .and_then(|text| loop_sizes(text, Dialect::Ptx));
    if let Some((ours, hand)) = &sizes {
        println!("PTX loop sizes (instructions/iteration), pipeline API: {ours:?}");
        println!("PTX loop sizes (instructions/iteration), hand-written: {hand:?}");
    }
    let (gpu, kernels) = match open_gpu_selftest_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    match pipeline_gpu::run_zero_cost(&gpu, &kernels, gpu.sm_count(), 1 << 16, 21) {
        Ok([ours, hand]) => {
            println!("{:<34} {:>14} {:>10}", "kernel", "handoffs/us", "median ms");
            for r in [&ours, &hand] {
                println!(
                    "{:<34} {:>14.1} {:>10.3}",
                    r.kernel, r.handoffs_per_us, r.median_ms
                );
            }
            let ratio = ours.handoffs_per_us / hand.handoffs_per_us;
            println!("pipeline / hand-written throughput: {ratio:.4}");
            let report = ZeroCostReport {
                gpu: gpu.name().into(),
                loop_sizes: sizes,
                results: [&ours, &hand]
                    .iter()
                    .map(|r| (r.kernel.to_string(), r.handoffs_per_us, r.median_ms))
                    .collect(),
                ratio,
            };
            if report::write_if_asked(json, &report) {
                Outcome::Pass
            } else {
                Outcome::Fail
            }
        }
        Err(e) => {
            println!("FAIL: {e}");
            Outcome::Fail
        }
    }
}
