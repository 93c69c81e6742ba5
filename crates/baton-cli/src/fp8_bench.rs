//! `baton bench gemm-fp8`: the blockwise-scaled FP8 GEMM verified (f64
//! reference at small and ragged shapes, cuBLASLt blockwise at 2048³), then
//! timed against cuBLASLt blockwise FP8 and cuBLASLt tensorwise FP8 in one
//! process.

use crate::bench::geomean;
use crate::commands::{Outcome, open_gpu_kernels};
use baton_reference::gemm_fp8_check::check_vs_f64;
use baton_reference::gemm_fp8_ref::{Fp8BenchRow, bench_shape, check_vs_cublaslt};
use baton_runtime::Variant;
use baton_runtime::gemm::fp8::VARIANTS;
use std::io::Write as _;

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

/// Verifies, then benchmarks `shapes` with `reps` timed runs each; prints a
/// table, the ratios and their geometric means.
/// `kernel` forces one of [`VARIANTS`] instead of the heuristic;
/// `stream_k = Some((min_segment, extra_waves))` turns stream-K on for the
/// timed runs; `chart` writes a PNG bar chart of TFLOP/s per shape (ours,
/// cuBLASLt blockwise, cuBLASLt tensorwise).
pub fn gemm_fp8(
    ordinal: usize,
    shapes: &[(usize, usize, usize)],
    reps: usize,
    kernel: Option<&'static str>,
    stream_k: Option<(u32, u32)>,
    chart: Option<&std::path::Path>,
) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    println!("GPU: {} ({} SMs)", gpu.name(), gpu.sm_count());
    let mut ok = true;
    let checks = [
        (129, 264, 256),
        (77, 200, 384),
        (1, 1024, 1024),
        (300, 520, 640),
    ];
    for (kernel, mnk) in VARIANTS
        .iter()
        .flat_map(|k| checks.iter().map(move |s| (*k, *s)))
    {
        match check_vs_f64(&gpu, &kernels, kernel, mnk) {
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
    match check_vs_cublaslt(&gpu, &kernels, (2048, 2048, 2048)) {
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
    if !ok {
        println!("FP8 GEMM verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    let total = shapes.len() * reps;
    let mut done = 0;
    let mut rows: Vec<Fp8BenchRow> = Vec::new();
    let mut failed = false;
    for &mnk in shapes {
        let r = bench_shape(&gpu, &kernels, mnk, kernel, stream_k, reps, || {
            done += 1;
            eprint!("\r{done}/{total} {}x{}x{}          ", mnk.0, mnk.1, mnk.2);
            let _ = std::io::stderr().flush();
        });
        match r {
            Ok(r) => rows.push(r),
            Err(e) => {
                // Keep going: one shape's failure (ours or a reference's)
                // should not hide the rest of a sweep.
                println!("\nbench {mnk:?}: FAIL {e}");
                failed = true;
            }
        }
    }
    eprintln!();
    println!(
        "| M×N×K | ours: kernel / grid | ours ms | cuBLASLt blockwise ms | cuBLASLt tensorwise ms | ours TFLOP/s | blockwise TFLOP/s | tensorwise TFLOP/s | ours/blockwise | ours/tensorwise |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {}×{}×{} | {} / {} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} |",
            r.mnk.0,
            r.mnk.1,
            r.mnk.2,
            r.kernel.trim_start_matches("baton_gemm_fp8_blockwise_"),
            match r.stream_k {
                Some((s, w)) => format!("{} sk{s}w{w}", r.grid),
                None => r.grid.to_string(),
            },
            r.ours_ms,
            r.blockwise_ms,
            r.tensorwise_ms,
            r.tflops(r.ours_ms),
            r.tflops(r.blockwise_ms),
            r.tflops(r.tensorwise_ms),
            r.blockwise_ms / r.ours_ms,
            r.tensorwise_ms / r.ours_ms,
        );
    }
    let vs_block: Vec<f64> = rows.iter().map(|r| r.blockwise_ms / r.ours_ms).collect();
    let vs_tensor: Vec<f64> = rows.iter().map(|r| r.tensorwise_ms / r.ours_ms).collect();
    println!(
        "geometric mean ours/cuBLASLt blockwise: {:.3} (min {:.3}); ours/cuBLASLt tensorwise: {:.3}",
        geomean(&vs_block),
        vs_block.iter().cloned().fold(f64::INFINITY, f64::min),
        geomean(&vs_tensor)
    );
    if let Some(path) = chart {
        let groups: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.tflops(r.ours_ms),
                    r.tflops(r.blockwise_ms),
                    r.tflops(r.tensorwise_ms),
                ]
            })
            .collect();
        match crate::chart::write_grouped_bars(path, &groups) {
            Ok(()) => println!(
                "chart: {} (per shape, in table order: ours, cuBLASLt blockwise, cuBLASLt tensorwise)",
                path.display()
            ),
            Err(e) => println!("chart not written: {e}"),
        }
    }
    if failed { Outcome::Fail } else { Outcome::Pass }
}
