//! The `--json` result file of the GEMM benchmarks: every shape's result
//! (shape, configuration, our time and each reference's, ratios, TFLOP/s,
//! GB/s, the check against the reference), the shapes skipped and why, and
//! the summary, for tools to read back ([`read_json`]).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One reference implementation's result on a shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceResult {
    /// Which (`cuBLAS`, `cuBLASLt blockwise`, `cuBLASLt tensorwise`).
    pub name: String,
    /// Median time, ms.
    pub ms: f64,
    /// TFLOP/s at that time.
    pub tflops: f64,
    /// ours/reference throughput (reference ms / our ms).
    pub ratio: f64,
}

/// One shape's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeResult {
    /// M.
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    /// beta of `D = A·Bᵀ + beta·C` (0 for FP8).
    pub beta: f32,
    /// Our configuration (tile config or kernel).
    pub config: String,
    /// CTAs launched.
    pub grid: u32,
    /// Stream-K (minimum segment, extra waves), when on.
    pub stream_k: Option<[u32; 2]>,
    /// Timed runs per side (medians reported).
    pub reps: usize,
    /// Our median time, ms.
    pub ours_ms: f64,
    /// Our TFLOP/s.
    pub ours_tflops: f64,
    /// Our GB/s: the operands and D, each moved once, over our time.
    pub ours_gbps: f64,
    /// Whether bytes bound this shape on the GPU (arithmetic intensity
    /// below the machine's FLOP/byte balance).
    pub byte_bound: bool,
    /// The references, the one the ratio is taken against first.
    pub references: Vec<ReferenceResult>,
    /// ours/first reference.
    pub ratio: f64,
    /// This shape's output checked against a reference before timing;
    /// `None` where the benchmark checks fixed shapes only.
    pub check: Option<ShapeCheck>,
}

impl ShapeResult {
    /// Whether the shape's check passed (or it had none).
    pub fn check_passed(&self) -> bool {
        self.check.as_ref().is_none_or(|c| c.passed)
    }
}

/// A shape's output compared with a reference's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeCheck {
    /// The reference compared with.
    pub reference: String,
    /// ‖ours − reference‖/‖reference‖; `None` when ours had a non-finite
    /// output (a failure).
    pub rel_diff: Option<f64>,
    /// The tolerance.
    pub tolerance: f64,
    /// Whether it passed.
    pub passed: bool,
}

/// A shape the run did not time, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkippedShape {
    /// M.
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    /// The rule that excluded it, in words.
    pub reason: String,
}

/// Geometric mean and minimum of the ratios of the timed shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Shapes timed.
    pub shapes: usize,
    /// Geometric mean of ours/reference.
    pub geomean_ratio: Option<f64>,
    /// Least ours/reference.
    pub min_ratio: Option<f64>,
}

impl Summary {
    /// The summary of `ratios` (`None`s when empty).
    ///
    /// ```
    /// let s = baton_cli::report::Summary::of(&[1.0, 4.0]);
    /// assert_eq!((s.shapes, s.geomean_ratio, s.min_ratio), (2, Some(2.0), Some(1.0)));
    /// ```
    pub fn of(ratios: &[f64]) -> Self {
        let n = ratios.len();
        Self {
            shapes: n,
            geomean_ratio: (n > 0)
                .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64).exp()),
            min_ratio: ratios.iter().copied().reduce(f64::min),
        }
    }
}

/// A benchmark run's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The command (`bench gemm`, `bench gemm --sweep`, `bench gemm-fp8`, …).
    pub command: String,
    /// The GPU's name.
    pub gpu: String,
    /// Its SM count.
    pub sms: u32,
    /// Device-to-device copy GB/s measured in the same run (sweeps).
    pub copy_gbps: Option<f64>,
    /// Every timed shape.
    pub results: Vec<ShapeResult>,
    /// Every shape not timed, with the reason.
    pub skipped: Vec<SkippedShape>,
    /// The ratios' summary (vs each shape's first reference, beta = 0).
    pub summary: Summary,
}

/// Why a JSON file was not written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The contents are not a [`BenchReport`].
    #[error("{path}: not a baton bench report: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// serde_json's error.
        source: serde_json::Error,
    },
}

/// Writes `report` (a [`BenchReport`], or another command's result type)
/// to `path` as pretty-printed JSON. Non-finite numbers (a failed time)
/// are written as `null`.
///
/// ```
/// use baton_cli::report::{BenchReport, Summary, read_json, write_json};
/// let r = BenchReport { command: "bench gemm".into(), gpu: "H100".into(), sms: 132,
///     copy_gbps: None, results: vec![], skipped: vec![], summary: Summary::of(&[]) };
/// let path = std::env::temp_dir().join("baton-report-doc.json");
/// write_json(&path, &r)?;
/// assert_eq!(read_json::<BenchReport>(&path)?, r);
/// # Ok::<(), baton_cli::report::ReportError>(())
/// ```
pub fn write_json<T: Serialize>(path: &Path, report: &T) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(report).map_err(|source| ReportError::Json {
        path: path.into(),
        source,
    })?;
    std::fs::write(path, text + "\n").map_err(|source| ReportError::Io {
        path: path.into(),
        source,
    })
}

/// Reads a report [`write_json`] wrote.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.into(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ReportError::Json {
        path: path.into(),
        source,
    })
}

/// Writes `report` to `path` if one was asked for, printing where (or why
/// not); returns whether that went well.
pub fn write_if_asked<T: Serialize>(path: Option<&Path>, report: &T) -> bool {
    match path {
        None => true,
        Some(p) => match write_json(p, report) {
            Ok(()) => {
                println!("json: {}", p.display());
                true
            }
            Err(e) => {
                println!("json not written: {e}");
                false
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_report(seed: u64) -> BenchReport {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut f = || (next() % 1_000_000) as f64 / 1000.0 + 0.001;
        let results: Vec<ShapeResult> = (0..5)
            .map(|i| {
                let (ours, r1, r2) = (f(), f(), f());
                ShapeResult {
                    m: 1 << i,
                    n: 4096 + 8 * i,
                    k: 512 * (i + 1),
                    beta: if i == 2 { 0.5 } else { 0.0 },
                    config: format!("128x{}c2", 64 << (i % 3)),
                    grid: 132 - i as u32,
                    stream_k: (i % 2 == 0).then_some([8, i as u32]),
                    reps: 21,
                    ours_ms: ours,
                    ours_tflops: f(),
                    ours_gbps: f(),
                    byte_bound: i < 2,
                    references: vec![
                        ReferenceResult {
                            name: "cuBLAS".into(),
                            ms: r1,
                            tflops: f(),
                            ratio: r1 / ours,
                        },
                        ReferenceResult {
                            name: "cuBLASLt tensorwise".into(),
                            ms: r2,
                            tflops: f(),
                            ratio: r2 / ours,
                        },
                    ],
                    ratio: r1 / ours,
                    check: (i != 3).then(|| ShapeCheck {
                        reference: "cuBLAS".into(),
                        rel_diff: (i != 4).then(|| f() * 1e-6),
                        tolerance: 1e-2,
                        passed: i != 4,
                    }),
                }
            })
            .collect();
        let ratios: Vec<f64> = results.iter().map(|r| r.ratio).collect();
        BenchReport {
            command: "bench gemm --sweep".into(),
            gpu: "NVIDIA H100 80GB HBM3".into(),
            sms: 132,
            copy_gbps: Some(f()),
            results,
            skipped: vec![SkippedShape {
                m: 65536,
                n: 16384,
                k: 4096,
                reason: "operands 7.0 GiB over the 4.0 GiB budget".into(),
            }],
            summary: Summary::of(&ratios),
        }
    }

    #[test]
    fn a_report_reads_back_as_written() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64);
        let r = random_report(seed);
        let path = std::env::temp_dir().join(format!("baton-report-{}.json", std::process::id()));
        write_json(&path, &r).unwrap();
        let back: BenchReport = read_json(&path).unwrap();
        assert_eq!(back, r, "seed {seed}");
        // Tools see plain JSON with the documented field names.
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["results"][0]["references"][0]["name"], "cuBLAS");
        assert_eq!(
            v["results"][4]["check"]["rel_diff"],
            serde_json::Value::Null
        );
        assert_eq!(v["results"][3]["check"], serde_json::Value::Null);
        assert!(back.results[3].check_passed() && !back.results[4].check_passed());
        assert_eq!(v["skipped"][0]["m"], 65536);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_file_that_is_not_a_report_is_refused_by_kind() {
        let path =
            std::env::temp_dir().join(format!("baton-not-a-report-{}.json", std::process::id()));
        std::fs::write(&path, "{\"command\": 3}").unwrap();
        assert!(matches!(
            read_json::<BenchReport>(&path),
            Err(ReportError::Json { .. })
        ));
        let _ = std::fs::remove_file(&path);
        assert!(matches!(
            read_json::<BenchReport>(&path),
            Err(ReportError::Io { .. })
        ));
    }

    #[test]
    fn summary_of_no_ratios_is_empty() {
        let s = Summary::of(&[]);
        assert_eq!((s.shapes, s.geomean_ratio, s.min_ratio), (0, None, None));
        let s = Summary::of(&[0.5, 2.0, 0.25]);
        assert!((s.geomean_ratio.unwrap() - 0.629_960_524_947_436_6).abs() < 1e-12);
        assert_eq!(s.min_ratio, Some(0.25));
    }
}
