//! `baton gemm` / `baton bench gemm` and `baton bench zero-cost`: ours and
//! the reference side by side in one process.

use crate::commands::{Outcome, open_any_gpu_kernels, open_gpu_selftest_kernels};
use baton_reference::gemm_check::{self, GemmTuning};
use baton_reference::gemm_cublas::{self, BenchRow};
use baton_runtime::Variant;
use baton_selftest::pipeline_gpu;
use std::io::Write as _;
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

fn progress(done: usize, total: usize, what: &str) {
    let width = 30;
    let filled = done * width / total.max(1);
    eprint!(
        "\r[{}{}] {done}/{total} {what:<40}",
        "#".repeat(filled),
        ".".repeat(width - filled)
    );
    let _ = std::io::stderr().flush();
    if done == total {
        eprintln!();
    }
}

/// Geometric mean.
pub fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// Verifies the GEMM (f64 reference at small/ragged shapes, cuBLAS at
/// 2048³), then benchmarks it against cuBLAS over `shapes` with `reps` timed
/// runs each; prints a table and the geometric mean of the ratios. `tuning`
/// forces a configuration, rasterization group or stream-K for every
/// verification and timed run.
pub fn gemm(
    ordinal: usize,
    tuning: GemmTuning,
    shapes: &[(usize, usize, usize)],
    reps: usize,
    chart: Option<&std::path::Path>,
) -> Outcome {
    // Hopper runs the sm_90a family, Blackwell the sm_100a kernel; the
    // heuristic (GemmPlan::new) picks by the GPU's target.
    let (gpu, kernels) = match open_any_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    println!("GPU: {} ({} SMs)", gpu.name(), gpu.sm_count());
    // 1. Correctness first.
    let checks: [(usize, usize, usize, f32); 5] = [
        (129, 264, 72, 0.0),
        (300, 520, 136, 0.5),
        (1, 1024, 512, 1.0),
        (128, 256, 64, 0.0),
        (256, 512, 1024, 0.5),
    ];
    let mut ok = true;
    for (m, n, k, beta) in checks {
        match gemm_check::check_vs_f64(&gpu, &kernels, tuning, (m, n, k), 1.0, beta) {
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
    match gemm_cublas::check_vs_cublas(&gpu, &kernels, tuning, (2048, 2048, 2048), 1.0, 0.5) {
        Ok(c) => {
            let pass = c.passes(1e-2);
            ok &= pass;
            println!(
                "verify 2048^3 beta=0.5 vs cuBLAS: rel diff {:.2e} {}",
                c.rel_error,
                if pass { "PASS" } else { "FAIL" }
            );
        }
        Err(e) => {
            ok = false;
            println!("verify 2048^3 vs cuBLAS: FAIL {e}");
        }
    }
    if !ok {
        println!("GEMM verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    // 2. Side-by-side benchmark.
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
    let total = jobs.len() * reps;
    let mut done = 0;
    let mut rows: Vec<BenchRow> = Vec::new();
    for &(shape, beta) in &jobs {
        let what = format!("{}x{}x{} beta={beta}", shape.0, shape.1, shape.2);
        let row =
            gemm_cublas::bench_shape(&gpu, &kernels, &blas, shape, tuning, beta, reps, || {
                done += 1;
                progress(done, total, &what);
            });
        match row {
            Ok(r) => rows.push(r),
            Err(e) => {
                println!("\nbench {what}: FAIL {e}");
                return Outcome::Fail;
            }
        }
    }
    println!();
    println!(
        "{:<22} {:<13} {:>6} {:>10} {:>10} {:>9} {:>9} {:>7}",
        "M x N x K", "tile", "beta", "ours ms", "cuBLAS ms", "ours TF/s", "cuBLAS TF", "ratio"
    );
    for r in &rows {
        println!(
            "{:<22} {:<13} {:>6} {:>10.3} {:>10.3} {:>9.1} {:>9.1} {:>7.3}",
            format!("{}x{}x{}", r.mnk.0, r.mnk.1, r.mnk.2),
            match r.stream_k {
                Some((s, w)) => format!("{}/{}/sk{s}w{w}", r.config.name(), r.grid),
                None => format!("{}/{}", r.config.name(), r.grid),
            },
            r.beta,
            r.ours_ms,
            r.cublas_ms,
            r.ours_tflops(),
            r.cublas_tflops(),
            r.ratio()
        );
    }
    let base: Vec<f64> = rows
        .iter()
        .filter(|r| r.beta == 0.0)
        .map(BenchRow::ratio)
        .collect();
    println!(
        "geometric mean ours/cuBLAS (beta = 0): {:.3}",
        geomean(&base)
    );
    if let (Some(b0), Some(b5)) = (
        rows.iter()
            .find(|r| r.mnk == (8192, 8192, 8192) && r.beta == 0.0),
        rows.iter()
            .find(|r| r.mnk == (8192, 8192, 8192) && r.beta == 0.5),
    ) {
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
        match crate::chart::write_bar_chart(path, &rows) {
            Ok(()) => println!("chart: {}", path.display()),
            Err(e) => println!("chart not written: {e}"),
        }
    }
    Outcome::Pass
}

fn cudarc_blas(
    gpu: &baton_runtime::Gpu,
) -> Result<baton_runtime::cudarc::cublas::CudaBlas, String> {
    baton_runtime::cudarc::cublas::CudaBlas::new(gpu.stream().clone())
        .map_err(|e| format!("cuBLAS init: {e:?}"))
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

/// `baton bench zero-cost`: handoffs/µs of the pipeline-API kernel and the
/// hand-written one, interleaved in one process, plus their PTX loop sizes.
pub fn zero_cost(ordinal: usize) -> Outcome {
    if let Ok(text) = baton_selftest::kernels::ptx(Variant::Release)
        && let Some((ours, hand)) = loop_sizes(text, Dialect::Ptx)
    {
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
            println!(
                "pipeline / hand-written throughput: {:.4}",
                ours.handoffs_per_us / hand.handoffs_per_us
            );
            Outcome::Pass
        }
        Err(e) => {
            println!("FAIL: {e}");
            Outcome::Fail
        }
    }
}
