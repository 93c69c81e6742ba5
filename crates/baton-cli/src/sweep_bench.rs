//! `baton bench gemm --sweep` and `baton bench gemm-fp8 --sweep`: the
//! [`sweep`](crate::sweep) grid run ours beside cuBLAS (BF16) or cuBLASLt
//! blockwise (FP8) in one process, after the usual checks; a table with
//! each shape's ratio and, for byte-bound shapes, our GB/s beside a
//! device-to-device copy measured in the same run; the minimum and the
//! geometric mean; a heatmap PNG of the ratio by shape; every result in
//! `--json`.

use crate::bench::{self, bf16_result, check_cell, cudarc_blas};
use crate::chart::{self, Heatmap};
use crate::commands::{Outcome, open_gpu_kernels};
use crate::fp8_bench::{self, fp8_result};
use crate::progress;
use crate::report::{self, BenchReport, ShapeResult, SkippedShape, Summary};
use crate::sweep::{self, Family, SWEEP_M, SWEEP_NK, SweepShape};
use baton_reference::copy_bandwidth::device_copy_gbps;
use baton_reference::gemm_check::GemmTuning;
use baton_reference::{gemm_cublas, gemm_fp8_ref};
use baton_runtime::Variant;
use std::path::Path;

/// What a sweep runs with.
#[derive(Clone, Debug)]
pub struct SweepArgs<'a> {
    /// CUDA device ordinal.
    pub ordinal: usize,
    /// Which GEMM.
    pub family: Family,
    /// Most timed runs per shape (big shapes get fewer, at least 5).
    pub max_reps: usize,
    /// Memory budget of one shape's input set, bytes.
    pub budget_bytes: u64,
    /// Where the heatmap PNG goes.
    pub heatmap: &'a Path,
    /// Where the JSON goes, if anywhere.
    pub json: Option<&'a Path>,
    /// BF16 tuning (forced config, group, stream-K); default: heuristic.
    pub tuning: GemmTuning,
}

/// Bytes of the device-to-device copy the sweep measures (1 GiB each way).
pub const COPY_BYTES: usize = 1 << 30;

/// Runs the sweep.
pub fn run(args: &SweepArgs<'_>) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(args.ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    crate::commands::print_gpu_line(&gpu);
    let verified = match args.family {
        Family::Bf16 => bench::verify(&gpu, &kernels, args.tuning),
        Family::Fp8 => fp8_bench::verify(&gpu, &kernels, None),
    };
    if !verified {
        println!("verification failed; not benchmarking.");
        return Outcome::Fail;
    }
    let copy_gbps = match device_copy_gbps(&gpu, COPY_BYTES, 20) {
        Ok(g) => {
            println!("device-to-device copy (1 GiB, same run): {g:.0} GB/s");
            Some(g)
        }
        Err(e) => {
            println!("device-to-device copy: FAIL {e}");
            None
        }
    };
    println!(
        "{}",
        baton_reference::cold_inputs::describe(baton_reference::cold_inputs::l2_bytes(&gpu))
    );
    let blas = match args.family {
        Family::Bf16 => match cudarc_blas(&gpu) {
            Ok(b) => Some(b),
            Err(e) => {
                println!("FAIL: {e}");
                return Outcome::Fail;
            }
        },
        Family::Fp8 => None,
    };
    let shapes = sweep::plan(args.family, args.budget_bytes, args.max_reps);
    let runs: usize = shapes
        .iter()
        .filter(|s| s.skip.is_none())
        .map(|s| s.reps)
        .sum();
    let bar = progress::bar(runs as u64);
    let mut results: Vec<(usize, ShapeResult)> = Vec::new();
    let mut skipped: Vec<SkippedShape> = Vec::new();
    let mut outcome = Outcome::Pass;
    for (index, s) in shapes.iter().enumerate() {
        let (m, n, k) = s.mnk;
        if let Some(why) = &s.skip {
            skipped.push(SkippedShape {
                m,
                n,
                k,
                reason: why.to_string(),
            });
            continue;
        }
        bar.set_message(format!("{m}x{n}x{k}"));
        let r = match (args.family, &blas) {
            (Family::Bf16, Some(blas)) => gemm_cublas::bench_shape(
                &gpu,
                &kernels,
                blas,
                s.mnk,
                args.tuning,
                0.0,
                s.reps,
                || bar.inc(1),
            )
            .map(|r| bf16_result(&r, s.reps)),
            _ => {
                gemm_fp8_ref::bench_shape(&gpu, &kernels, s.mnk, None, (None, None), s.reps, || {
                    bar.inc(1)
                })
                .map(|r| fp8_result(&r, s.reps))
            }
        };
        match r {
            Ok(r) => {
                if !r.check_passed() {
                    outcome = Outcome::Fail;
                }
                results.push((index, r));
            }
            // The reference has no algorithm for this shape: nothing to
            // compare with (skipped, and said so), not a failure of ours.
            Err(e @ baton_reference::Error::CublasLtNoAlgorithm { .. }) => {
                bar.suspend(|| println!("bench {m}x{n}x{k}: skipped: {e}"));
                skipped.push(SkippedShape {
                    m,
                    n,
                    k,
                    reason: e.to_string(),
                });
            }
            Err(e) => {
                bar.suspend(|| println!("bench {m}x{n}x{k}: FAIL {e}"));
                outcome = Outcome::Fail;
            }
        }
    }
    bar.finish_and_clear();
    print!("{}", table(args.family, &shapes, &results, copy_gbps));
    if !skipped.is_empty() {
        println!("skipped ({}):", skipped.len());
        for s in &skipped {
            println!("  {}x{}x{}: {}", s.m, s.n, s.k, s.reason);
        }
    }
    let ratios: Vec<f64> = results
        .iter()
        .filter(|(_, r)| r.check_passed())
        .map(|(_, r)| r.ratio)
        .collect();
    let summary = Summary::of(&ratios);
    let reference = reference_name(args.family);
    match (summary.geomean_ratio, summary.min_ratio) {
        (Some(g), Some(min)) => {
            let worst = results
                .iter()
                .map(|(_, r)| r)
                .filter(|r| r.check_passed())
                .min_by(|a, b| a.ratio.total_cmp(&b.ratio))
                .map(|r| format!(" at {}x{}x{}", r.m, r.n, r.k))
                .unwrap_or_default();
            println!(
                "ours/{reference} over {} shapes: geometric mean {g:.3}, min {min:.3}{worst}",
                summary.shapes
            );
        }
        _ => println!("no shape timed"),
    }
    let map = heatmap(args.family, gpu.name(), &shapes, &results);
    match chart::write_heatmap(args.heatmap, &map) {
        Ok(()) => println!("heatmap: {}", args.heatmap.display()),
        Err(e) => println!("heatmap not written: {e}"),
    }
    let report = BenchReport {
        command: format!(
            "bench {} --sweep",
            match args.family {
                Family::Bf16 => "gemm",
                Family::Fp8 => "gemm-fp8",
            }
        ),
        gpu: gpu.name().into(),
        sms: gpu.sm_count(),
        copy_gbps,
        results: results.into_iter().map(|(_, r)| r).collect(),
        skipped,
        summary,
    };
    if !report::write_if_asked(args.json, &report) {
        outcome = Outcome::Fail;
    }
    outcome
}

fn reference_name(family: Family) -> &'static str {
    match family {
        Family::Bf16 => "cuBLAS",
        Family::Fp8 => "cuBLASLt blockwise",
    }
}

/// The sweep's table: one row per timed shape (index into `shapes`, its
/// result), with GB/s and the share of the copy's GB/s for byte-bound
/// shapes.
pub fn table(
    family: Family,
    shapes: &[SweepShape],
    results: &[(usize, ShapeResult)],
    copy_gbps: Option<f64>,
) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let reference = reference_name(family);
    let _ = writeln!(
        t,
        "{:<20} {:<8} {:<16} {:>4} {:>9} {:>9} {:>8} {:>8} {:>7} {:>8} {:>6}  check",
        "M x N x K",
        "class",
        "ours",
        "reps",
        "ours ms",
        "ref ms",
        "ours TF",
        "ref TF",
        "ratio",
        "GB/s",
        "/copy"
    );
    let _ = writeln!(t, "(ref = {reference}; GB/s for byte-bound shapes only)");
    for (index, r) in results {
        let class = shapes
            .get(*index)
            .map_or("", |s| SWEEP_NK[s.column].class.name());
        let reference = &r.references[0];
        let (gbps, share) = if r.byte_bound {
            (
                format!("{:.0}", r.ours_gbps),
                copy_gbps.map_or(String::new(), |c| format!("{:.2}", r.ours_gbps / c)),
            )
        } else {
            (String::new(), String::new())
        };
        let _ = writeln!(
            t,
            "{:<20} {:<8} {:<16} {:>4} {:>9.4} {:>9.4} {:>8.1} {:>8.1} {:>7.3} {:>8} {:>6}  {}",
            format!("{}x{}x{}", r.m, r.n, r.k),
            class,
            match r.stream_k {
                Some([s, w]) => format!("{}/{}/sk{s}w{w}", r.config, r.grid),
                None => format!("{}/{}", r.config, r.grid),
            },
            r.reps,
            r.ours_ms,
            reference.ms,
            r.ours_tflops,
            reference.tflops,
            r.ratio,
            gbps,
            share,
            check_cell(r),
        );
    }
    t
}

/// The heatmap of the ratio: rows M, columns (N, K); skipped and failed
/// shapes empty.
pub fn heatmap(
    family: Family,
    gpu: &str,
    shapes: &[SweepShape],
    results: &[(usize, ShapeResult)],
) -> Heatmap {
    let mut cells = vec![vec![None; SWEEP_NK.len()]; SWEEP_M.len()];
    for (index, r) in results {
        if let Some(s) = shapes.get(*index)
            && r.check_passed()
        {
            cells[s.row][s.column] = Some(r.ratio);
        }
    }
    Heatmap {
        title: format!(
            "{} GEMM sweep: baton / {} throughput ({gpu})",
            match family {
                Family::Bf16 => "BF16",
                Family::Fp8 => "Blockwise FP8",
            },
            reference_name(family)
        ),
        row_axis: "M".into(),
        column_axis: "N×K".into(),
        rows: SWEEP_M.iter().map(|m| m.to_string()).collect(),
        columns: SWEEP_NK.iter().map(sweep::column_label).collect(),
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ReferenceResult;

    fn result(m: usize, n: usize, k: usize, ratio: f64, passed: bool) -> ShapeResult {
        ShapeResult {
            m,
            n,
            k,
            beta: 0.0,
            config: "128x64".into(),
            grid: 128,
            stream_k: None,
            reps: 21,
            ours_ms: 0.1,
            ours_tflops: 1.0,
            ours_gbps: 2000.0,
            byte_bound: Family::Bf16.byte_bound(m, n, k),
            references: vec![ReferenceResult {
                name: "cuBLAS".into(),
                ms: 0.1 * ratio,
                tflops: 1.0 / ratio,
                ratio,
            }],
            ratio,
            check: Some(crate::report::ShapeCheck {
                reference: "cuBLAS".into(),
                rel_diff: Some(1e-3),
                tolerance: 1e-2,
                passed,
            }),
        }
    }

    #[test]
    fn heatmap_places_each_ratio_at_its_m_and_pair() {
        let shapes = sweep::plan(Family::Bf16, 4 << 30, 21);
        let idx = |mnk| shapes.iter().position(|s| s.mnk == mnk).unwrap();
        let results = vec![
            (idx((1, 4096, 4096)), result(1, 4096, 4096, 0.56, true)),
            (
                idx((4096, 1024, 4096)),
                result(4096, 1024, 4096, 0.97, true),
            ),
            (idx((8, 5000, 4096)), result(8, 5000, 4096, 1.3, false)),
        ];
        let map = heatmap(Family::Bf16, "H100", &shapes, &results);
        assert_eq!(map.rows.len(), 13);
        assert_eq!(map.columns.len(), 7);
        assert_eq!(map.cells[0][0], Some(0.56));
        assert_eq!(map.cells[9][2], Some(0.97));
        assert_eq!(map.cells[1][6], None, "a failed check shows no ratio");
        assert_eq!(map.cells.iter().flatten().flatten().count(), 2);
    }

    #[test]
    fn table_shows_gbps_only_for_byte_bound_shapes() {
        let shapes = sweep::plan(Family::Bf16, 4 << 30, 21);
        let idx = |mnk| shapes.iter().position(|s| s.mnk == mnk).unwrap();
        let results = vec![
            (idx((1, 4096, 4096)), result(1, 4096, 4096, 0.56, true)),
            (
                idx((4096, 4096, 4096)),
                result(4096, 4096, 4096, 0.96, true),
            ),
        ];
        let t = table(Family::Bf16, &shapes, &results, Some(2800.0));
        let line = |p: &str| t.lines().find(|l| l.starts_with(p)).unwrap().to_string();
        let small = line("1x4096x4096 ");
        assert!(small.contains(" 2000 ") && small.contains(" 0.71 "), "{t}");
        assert!(small.contains("square"), "{t}");
        let big = line("4096x4096x4096 ");
        assert!(!big.contains(" 2000 "), "{t}");
    }
}
