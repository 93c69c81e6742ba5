//! `baton bench gemm-fp8`: the blockwise-scaled FP8 GEMM verified (f64
//! reference at small and ragged shapes, cuBLASLt blockwise at 2048³), then
//! timed against cuBLASLt blockwise FP8 and cuBLASLt tensorwise FP8 in one
//! process.

use crate::bench::geomean;
use crate::chart::{BarChart, BarGroup};
use crate::commands::{Outcome, open_gpu_kernels};
use crate::progress;
use crate::report::{BenchReport, ReferenceResult, ShapeCheck, ShapeResult, Summary};
use crate::sweep::Family;
use baton_reference::copy_bandwidth::gbps;
use baton_reference::gemm_fp8_check::check_vs_f64;
use baton_reference::gemm_fp8_ref::{Fp8BenchRow, bench_shape, check_vs_cublaslt};
use baton_runtime::gemm::fp8::VARIANTS;
use baton_runtime::{Gpu, Kernels, Variant};
use std::path::Path;

/// Issue #7's shape set (M, N, K).
pub const FP8_SHAPES: [(usize, usize, usize); 9] = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (128, 24576, 1536),
    (128, 7168, 16384),
    (4096, 24576, 1536),
    (4096, 32768, 512),
    (4096, 7168, 16384),
    (4096, 4096, 7168),
    (4096, 7168, 2048),
];

/// Decode-style shapes (issue #7: small M must not fall off a cliff):
/// every M of [`FP8_DECODE_M`] with the two small-M (N, K) pairs of
/// [`FP8_SHAPES`].
pub const FP8_DECODE_NK: [(usize, usize); 2] = [(7168, 16384), (24576, 1536)];
/// The M values of the decode sweep (`baton bench gemm-fp8 --decode`),
/// from 8: cuBLASLt's blockwise mode needs M to be a multiple of 4 and has
/// no algorithm at M = 4 (CUDA 13.0); ours runs any M (M = 1 is in the f64
/// checks).
pub const FP8_DECODE_M: [usize; 9] = [8, 16, 32, 64, 96, 128, 160, 192, 256];

/// The decode sweep's shapes, (N, K) major then M.
///
/// ```
/// let s = baton_cli::fp8_bench::decode_shapes();
/// assert_eq!(s.len(), 18);
/// assert_eq!(s[0], (8, 7168, 16384));
/// ```
pub fn decode_shapes() -> Vec<(usize, usize, usize)> {
    FP8_DECODE_NK
        .iter()
        .flat_map(|&(n, k)| FP8_DECODE_M.iter().map(move |&m| (m, n, k)))
        .collect()
}

/// The FP8 GEMM's checks before any timing: every kernel variant (or only
/// those of `only`: the kernels a run times, [`timed_kernels`]) vs f64 at
/// small and ragged shapes, and cuBLASLt blockwise at 2048³; prints one
/// line per check and returns whether all passed.
pub fn verify(gpu: &Gpu, kernels: &Kernels, only: Option<&[&str]>) -> bool {
    let mut ok = true;
    let checks = [
        (129, 264, 256),
        (77, 200, 384),
        (1, 1024, 1024),
        (300, 520, 640),
    ];
    for (kernel, mnk) in VARIANTS
        .iter()
        .filter(|k| only.is_none_or(|o| o.contains(*k)))
        .flat_map(|k| checks.iter().map(move |s| (*k, *s)))
    {
        match check_vs_f64(gpu, kernels, kernel, mnk) {
            Ok(c) => {
                let pass = c.passes(2e-2);
                ok &= pass;
                println!(
                    "verify {kernel} {}x{}x{} vs f64: rel err {:.2e} {}",
                    mnk.0,
                    mnk.1,
                    mnk.2,
                    c.rel_error,
                    if pass { "PASS" } else { "FAIL" }
                );
            }
            Err(e) => {
                ok = false;
                println!("verify {mnk:?}: FAIL {e}");
            }
        }
    }
    match check_vs_cublaslt(gpu, kernels, (2048, 2048, 2048)) {
        Ok(c) => {
            let pass = c.passes(2e-2);
            ok &= pass;
            println!(
                "verify 2048^3 vs cuBLASLt blockwise: rel diff {:.2e} {}",
                c.rel_error,
                if pass { "PASS" } else { "FAIL" }
            );
        }
        Err(e) => {
            ok = false;
            println!("verify 2048^3 vs cuBLASLt: FAIL {e}");
        }
    }
    ok
}

/// The kernels a run of `shapes` times on `gpu`: `forced`, or each
/// shape's planned kernel ([`plan_for_gpu`](baton_runtime::gemm::fp8::plan_for_gpu),
/// as `Fp8GemmPlan::new` plans), each once. What [`verify`] checks before
/// such a run (checking the other kernels took most of a short run's time).
///
/// ```no_run
/// # let gpu = baton_runtime::Gpu::new(0)?;
/// let ks = baton_cli::fp8_bench::timed_kernels(&gpu, &[(4096, 4096, 4096), (64, 7168, 2048)], None);
/// assert!(!ks.is_empty() && ks.len() <= 2);
/// # Ok::<(), baton_runtime::Error>(())
/// ```
pub fn timed_kernels(
    gpu: &Gpu,
    shapes: &[(usize, usize, usize)],
    forced: Option<&'static str>,
) -> Vec<&'static str> {
    let mut ks: Vec<&'static str> = match forced {
        Some(k) => vec![k],
        None => shapes
            .iter()
            .map(|&(m, n, k)| baton_runtime::gemm::fp8::plan_for_gpu(gpu, m, n, k).0)
            .collect(),
    };
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// Verifies, then benchmarks `shapes` with `reps` timed runs each (each
/// shape's output checked against cuBLASLt blockwise's first); prints a
/// table, the ratios and their geometric means; writes every result to
/// `json` when given.
/// `kernel` forces one of [`VARIANTS`] instead of the heuristic;
/// `stream_k = Some((min_segment, extra_waves))` turns stream-K on for the
/// timed runs; `split_k = Some(n)` runs `n` workers per work unit (with
/// `kernel`: the calibration rows of the split-K cost, timed as the sweep
/// times its rows; a count the plan refuses fails that shape's row with
/// the typed error); `chart` writes a PNG bar chart of TFLOP/s per shape
/// (ours, cuBLASLt blockwise, cuBLASLt tensorwise).
pub fn gemm_fp8(
    ordinal: usize,
    shapes: &[(usize, usize, usize)],
    reps: usize,
    kernel: Option<&'static str>,
    (stream_k, split_k): (Option<(u32, u32)>, Option<u32>),
    chart: Option<&Path>,
    json: Option<&Path>,
) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    crate::commands::print_gpu_line(&gpu);
    if !verify(&gpu, &kernels, Some(&timed_kernels(&gpu, shapes, kernel))) {
        println!("FP8 GEMM verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    let bar = progress::bar((shapes.len() * reps) as u64);
    let mut rows: Vec<ShapeResult> = Vec::new();
    // Each row's split count (the JSON has its grid and `stream_k: [1, 0]`).
    let mut splits: Vec<Option<u32>> = Vec::new();
    let mut failed = false;
    for &mnk in shapes {
        bar.set_message(format!("{}x{}x{}", mnk.0, mnk.1, mnk.2));
        let r = bench_shape(
            &gpu,
            &kernels,
            mnk,
            kernel,
            (stream_k, split_k),
            reps,
            || bar.inc(1),
        );
        match r {
            Ok(r) => {
                splits.push(r.split_k);
                rows.push(fp8_result(&r, reps))
            }
            Err(e) => {
                // Keep going: one shape's failure (ours or a reference's)
                // should not hide the rest of a sweep.
                bar.suspend(|| println!("bench {mnk:?}: FAIL {e}"));
                failed = true;
            }
        }
    }
    bar.finish_and_clear();
    println!(
        "| M×N×K | ours: kernel / grid | ours ms | cuBLASLt blockwise ms | cuBLASLt tensorwise ms | ours TFLOP/s | blockwise TFLOP/s | tensorwise TFLOP/s | ours/blockwise | ours/tensorwise | check vs blockwise |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (r, split) in rows.iter().zip(&splits) {
        let (b, t) = (&r.references[0], &r.references[1]);
        println!(
            "| {}×{}×{} | {} / {} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} | {} |",
            r.m,
            r.n,
            r.k,
            r.config,
            grid_cell(r.grid, r.stream_k, *split),
            r.ours_ms,
            b.ms,
            t.ms,
            r.ours_tflops,
            b.tflops,
            t.tflops,
            b.ratio,
            t.ratio,
            crate::bench::check_cell(r),
        );
        failed |= !r.check_passed();
    }
    let vs_block: Vec<f64> = rows.iter().map(|r| r.references[0].ratio).collect();
    let vs_tensor: Vec<f64> = rows.iter().map(|r| r.references[1].ratio).collect();
    println!(
        "geometric mean ours/cuBLASLt blockwise: {:.3} (min {:.3}); ours/cuBLASLt tensorwise: {:.3}",
        geomean(&vs_block),
        vs_block.iter().cloned().fold(f64::INFINITY, f64::min),
        geomean(&vs_tensor)
    );
    if let Some(path) = chart {
        match crate::chart::write_bar_chart(path, &fp8_chart(gpu.name(), &rows)) {
            Ok(()) => println!("chart: {}", path.display()),
            Err(e) => println!("chart not written: {e}"),
        }
    }
    let report = BenchReport {
        command: "bench gemm-fp8".into(),
        gpu: gpu.name().into(),
        sms: gpu.sm_count(),
        copy_gbps: None,
        summary: Summary::of(&vs_block),
        results: rows,
        skipped: Vec::new(),
    };
    failed |= !crate::report::write_if_asked(json, &report);
    if failed { Outcome::Fail } else { Outcome::Pass }
}

/// The grid cell of a `gemm-fp8` table row: the CTAs, then `split N` for
/// a split-K run or `skSwW` for stream-K (minimum segment, extra waves).
///
/// ```
/// use baton_cli::fp8_bench::grid_cell;
/// assert_eq!(grid_cell(128, None, None), "128");
/// assert_eq!(grid_cell(128, Some([1, 0]), Some(8)), "128 split 8");
/// assert_eq!(grid_cell(132, Some([4, 1]), None), "132 sk4w1");
/// ```
pub fn grid_cell(grid: u32, stream_k: Option<[u32; 2]>, split_k: Option<u32>) -> String {
    match (split_k, stream_k) {
        (Some(n), _) => format!("{grid} split {n}"),
        (None, Some([s, w])) => format!("{grid} sk{s}w{w}"),
        (None, None) => grid.to_string(),
    }
}

/// A timed FP8 row as a [`ShapeResult`]: references cuBLASLt blockwise
/// (the ratio's) and tensorwise.
pub fn fp8_result(r: &Fp8BenchRow, reps: usize) -> ShapeResult {
    let (m, n, k) = r.mnk;
    let reference = |name: &str, ms: f64| ReferenceResult {
        name: name.into(),
        ms,
        tflops: r.tflops(ms),
        ratio: ms / r.ours_ms,
    };
    ShapeResult {
        m,
        n,
        k,
        beta: 0.0,
        config: r
            .kernel
            .trim_start_matches("baton_gemm_fp8_blockwise_")
            .into(),
        grid: r.grid,
        stream_k: r.stream_k.map(|(s, w)| [s, w]),
        reps,
        ours_ms: r.ours_ms,
        ours_tflops: r.tflops(r.ours_ms),
        ours_gbps: gbps(Family::Fp8.min_bytes(m, n, k) as usize, r.ours_ms),
        byte_bound: Family::Fp8.byte_bound(m, n, k),
        references: vec![
            reference("cuBLASLt blockwise", r.blockwise_ms),
            reference("cuBLASLt tensorwise", r.tensorwise_ms),
        ],
        ratio: r.blockwise_ms / r.ours_ms,
        check: Some(ShapeCheck {
            reference: "cuBLASLt blockwise".into(),
            rel_diff: r.check.rel_error.is_finite().then_some(r.check.rel_error),
            tolerance: FP8_CHECK_TOLERANCE,
            passed: r.check.passes(FP8_CHECK_TOLERANCE),
        }),
    }
}

/// Relative difference ours vs cuBLASLt blockwise a shape's check allows.
pub const FP8_CHECK_TOLERANCE: f64 = 2e-2;

/// The bar chart of FP8 results: ours, cuBLASLt blockwise and tensorwise
/// TFLOP/s per shape, ours/blockwise above each.
pub fn fp8_chart(gpu: &str, rows: &[ShapeResult]) -> BarChart {
    BarChart {
        title: format!("Blockwise FP8 GEMM: baton vs cuBLASLt ({gpu})"),
        series: vec![
            "baton (blockwise)".into(),
            "cuBLASLt blockwise".into(),
            "cuBLASLt tensorwise".into(),
        ],
        groups: rows
            .iter()
            .map(|r| BarGroup {
                label: format!("{}×{}×{}", r.m, r.n, r.k),
                values: std::iter::once(r.ours_tflops)
                    .chain(r.references.iter().map(|x| x.tflops))
                    .collect(),
                note: Some(format!("{:.3}×", r.ratio)),
            })
            .collect(),
        y_label: "TFLOP/s".into(),
        note_meaning: "above the bars: baton / cuBLASLt blockwise throughput".into(),
    }
}
