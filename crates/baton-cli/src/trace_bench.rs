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
    let s = row.timeline.summary();
    let (config, splits, grid) = row.plan;
    format!(
        "{m}x{n}x{k}: plan {} ×{splits} on {grid} CTAs; ours {:.1} µs, cuBLAS {:.1} µs (ratio {:.3}); \
         traced launch {:.1} µs, CTA span {:.1} µs, outside CTAs {:.1} µs\n{}",
        config.name(),
        row.ours_ms * 1e3,
        row.cublas_ms * 1e3,
        row.cublas_ms / row.ours_ms,
        row.traced_ms * 1e3,
        s.span_us,
        row.traced_ms * 1e3 - s.span_us,
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
    let mut csv = Timeline::csv_header() + "\n";
    for &shape in shapes {
        match trace_shape(&gpu, &kernels, &blas, shape, tuning, reps, hot) {
            Ok(row) => {
                println!("{}", render(shape, &row));
                csv.push_str(
                    &row.timeline
                        .csv(&format!("{}x{}x{}", shape.0, shape.1, shape.2)),
                );
            }
            Err(e) => {
                println!("FAIL {}x{}x{}: {e}", shape.0, shape.1, shape.2);
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
