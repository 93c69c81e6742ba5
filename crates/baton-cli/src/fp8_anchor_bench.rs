//! `baton bench gemm-fp8 --flush-l2`: the blockwise FP8 GEMM and cuBLASLt
//! blockwise timed by the DeepGEMM anchor's method
//! ([`baton_reference::gemm_fp8_anchor`]: its input distribution, a 256 MiB
//! L2 flush before each call, median of 50), so the figures sit in one
//! table with `../shared/anchors/deepgemm/run.py`'s, run in the same device
//! call (issue #19).

use crate::bench::geomean;
use crate::commands::{Outcome, open_gpu_kernels};
use crate::fp8_bench::{timed_kernels, verify};
use baton_reference::gemm_fp8_anchor::{FlushedRow, REPS, bench_shape_flushed_split};
use baton_runtime::Variant;
use std::path::Path;

/// The anchor's default shapes: 4096³, 8192³, and M = 64, 128, 4096 over
/// DeepGEMM's six published N×K pairs.
pub fn anchor_shapes() -> Vec<(usize, usize, usize)> {
    const NK: [(usize, usize); 6] = [
        (2112, 7168),
        (24576, 1536),
        (32768, 512),
        (7168, 16384),
        (4096, 7168),
        (7168, 2048),
    ];
    let mut v = vec![(4096, 4096, 4096), (8192, 8192, 8192)];
    v.extend(
        [64, 128, 4096]
            .into_iter()
            .flat_map(|m| NK.map(|(n, k)| (m, n, k))),
    );
    v
}

/// One row as JSON.
#[derive(serde::Serialize)]
struct JsonRow {
    m: usize,
    n: usize,
    k: usize,
    kernel: &'static str,
    splits: u32,
    sets: usize,
    ours_ms: f64,
    ours_tflops: f64,
    cublaslt_blockwise_ms: f64,
    cublaslt_blockwise_tflops: f64,
    ratio: f64,
    rel_diff_vs_cublaslt: f64,
    check_passed: bool,
}

/// Relative difference ours vs cuBLASLt blockwise a row's check allows.
const TOLERANCE: f64 = 2e-2;

/// Verifies (f64 at ragged shapes, cuBLASLt at 2048³), then times each
/// shape by the anchor's method and prints a table with the ratio and its
/// geometric mean; `json` gets every row. Ours is the library's plan
/// (kernel and split-K by the cost model), or `kernel` forced (whole tiles,
/// or `splits` workers per unit).
pub fn gemm_fp8_flushed(
    ordinal: usize,
    shapes: &[(usize, usize, usize)],
    json: Option<&Path>,
    (kernel, splits): (Option<&'static str>, Option<u32>),
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
    println!(
        "anchor method: L2 flushed (256 MiB memset) before each call, median of {REPS}, DeepGEMM's input distribution"
    );
    println!(
        "| M×N×K | ours: kernel | sets | ours TFLOP/s | cuBLASLt blockwise TFLOP/s | ours/blockwise | check vs blockwise |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (mut rows, mut failed): (Vec<FlushedRow>, bool) = (Vec::new(), false);
    for &mnk in shapes {
        match bench_shape_flushed_split(&gpu, &kernels, mnk, kernel, splits) {
            Ok(r) => {
                let ok = r.check.passes(TOLERANCE);
                failed |= !ok;
                println!(
                    "| {}×{}×{} | {}{} | {} | {:.1} | {:.1} | {:.3} | {:.1e} {} |",
                    mnk.0,
                    mnk.1,
                    mnk.2,
                    r.kernel.trim_start_matches("baton_gemm_fp8_blockwise_"),
                    if r.splits > 1 {
                        format!(" split {}", r.splits)
                    } else {
                        String::new()
                    },
                    r.sets,
                    r.tflops(r.ours_ms),
                    r.tflops(r.blockwise_ms),
                    r.blockwise_ms / r.ours_ms,
                    r.check.rel_error,
                    if ok { "PASS" } else { "FAIL" }
                );
                rows.push(r);
            }
            Err(e) => {
                println!("| {}×{}×{} | FAIL {e} |", mnk.0, mnk.1, mnk.2);
                failed = true;
            }
        }
    }
    let ratios: Vec<f64> = rows.iter().map(|r| r.blockwise_ms / r.ours_ms).collect();
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "geometric mean ours/cuBLASLt blockwise (anchor method): {:.3} (min {:.3}) over {} shapes",
        geomean(&ratios),
        min,
        ratios.len()
    );
    if let Some(path) = json {
        let out: Vec<JsonRow> = rows
            .iter()
            .map(|r| JsonRow {
                m: r.shape.0,
                n: r.shape.1,
                k: r.shape.2,
                kernel: r.kernel,
                splits: r.splits,
                sets: r.sets,
                ours_ms: r.ours_ms,
                ours_tflops: r.tflops(r.ours_ms),
                cublaslt_blockwise_ms: r.blockwise_ms,
                cublaslt_blockwise_tflops: r.tflops(r.blockwise_ms),
                ratio: r.blockwise_ms / r.ours_ms,
                rel_diff_vs_cublaslt: r.check.rel_error,
                check_passed: r.check.passes(TOLERANCE),
            })
            .collect();
        match std::fs::File::create(path)
            .map_err(|e| e.to_string())
            .and_then(|f| serde_json::to_writer_pretty(f, &out).map_err(|e| e.to_string()))
        {
            Ok(()) => println!("json: {}", path.display()),
            Err(e) => {
                println!("json {}: {e}", path.display());
                failed = true;
            }
        }
    }
    if failed { Outcome::Fail } else { Outcome::Pass }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_shapes_are_the_runners_twenty() {
        let s = anchor_shapes();
        assert_eq!(s.len(), 20);
        assert_eq!(s[0], (4096, 4096, 4096));
        assert!(s.contains(&(64, 2112, 7168)));
        assert!(s.contains(&(4096, 7168, 2048)));
        assert!(s.iter().all(|&(_, _, k)| k % 128 == 0));
    }
}
