//! `baton`: GPU info, the smoke kernel, and the CPU demo.
//!
//! ```text
//! baton info            embedded kernels, ptxas report, GPU
//! baton smoke           run the smoke kernel (both PTX variants), PASS/FAIL table
//! baton probe           exit 0 if a usable Hopper GPU is here, 77 if not
//! baton demo            the pipeline on the CPU backend
//! baton bench …         ours vs the reference (gemm, gemm-fp8 [--sweep] [--json PATH], …)
//! ```
//! Exit codes: 0 pass, 1 fail, 77 skipped (no usable GPU / no PTX).

use baton_cli::args::{parse_config, parse_fp8_kernel, parse_shape};
use baton_cli::bench;
use baton_cli::commands::{self, Outcome};
use baton_cli::sweep::Family;
use baton_cli::sweep_bench;
use baton_runtime::Variant;
use baton_runtime::gemm::{GemmConfig, Repack};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "baton: warp-specialized GPU pipelines in Rust (sm_90a)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum VariantArg {
    Release,
    Debug,
    All,
}

#[derive(Subcommand)]
enum Cmd {
    /// Embedded kernels, their ptxas report, and the GPU (if any).
    Info {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
    },
    /// Run the smoke kernel and print a PASS/FAIL table (exit 77 without a GPU).
    Smoke {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Which PTX build to run.
        #[arg(long, value_enum, default_value = "all")]
        variant: VariantArg,
        /// Input seed (default: fresh from the clock).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Exit 0 if a usable Hopper GPU and the PTX are here, 77 (reason printed) if not.
    Probe {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
    },
    /// The producer/consumer pipeline on the CPU backend (no GPU needed).
    Demo {
        /// Payloads the producer warp sends.
        #[arg(long, default_value_t = 200_000)]
        items: u64,
        /// Consumer warps.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=31))]
        consumers: u32,
    },
    /// Launch a deliberately hung pipeline (debug PTX) and show its report.
    HangCheck {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
    },
    /// Benchmarks: ours and the reference side by side in one process.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Time the attention forward (issue #17) on its shape set; TFLOP/s and a chart.
    Attention(baton_cli::attention_bench::AttentionBenchArgs),
    /// Verify the BF16 GEMM, then time it against cuBLAS on the shape set.
    Gemm {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Timed runs per shape (median reported).
        #[arg(long, default_value_t = 21)]
        reps: usize,
        /// Only these shapes, as MxNxK (repeatable); default: the issue's set.
        #[arg(long, value_parser = parse_shape)]
        shape: Vec<(usize, usize, usize)>,
        /// Where to write the PNG chart.
        #[arg(long, default_value = "gemm-bench.png")]
        chart: std::path::PathBuf,
        /// The shape sweep instead (issue #18): M = 1 … 65536 × square, wide, tall, short-K, long-K and ragged (N, K); a heatmap PNG of the ratio.
        #[arg(long, conflicts_with = "shape")]
        sweep: bool,
        /// With --sweep: where to write the heatmap PNG.
        #[arg(long, default_value = "gemm-sweep.png", requires = "sweep")]
        heatmap: std::path::PathBuf,
        /// With --sweep: skip shapes whose input set exceeds this many GiB of device memory.
        #[arg(long, default_value_t = baton_cli::sweep::DEFAULT_BUDGET_GIB, requires = "sweep")]
        max_gib: f64,
        /// Write every result (shape, config, times, ratios, TFLOP/s, GB/s, checks) as JSON here.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
        /// Force a tile configuration (128x256c2, 128x256, 128x224c2, 128x192c2, 128x160c2, 128x128c2, 128x128, 128x64,
        /// 256x128c2, 256x128, 128x128-pingpong, 128x128c2-pingpong) instead of the heuristic.
        #[arg(long, value_parser = parse_config)]
        config: Option<GemmConfig>,
        /// Rasterization group (rows of work units walked together; tuning).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
        group_m: Option<u32>,
        /// Stream-K with segments of at least this many K blocks (64 each): the units left after the last full wave (+ --sk-waves waves) are split along K across all CTAs (Hopper); 0 turns it off. Default: the heuristic (on, last wave only, from 8 waves up).
        #[arg(long)]
        stream_k: Option<u32>,
        /// With --stream-k: full waves added to the stream-K region before the last, partial one (default 1; 0 splits only the last wave).
        #[arg(long, requires = "stream_k")]
        sk_waves: Option<u32>,
        /// Split-K: each output tile's K blocks on this many CTAs (Hopper; 1 turns split- and stream-K off). Default: the heuristic.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        split_k: Option<u32>,
        /// With --config: read A or B from a copy whose rows are 128 bytes apart, made before each launch (`a`, `b`; `none` reads both in place, the default with --config). Without --config the heuristic decides.
        #[arg(long, value_parser = parse_repack, requires = "config")]
        repack: Option<RepackArg>,
    },
    /// Verify the blockwise FP8 GEMM, then time it against cuBLASLt blockwise and tensorwise FP8.
    GemmFp8 {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Timed runs per shape (median reported).
        #[arg(long, default_value_t = 21)]
        reps: usize,
        /// Only these shapes, as MxNxK (repeatable); default: issue #7's set.
        #[arg(long, value_parser = parse_shape, conflicts_with = "decode")]
        shape: Vec<(usize, usize, usize)>,
        /// The decode sweep instead: M = 8 … 256 at N×K = 7168×16384 and 24576×1536.
        #[arg(long)]
        decode: bool,
        /// Force a kernel variant (e.g. baton_gemm_fp8_blockwise_128x128_db_c2) instead of the heuristic.
        #[arg(long, value_parser = parse_fp8_kernel)]
        kernel: Option<&'static str>,
        /// Stream-K on, with segments of at least this many K blocks (128 each).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        stream_k: Option<u32>,
        /// With --stream-k: full waves added to the stream-K region before the last, partial one (default 1; 0 splits only the last wave).
        #[arg(long, requires = "stream_k")]
        sk_waves: Option<u32>,
        /// Write a PNG bar chart of TFLOP/s per shape (ours, cuBLASLt blockwise, cuBLASLt tensorwise).
        #[arg(long)]
        chart: Option<std::path::PathBuf>,
        /// The shape sweep instead (issue #18), ours vs cuBLASLt blockwise; shapes FP8 cannot run are listed as skipped.
        #[arg(long, conflicts_with_all = ["shape", "decode", "kernel", "stream_k"])]
        sweep: bool,
        /// With --sweep: where to write the heatmap PNG.
        #[arg(long, default_value = "gemm-fp8-sweep.png", requires = "sweep")]
        heatmap: std::path::PathBuf,
        /// With --sweep: skip shapes whose input set exceeds this many GiB of device memory.
        #[arg(long, default_value_t = baton_cli::sweep::DEFAULT_BUDGET_GIB, requires = "sweep")]
        max_gib: f64,
        /// Time by the DeepGEMM anchor's method instead (issue #19): its input distribution, a 256 MiB L2 flush before each call, median of 50; ours (the library's plan, split-K included, or --kernel forced) vs cuBLASLt blockwise. Default shapes: the anchor's 20.
        #[arg(long, conflicts_with_all = ["sweep", "decode", "stream_k", "chart"])]
        flush_l2: bool,
        /// With --kernel: each work unit's K blocks on this many CTAs (split-K; 1: whole units), timed queued as the sweep's rows, or by the anchor's method with --flush-l2. A count the kernel or the shape does not allow fails that shape's row.
        #[arg(long, requires = "kernel", conflicts_with_all = ["stream_k", "sweep"], value_parser = clap::value_parser!(u32).range(1..))]
        fp8_split_k: Option<u32>,
        /// Write every result (shape, kernel, times, ratios, TFLOP/s, GB/s, checks) as JSON here.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
    /// Verify the sm_100a MXFP8/NVFP4 block-scaled GEMMs (f64, cuBLASLt), then time them against cuBLASLt (Blackwell only: exit 77 elsewhere).
    GemmBlockScaled {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Which format(s) to verify and time.
        #[arg(long, value_enum, default_value = "both")]
        format: baton_cli::block_scaled_bench::FormatArg,
        /// Only these shapes, as MxNxK (repeatable); default: 4096³, 8192³, 8192x8192x16384.
        #[arg(long, value_parser = parse_shape)]
        shape: Vec<(usize, usize, usize)>,
        /// Timed runs per shape (median reported).
        #[arg(long, default_value_t = 21)]
        reps: usize,
        /// Write every result as JSON here.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
    /// TMA tile copy (plain and 2-CTA multicast) vs a device-to-device memcpy (GB/s).
    TileCopy {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Matrix rows (bf16).
        #[arg(long, default_value_t = baton_cli::tile_copy_bench::DEFAULT_SHAPE.0)]
        rows: usize,
        /// Matrix columns (bf16; a multiple of 8).
        #[arg(long, default_value_t = baton_cli::tile_copy_bench::DEFAULT_SHAPE.1)]
        cols: usize,
        /// Untimed runs of each configuration first.
        #[arg(long, default_value_t = 5)]
        warmup: usize,
        /// Timed runs of each configuration (median reported).
        #[arg(long, default_value_t = 25)]
        reps: usize,
        /// Write every configuration's result as JSON here.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
    /// baton's pitched copy (the BF16 re-pack) vs cuMemcpy2DAsync vs a flat device copy of the same bytes (GB/s).
    Repack {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Rows to copy.
        #[arg(long, default_value_t = baton_cli::repack_bench::DEFAULT_ROWS)]
        rows: usize,
        /// Payload bytes per row.
        #[arg(long, default_value_t = baton_cli::repack_bench::DEFAULT_ROW_BYTES)]
        row_bytes: usize,
        /// Source pitch, bytes (default: the row, packed).
        #[arg(long)]
        src_pitch: Option<usize>,
        /// Destination pitch, bytes (default: the row rounded up to 128).
        #[arg(long)]
        dst_pitch: Option<usize>,
        /// Timed runs of each copy (median reported).
        #[arg(long, default_value_t = 50)]
        reps: usize,
    },
    /// Where a BF16 GEMM launch spends its time: per-CTA timeline stamps (a build with BATON_TRACE=1) beside cuBLAS.
    TraceGemm {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Shapes as MxNxK (repeatable).
        #[arg(long, value_parser = parse_shape, required = true)]
        shape: Vec<(usize, usize, usize)>,
        /// Timed runs of ours and cuBLAS before the traced launch (median reported).
        #[arg(long, default_value_t = 21)]
        reps: usize,
        /// Force a tile configuration (as `bench gemm --config`).
        #[arg(long, value_parser = parse_config)]
        config: Option<GemmConfig>,
        /// Split-K workers per unit (as `bench gemm --split-k`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        split_k: Option<u32>,
        /// Stream-K minimum segment (as `bench gemm --stream-k`; 0: off).
        #[arg(long)]
        stream_k: Option<u32>,
        /// One input set per library instead of cold rotating sets: the operands stay in L2 between launches (what is left of the first stage's latency is not DRAM's).
        #[arg(long)]
        hot: bool,
        /// Also write every CTA's events (its SM, µs after the first entry) as CSV here.
        #[arg(long)]
        per_cta: Option<std::path::PathBuf>,
    },
    /// Where an FP8 blockwise GEMM launch spends its time: per-CTA timeline stamps (a build with BATON_TRACE=1) beside cuBLASLt blockwise.
    TraceGemmFp8 {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Shapes as MxNxK (repeatable).
        #[arg(long, value_parser = parse_shape, required = true)]
        shape: Vec<(usize, usize, usize)>,
        /// Timed runs of ours and cuBLASLt before the traced launch (median reported).
        #[arg(long, default_value_t = 21)]
        reps: usize,
        /// Force one of the FP8 kernels (as `bench gemm-fp8 --kernel`).
        #[arg(long, value_parser = parse_fp8_kernel)]
        kernel: Option<&'static str>,
        /// Split-K workers per unit (as `bench gemm-fp8 --fp8-split-k`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        fp8_split_k: Option<u32>,
        /// One input set per library instead of cold rotating sets (operands L2-resident).
        #[arg(long)]
        hot: bool,
        /// Also write every CTA's events (its SM, µs after the first entry) as CSV here.
        #[arg(long)]
        per_cta: Option<std::path::PathBuf>,
    },
    /// Pipeline API vs hand-written mbarrier handoffs (throughput, loop sizes).
    ZeroCost {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Write both kernels' results as JSON here.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
}

/// `--repack`'s value: the operand to re-pack, or none.
#[derive(Clone, Copy, Debug)]
struct RepackArg(Option<Repack>);

fn parse_repack(s: &str) -> Result<RepackArg, String> {
    match s {
        "a" | "A" => Ok(RepackArg(Some(Repack::A))),
        "b" | "B" => Ok(RepackArg(Some(Repack::B))),
        "none" => Ok(RepackArg(None)),
        _ => Err(format!("unknown operand '{s}'; allowed: a, b, none")),
    }
}

fn main() {
    let cli = Cli::parse();
    let outcome: Outcome = match cli.cmd {
        Cmd::Info { ordinal } => commands::info(ordinal),
        Cmd::Smoke {
            ordinal,
            variant,
            seed,
        } => {
            let vs: &[Variant] = match variant {
                VariantArg::Release => &[Variant::Release],
                VariantArg::Debug => &[Variant::Debug],
                VariantArg::All => &Variant::ALL,
            };
            commands::smoke(ordinal, vs, seed)
        }
        Cmd::Probe { ordinal } => commands::probe(ordinal),
        Cmd::Demo { items, consumers } => commands::run_cpu_demo(items, consumers),
        Cmd::HangCheck { ordinal } => baton_cli::hang::hang_check(ordinal),
        Cmd::Bench { what } => match what {
            BenchWhat::Attention(args) => baton_cli::attention_bench::run(&args),
            BenchWhat::TraceGemm {
                ordinal,
                shape,
                reps,
                config,
                split_k,
                stream_k,
                hot,
                per_cta,
            } => baton_cli::trace_bench::run(
                ordinal,
                &shape,
                baton_reference::gemm_check::GemmTuning {
                    config,
                    split_k,
                    stream_k,
                    ..Default::default()
                },
                reps.max(1),
                hot,
                per_cta.as_deref(),
            ),
            BenchWhat::TraceGemmFp8 {
                ordinal,
                shape,
                reps,
                kernel,
                fp8_split_k,
                hot,
                per_cta,
            } => baton_cli::trace_bench::run_fp8(
                ordinal,
                &shape,
                (kernel, fp8_split_k),
                reps.max(1),
                hot,
                per_cta.as_deref(),
            ),
            BenchWhat::Gemm {
                ordinal,
                reps,
                shape,
                chart,
                config,
                group_m,
                stream_k,
                sk_waves,
                split_k,
                repack,
                sweep,
                heatmap,
                max_gib,
                json,
            } => {
                let tuning = baton_reference::gemm_check::GemmTuning {
                    config,
                    group_m,
                    stream_k,
                    stream_k_waves: sk_waves,
                    split_k,
                    repack: repack.and_then(|r| r.0),
                };
                if sweep {
                    exit(sweep_bench::run(&sweep_bench::SweepArgs {
                        ordinal,
                        family: Family::Bf16,
                        max_reps: reps.max(1),
                        budget_bytes: gib_bytes(max_gib),
                        heatmap: &heatmap,
                        json: json.as_deref(),
                        tuning,
                    }))
                }
                let shapes: Vec<(usize, usize, usize)> = if shape.is_empty() {
                    bench::GEMM_SHAPES.to_vec()
                } else {
                    shape
                };
                bench::gemm(
                    ordinal,
                    tuning,
                    &shapes,
                    reps,
                    Some(&chart),
                    json.as_deref(),
                )
            }
            BenchWhat::GemmFp8 {
                ordinal,
                reps,
                shape,
                decode,
                kernel,
                stream_k,
                sk_waves,
                chart,
                sweep,
                heatmap,
                max_gib,
                flush_l2,
                fp8_split_k,
                json,
            } => {
                if flush_l2 {
                    let shapes = if shape.is_empty() {
                        baton_cli::fp8_anchor_bench::anchor_shapes()
                    } else {
                        shape
                    };
                    exit(baton_cli::fp8_anchor_bench::gemm_fp8_flushed(
                        ordinal,
                        &shapes,
                        json.as_deref(),
                        (kernel, fp8_split_k),
                    ))
                }
                if sweep {
                    exit(sweep_bench::run(&sweep_bench::SweepArgs {
                        ordinal,
                        family: Family::Fp8,
                        max_reps: reps.max(1),
                        budget_bytes: gib_bytes(max_gib),
                        heatmap: &heatmap,
                        json: json.as_deref(),
                        tuning: Default::default(),
                    }))
                }
                let shapes = if decode {
                    baton_cli::fp8_bench::decode_shapes()
                } else if shape.is_empty() {
                    baton_cli::fp8_bench::FP8_SHAPES.to_vec()
                } else {
                    shape
                };
                baton_cli::fp8_bench::gemm_fp8(
                    ordinal,
                    &shapes,
                    reps.max(1),
                    kernel,
                    (stream_k.map(|s| (s, sk_waves.unwrap_or(1))), fp8_split_k),
                    chart.as_deref(),
                    json.as_deref(),
                )
            }
            BenchWhat::GemmBlockScaled {
                ordinal,
                format,
                shape,
                reps,
                json,
            } => baton_cli::block_scaled_bench::gemm_block_scaled(
                ordinal,
                format,
                &shape,
                reps,
                json.as_deref(),
            ),
            BenchWhat::ZeroCost { ordinal, json } => bench::zero_cost(ordinal, json.as_deref()),
            BenchWhat::Repack {
                ordinal,
                rows,
                row_bytes,
                src_pitch,
                dst_pitch,
                reps,
            } => baton_cli::repack_bench::repack(
                ordinal,
                baton_cli::repack_bench::Geometry::new(rows, row_bytes, src_pitch, dst_pitch),
                reps.max(1),
            ),
            BenchWhat::TileCopy {
                ordinal,
                rows,
                cols,
                warmup,
                reps,
                json,
            } => baton_cli::tile_copy_bench::tile_copy(
                ordinal,
                rows,
                cols,
                warmup,
                reps.max(1),
                json.as_deref(),
            ),
        },
    };
    exit(outcome)
}

fn exit(outcome: Outcome) -> ! {
    std::process::exit(outcome.code())
}

/// GiB → bytes (a negative or NaN budget is 0: every shape skipped).
fn gib_bytes(gib: f64) -> u64 {
    (gib.max(0.0) * (1u64 << 30) as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(args: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("baton").chain(args.split_whitespace()))
    }

    /// `(kernel, fp8_split_k, flush_l2)` of a parsed `bench gemm-fp8`.
    fn fp8_args(cli: Cli) -> (Option<&'static str>, Option<u32>, bool) {
        match cli.cmd {
            Cmd::Bench {
                what:
                    BenchWhat::GemmFp8 {
                        kernel,
                        fp8_split_k,
                        flush_l2,
                        ..
                    },
            } => (kernel, fp8_split_k, flush_l2),
            _ => panic!("not bench gemm-fp8"),
        }
    }

    #[test]
    fn fp8_split_k_parses_queued_and_flushed() {
        let k = "baton_gemm_fp8_blockwise_128x64_db";
        let queued = parse(&format!(
            "bench gemm-fp8 --shape 32x1024x32768 --kernel {k} --fp8-split-k 4"
        ))
        .unwrap();
        assert_eq!(fp8_args(queued), (Some(k), Some(4), false));
        let flushed = parse(&format!(
            "bench gemm-fp8 --flush-l2 --shape 32x1024x32768 --kernel {k} --fp8-split-k 4"
        ))
        .unwrap();
        assert_eq!(fp8_args(flushed), (Some(k), Some(4), true));
    }

    #[test]
    fn fp8_split_k_refuses_bad_combinations() {
        let k = "baton_gemm_fp8_blockwise_128x64_db";
        let kind = |args: &str| parse(args).err().map(|e| e.kind());
        assert_eq!(
            kind("bench gemm-fp8 --shape 32x1024x32768 --fp8-split-k 4"),
            Some(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            kind(&format!(
                "bench gemm-fp8 --shape 32x1024x32768 --kernel {k} --fp8-split-k 4 --stream-k 2"
            )),
            Some(ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            kind(&format!(
                "bench gemm-fp8 --shape 32x1024x32768 --kernel {k} --fp8-split-k 0"
            )),
            Some(ErrorKind::ValueValidation)
        );
        assert!(matches!(
            kind("bench gemm-fp8 --sweep --fp8-split-k 4"),
            Some(ErrorKind::MissingRequiredArgument | ErrorKind::ArgumentConflict)
        ));
    }

    #[test]
    fn bench_repack_takes_a_geometry_with_default_pitches() {
        let geometry = |args: &str| match parse(args).unwrap().cmd {
            Cmd::Bench {
                what:
                    BenchWhat::Repack {
                        rows,
                        row_bytes,
                        src_pitch,
                        dst_pitch,
                        ..
                    },
            } => baton_cli::repack_bench::Geometry::new(rows, row_bytes, src_pitch, dst_pitch),
            _ => panic!("not bench repack"),
        };
        let g = geometry("bench repack");
        assert_eq!(
            (g.rows, g.row_bytes, g.src_pitch, g.dst_pitch),
            (4104, 4112, 4112, 4224)
        );
        let g = geometry("bench repack --rows 8 --row-bytes 100 --src-pitch 102 --dst-pitch 256");
        assert_eq!(
            (g.rows, g.row_bytes, g.src_pitch, g.dst_pitch),
            (8, 100, 102, 256)
        );
    }

    #[test]
    fn repack_values_parse_and_bad_ones_list_the_allowed() {
        assert_eq!(parse_repack("a").unwrap().0, Some(Repack::A));
        assert_eq!(parse_repack("B").unwrap().0, Some(Repack::B));
        assert_eq!(parse_repack("none").unwrap().0, None);
        let e = parse_repack("c").unwrap_err();
        assert!(e.contains("allowed: a, b, none"), "{e}");
        // Through clap, as the bench takes it (it needs --config).
        let cli = Cli::try_parse_from([
            "baton", "bench", "gemm", "--config", "128x64", "--repack", "b",
        ]);
        assert!(cli.is_ok(), "{:?}", cli.err());
        assert!(Cli::try_parse_from(["baton", "bench", "gemm", "--repack", "b"]).is_err());
    }
}
