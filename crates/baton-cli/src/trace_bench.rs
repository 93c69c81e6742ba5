//! `baton bench trace-gemm`: where a BF16 GEMM launch spends its time,
//! from the timeline stamps of a traced build (`BATON_TRACE=1`,
//! `baton_runtime::trace`), beside cuBLAS in the same process.
//!
//! Per shape: ours and cuBLAS timed as `bench gemm` times them (cold
//! inputs, queued, median; `--hot`: one input set each, L2-resident), then
//! one traced launch of ours after a cuBLAS launch. Printed: the plan, both medians and the ratio, the traced
//! launch's event time, its CTAs' span (first entry to last exit) and the
//! difference (time outside any CTA: launch latency and teardown), and the
//! per-event and per-phase spreads over CTAs.

use crate::bench::cudarc_blas;
use crate::commands::{Outcome, open_gpu_kernels, print_gpu_line};
use baton_reference::gemm_check::GemmTuning;
use baton_reference::gemm_cublas::{TraceRow, trace_shape};
use baton_reference::gemm_fp8_ref::{Fp8TraceRow, trace_shape as trace_shape_fp8};
use baton_runtime::Variant;
use baton_runtime::trace::Timeline;
use std::path::Path;

/// One shape's report, as printed.
///
/// ```
/// use baton_runtime::gemm::GemmConfig;
/// let row = baton_reference::gemm_cublas::TraceRow {
///     plan: (GemmConfig::T128x64, 1, 128),
///     ours_ms: 0.022,
///     cublas_ms: 0.019,
///     traced_ms: 0.023,
///     timeline: Default::default(),
/// };
/// let text = baton_cli::trace_bench::render((1024, 1024, 4096), &row);
/// assert!(text.contains("1024x1024x4096") && text.contains("128x64"));
/// ```
pub fn render((m, n, k): (usize, usize, usize), row: &TraceRow) -> String {
    let (config, splits, grid) = row.plan;
    render_timed(
        (m, n, k),
        &format!("{} ×{splits} on {grid} CTAs", config.name()),
        ("cuBLAS", row.cublas_ms),
        (row.ours_ms, row.traced_ms),
        &row.timeline,
    )
}

/// [`render`] of an FP8 trace (`bench trace-gemm-fp8`), beside cuBLASLt
/// blockwise.
///
/// ```
/// let row = baton_reference::gemm_fp8_ref::Fp8TraceRow {
///     plan: ("baton_gemm_fp8_blockwise_64x128_db", 1, 132),
///     ours_ms: 0.0155,
///     blockwise_ms: 0.0160,
///     traced_ms: 0.0156,
///     timeline: Default::default(),
/// };
/// let text = baton_cli::trace_bench::render_fp8((64, 32768, 512), &row);
/// assert!(text.contains("64x32768x512") && text.contains("64x128_db") && text.contains("cuBLASLt"));
/// ```
pub fn render_fp8((m, n, k): (usize, usize, usize), row: &Fp8TraceRow) -> String {
    let (kernel, splits, grid) = row.plan;
    render_timed(
        (m, n, k),
        &format!("{kernel} ×{splits} on {grid} CTAs"),
        ("cuBLASLt blockwise", row.blockwise_ms),
        (row.ours_ms, row.traced_ms),
        &row.timeline,
    )
}

/// The report of one traced shape: the plan, both medians and their ratio,
/// the traced launch against its CTAs' span, and the timeline's spreads.
fn render_timed(
    (m, n, k): (usize, usize, usize),
    plan: &str,
    (reference, reference_ms): (&str, f64),
    (ours_ms, traced_ms): (f64, f64),
    timeline: &Timeline,
) -> String {
    let s = timeline.summary();
    format!(
        "{m}x{n}x{k}: plan {plan}; ours {:.1} µs, {reference} {:.1} µs (ratio {:.3}); \
         traced launch {:.1} µs, CTA span {:.1} µs, outside CTAs {:.1} µs\n{}",
        ours_ms * 1e3,
        reference_ms * 1e3,
        reference_ms / ours_ms,
        traced_ms * 1e3,
        s.span_us,
        traced_ms * 1e3 - s.span_us,
        s.render()
    )
}

/// Runs the trace for each shape (`hot`: one input set per library, the
/// operands L2-resident; see `trace_shape`); fails on the first error.
/// With `per_cta`, every CTA's events go to that CSV file too
/// (`Timeline::csv`).
pub fn run(
    ordinal: usize,
    shapes: &[(usize, usize, usize)],
    tuning: GemmTuning,
    reps: usize,
    hot: bool,
    per_cta: Option<&Path>,
) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    print_gpu_line(&gpu);
    let blas = match cudarc_blas(&gpu) {
        Ok(b) => b,
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    trace_each(shapes, per_cta, |shape| {
        let row = trace_shape(&gpu, &kernels, &blas, shape, tuning, reps, hot)?;
        Ok((render(shape, &row), row.timeline))
    })
}

/// `bench trace-gemm-fp8`: [`run`] for the FP8 blockwise GEMM, beside
/// cuBLASLt blockwise (`kernel`, `split_k`: as `bench gemm-fp8 --kernel`
/// and `--fp8-split-k`; default the plan's).
pub fn run_fp8(
    ordinal: usize,
    shapes: &[(usize, usize, usize)],
    (kernel, split_k): (Option<&str>, Option<u32>),
    reps: usize,
    hot: bool,
    per_cta: Option<&Path>,
) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    print_gpu_line(&gpu);
    trace_each(shapes, per_cta, |shape| {
        let row = trace_shape_fp8(&gpu, &kernels, shape, kernel, split_k, reps, hot)?;
        Ok((render_fp8(shape, &row), row.timeline))
    })
}

/// Traces each shape (`trace`: its report and timeline), prints the
/// reports and, when asked, writes every CTA's events to `per_cta` as CSV;
/// fails on the first error.
fn trace_each(
    shapes: &[(usize, usize, usize)],
    per_cta: Option<&Path>,
    mut trace: impl FnMut((usize, usize, usize)) -> baton_reference::Result<(String, Timeline)>,
) -> Outcome {
    let mut csv = Timeline::csv_header() + "\n";
    for &(m, n, k) in shapes {
        match trace((m, n, k)) {
            Ok((report, timeline)) => {
                println!("{report}");
                csv.push_str(&timeline.csv(&format!("{m}x{n}x{k}")));
            }
            Err(e) => {
                println!("FAIL {m}x{n}x{k}: {e}");
                return Outcome::Fail;
            }
        }
    }
    if let Some(path) = per_cta {
        if let Err(e) = std::fs::write(path, csv) {
            println!("FAIL: writing {}: {e}", path.display());
            return Outcome::Fail;
        }
        println!("per-CTA events: {}", path.display());
    }
    Outcome::Pass
}
