//! `baton bench gemm-block-scaled`: the sm_100a MXFP8 / NVFP4 block-scaled
//! GEMMs (issue #8) verified — against f64 of the dequantized inputs at
//! small and ragged shapes, against cuBLASLt's block-scaled GEMM at 2048³ —
//! then timed against cuBLASLt in one process.
//!
//! Blackwell (sm_100a) only: without a GPU, or on any other GPU, it prints
//! `SKIPPED: …` and exits 77. **Never run on a B200 so far.**

use crate::bench::geomean;
use crate::commands::{Outcome, open_any_gpu};
use crate::report::{BenchReport, ReferenceResult, ShapeResult, Summary};
use baton::block_scale::{Mxfp8, Nvfp4};
use baton_reference::gemm_block_scaled_check::{RAGGED_SHAPES, check_vs_f64};
use baton_reference::gemm_block_scaled_ref::{
    BlockScaledBenchRow, LtBlockScaledFormat, bench_shape, check_vs_cublaslt, validate,
};
use baton_runtime::{Gpu, Kernels, Target, Variant};
use std::fmt::Write as _;
use std::path::Path;

/// The timed shapes (M, N, K).
pub const BLOCK_SCALED_SHAPES: [(usize, usize, usize); 3] =
    [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 16384)];

/// The shape checked against cuBLASLt before timing.
pub const CUBLASLT_CHECK: (usize, usize, usize) = (2048, 2048, 2048);

/// Largest relative Frobenius error (vs f64) or difference (vs cuBLASLt)
/// that passes.
pub const TOLERANCE: f64 = 1e-2;

/// One block-scaled format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// e4m3 elements, ue8m0 scale per 32.
    Mxfp8,
    /// e2m1 elements, ue4m3 scale per 16.
    Nvfp4,
}

impl Format {
    /// `"mxfp8"` / `"nvfp4"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mxfp8 => "mxfp8",
            Format::Nvfp4 => "nvfp4",
        }
    }
}

/// `--format`: one format or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// MXFP8 only.
    Mxfp8,
    /// NVFP4 only.
    Nvfp4,
    /// MXFP8, then NVFP4.
    Both,
}

impl FormatArg {
    /// The formats to run, in order.
    ///
    /// ```
    /// use baton_cli::block_scaled_bench::{Format, FormatArg};
    /// assert_eq!(FormatArg::Both.formats(), [Format::Mxfp8, Format::Nvfp4]);
    /// assert_eq!(FormatArg::Nvfp4.formats(), [Format::Nvfp4]);
    /// ```
    pub fn formats(self) -> Vec<Format> {
        match self {
            FormatArg::Mxfp8 => vec![Format::Mxfp8],
            FormatArg::Nvfp4 => vec![Format::Nvfp4],
            FormatArg::Both => vec![Format::Mxfp8, Format::Nvfp4],
        }
    }
}

/// Checks every timed shape for every format against what the cuBLASLt
/// reference accepts (N a multiple of 8, K of 4 scale blocks), before any
/// GPU is opened. Error: the first refusal, naming format and shape.
pub fn check_shapes(formats: &[Format], shapes: &[(usize, usize, usize)]) -> Result<(), String> {
    for &f in formats {
        for &(m, n, k) in shapes {
            let r = match f {
                Format::Mxfp8 => validate::<Mxfp8>(Target::Sm100a, (m, n, k), m * n),
                Format::Nvfp4 => validate::<Nvfp4>(Target::Sm100a, (m, n, k), m * n),
            };
            r.map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Why this command cannot run on GPU `ordinal` (`name`, `target`): `None`
/// on sm_100a.
///
/// ```
/// use baton_cli::block_scaled_bench::skip_reason;
/// use baton_runtime::Target;
/// assert!(skip_reason(0, "NVIDIA B200", Target::Sm100a).is_none());
/// assert!(skip_reason(0, "NVIDIA H100", Target::Sm90a).unwrap().contains("needs sm_100a"));
/// ```
pub fn skip_reason(ordinal: usize, name: &str, target: Target) -> Option<String> {
    (target != Target::Sm100a).then(|| {
        format!(
            "needs {} (the block-scaled GEMMs and cuBLASLt's MXFP8/NVFP4 run on Blackwell); GPU {ordinal} is {name} ({target})",
            Target::Sm100a
        )
    })
}

/// Opens GPU `ordinal` if it is sm_100a and loads the release kernels, or
/// prints `SKIPPED: …` (no usable GPU, another architecture) / `FAIL: …`
/// and returns the outcome to exit with.
fn open_sm100a(ordinal: usize) -> Result<(Gpu, Kernels), Outcome> {
    let gpu = open_any_gpu(ordinal).map_err(|(o, why)| {
        let word = if o == Outcome::Skip {
            "SKIPPED"
        } else {
            "FAIL"
        };
        println!("{word}: {why}");
        o
    })?;
    if let Some(why) = skip_reason(ordinal, gpu.name(), gpu.target()) {
        println!("SKIPPED: {why}");
        return Err(Outcome::Skip);
    }
    match gpu.load_kernels(Variant::Release) {
        Ok(k) => Ok((gpu, k)),
        Err(e) => {
            println!("FAIL: {e}");
            Err(Outcome::Fail)
        }
    }
}

fn pass_word(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// The f64 checks (ragged shapes, alpha 0.75, beta alternating 0 / 0.5)
/// and the cuBLASLt check of format `F`; prints a line each, returns
/// whether all passed.
fn verify<F: LtBlockScaledFormat>(gpu: &Gpu, kernels: &Kernels) -> bool {
    let mut ok = true;
    for (i, &(m, n, k)) in RAGGED_SHAPES.iter().enumerate() {
        let beta = if i % 2 == 0 { 0.0 } else { 0.5 };
        match check_vs_f64::<F>(gpu, kernels, (m, n, k), 0.75, beta) {
            Ok(c) => {
                let pass = c.passes(TOLERANCE);
                ok &= pass;
                println!(
                    "verify {} {m}x{n}x{k} beta={beta} vs f64: rel err {:.2e} {}",
                    F::NAME,
                    c.rel_error,
                    pass_word(pass)
                );
            }
            Err(e) => {
                ok = false;
                println!("verify {} {m}x{n}x{k} vs f64: FAIL {e}", F::NAME);
            }
        }
    }
    let (m, n, k) = CUBLASLT_CHECK;
    match check_vs_cublaslt::<F>(gpu, kernels, CUBLASLT_CHECK) {
        Ok(c) => {
            let pass = c.passes(TOLERANCE);
            ok &= pass;
            println!(
                "verify {} {m}x{n}x{k} vs cuBLASLt: rel diff {:.2e} {}",
                F::NAME,
                c.rel_error,
                pass_word(pass)
            );
        }
        Err(e) => {
            ok = false;
            println!("verify {} {m}x{n}x{k} vs cuBLASLt: FAIL {e}", F::NAME);
        }
    }
    ok
}

/// The results as a Markdown table, then the geometric mean of ours /
/// cuBLASLt per format and over all rows.
///
/// ```
/// use baton_cli::block_scaled_bench::table;
/// use baton_reference::gemm_block_scaled_ref::BlockScaledBenchRow;
/// let row = |format, ours_ms| BlockScaledBenchRow {
///     format, mnk: (4096, 4096, 4096), grid: 148, ours_ms, cublaslt_ms: 1.0,
/// };
/// let t = table(&[row("mxfp8", 0.5), row("nvfp4", 2.0)]);
/// assert!(t.contains("| mxfp8 | 4096×4096×4096 | 148 | 0.500 | 1.000 | 274.9 | 137.4 | 2.000 |"));
/// assert!(t.contains("geometric mean ours/cuBLASLt: mxfp8 2.000, nvfp4 0.500, all 1.000"));
/// ```
pub fn table(rows: &[BlockScaledBenchRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| format | M×N×K | grid | ours ms | cuBLASLt ms | ours TFLOP/s | cuBLASLt TFLOP/s | ours/cuBLASLt |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for r in rows {
        let (m, n, k) = r.mnk;
        let _ = writeln!(
            s,
            "| {} | {m}×{n}×{k} | {} | {:.3} | {:.3} | {:.1} | {:.1} | {:.3} |",
            r.format,
            r.grid,
            r.ours_ms,
            r.cublaslt_ms,
            r.tflops(r.ours_ms),
            r.tflops(r.cublaslt_ms),
            r.ratio()
        );
    }
    let mut means = Vec::new();
    for format in ["mxfp8", "nvfp4"] {
        let ratios: Vec<f64> = rows
            .iter()
            .filter(|r| r.format == format)
            .map(BlockScaledBenchRow::ratio)
            .collect();
        if !ratios.is_empty() {
            means.push(format!("{format} {:.3}", geomean(&ratios)));
        }
    }
    if !rows.is_empty() {
        let all: Vec<f64> = rows.iter().map(BlockScaledBenchRow::ratio).collect();
        means.push(format!("all {:.3}", geomean(&all)));
        let _ = writeln!(s, "geometric mean ours/cuBLASLt: {}", means.join(", "));
    }
    s
}

/// `baton bench gemm-block-scaled`: checks the shapes, opens an sm_100a GPU
/// (else SKIPPED, exit 77), verifies every format in `format` (f64 at
/// [`RAGGED_SHAPES`], cuBLASLt at [`CUBLASLT_CHECK`]), then times ours and
/// cuBLASLt on `shapes` (default [`BLOCK_SCALED_SHAPES`]) with `reps` timed
/// runs each and prints [`table`]; writes every result to `json` when
/// given (no per-shape check: the checks are the fixed shapes above).
pub fn gemm_block_scaled(
    ordinal: usize,
    format: FormatArg,
    shapes: &[(usize, usize, usize)],
    reps: usize,
    json: Option<&Path>,
) -> Outcome {
    let formats = format.formats();
    let shapes = if shapes.is_empty() {
        &BLOCK_SCALED_SHAPES[..]
    } else {
        shapes
    };
    if let Err(e) = check_shapes(&formats, shapes) {
        println!("FAIL: {e}");
        return Outcome::Fail;
    }
    let reps = reps.max(1);
    let (gpu, kernels) = match open_sm100a(ordinal) {
        Ok(x) => x,
        Err(o) => return o,
    };
    crate::commands::print_gpu_line(&gpu);
    let mut ok = true;
    for &f in &formats {
        ok &= match f {
            Format::Mxfp8 => verify::<Mxfp8>(&gpu, &kernels),
            Format::Nvfp4 => verify::<Nvfp4>(&gpu, &kernels),
        };
    }
    if !ok {
        println!("block-scaled GEMM verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    let bar = crate::progress::bar((formats.len() * shapes.len() * reps) as u64);
    let mut rows = Vec::new();
    for &f in &formats {
        for &mnk in shapes {
            bar.set_message(format!("{} {}x{}x{}", f.name(), mnk.0, mnk.1, mnk.2));
            let mut tick = || bar.inc(1);
            let row = match f {
                Format::Mxfp8 => bench_shape::<Mxfp8>(&gpu, &kernels, mnk, reps, &mut tick),
                Format::Nvfp4 => bench_shape::<Nvfp4>(&gpu, &kernels, mnk, reps, &mut tick),
            };
            match row {
                Ok(r) => rows.push(r),
                Err(e) => {
                    bar.finish_and_clear();
                    println!("bench {} {mnk:?}: FAIL {e}", f.name());
                    return Outcome::Fail;
                }
            }
        }
    }
    bar.finish_and_clear();
    print!("{}", table(&rows));
    let results: Vec<ShapeResult> = rows.iter().map(|r| block_scaled_result(r, reps)).collect();
    let ratios: Vec<f64> = results.iter().map(|r| r.ratio).collect();
    let report = BenchReport {
        command: "bench gemm-block-scaled".into(),
        gpu: gpu.name().into(),
        sms: gpu.sm_count(),
        copy_gbps: None,
        results,
        skipped: Vec::new(),
        summary: Summary::of(&ratios),
    };
    if crate::report::write_if_asked(json, &report) {
        Outcome::Pass
    } else {
        Outcome::Fail
    }
}

/// A timed block-scaled row as a [`ShapeResult`] (config: the format).
pub fn block_scaled_result(r: &BlockScaledBenchRow, reps: usize) -> ShapeResult {
    let (m, n, k) = r.mnk;
    ShapeResult {
        m,
        n,
        k,
        beta: 0.0,
        config: r.format.into(),
        grid: r.grid,
        stream_k: None,
        reps,
        ours_ms: r.ours_ms,
        ours_tflops: r.tflops(r.ours_ms),
        ours_gbps: f64::NAN,
        byte_bound: false,
        references: vec![ReferenceResult {
            name: "cuBLASLt".into(),
            ms: r.cublaslt_ms,
            tflops: r.tflops(r.cublaslt_ms),
            ratio: r.ratio(),
        }],
        ratio: r.ratio(),
        check: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_shapes_pass_the_shape_check_for_both_formats() {
        assert_eq!(
            check_shapes(&FormatArg::Both.formats(), &BLOCK_SCALED_SHAPES),
            Ok(())
        );
        assert_eq!(
            check_shapes(&FormatArg::Both.formats(), &[CUBLASLT_CHECK]),
            Ok(())
        );
    }

    #[test]
    fn shape_check_names_format_shape_and_rule() {
        // K = 192: whole scale tiles for NVFP4 (4 × 16), not for MXFP8 (4 × 32).
        let e = check_shapes(&[Format::Nvfp4, Format::Mxfp8], &[(256, 256, 192)]).unwrap_err();
        assert!(
            e.contains("mxfp8") && e.contains("256x256x192") && e.contains("multiple of 128"),
            "{e}"
        );
        assert!(check_shapes(&[Format::Nvfp4], &[(256, 256, 192)]).is_ok());
        let e = check_shapes(&[Format::Nvfp4], &[(256, 100, 256)]).unwrap_err();
        assert!(e.contains("N a multiple of 8"), "{e}");
    }

    #[test]
    fn only_sm100a_runs() {
        assert_eq!(skip_reason(1, "NVIDIA B200", Target::Sm100a), None);
        let why = skip_reason(1, "NVIDIA H100 80GB HBM3", Target::Sm90a).unwrap();
        assert!(
            why.contains("needs sm_100a") && why.contains("GPU 1") && why.contains("H100"),
            "{why}"
        );
    }

    #[test]
    fn table_of_no_rows_has_no_mean() {
        let t = table(&[]);
        assert_eq!(t.lines().count(), 2, "{t}");
        assert!(!t.contains("geometric mean"), "{t}");
    }

    #[test]
    fn format_names() {
        assert_eq!(
            FormatArg::Both
                .formats()
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>(),
            ["mxfp8", "nvfp4"]
        );
        assert_eq!(FormatArg::Mxfp8.formats(), [Format::Mxfp8]);
    }
}
