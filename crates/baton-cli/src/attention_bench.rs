//! `baton bench attention`: baton's attention forward (issue #17) timed on
//! the shape set — seq 1k–16k, head_dim 64/128/256, causal and
//! not, GQA 8:1 — in TFLOP/s (`4·b·h·sq·skv·d`, halved for causal), with a
//! bar chart. PyTorch's SDPA backends are timed on the same shapes by
//! `../shared/anchors/sdpa.py` in the same device call (Python; this binary
//! has no PyTorch), and BENCHMARKS.md puts the two side by side. With
//! `--json`, every row is written for `attention/tools/sdpa_compare.py`,
//! which times SDPA's backends on exactly those shapes (GQA included) and
//! prints the ratio to the best backend per shape, the geometric mean and
//! the minimum: issue #17's measure, in the same device call.
//!
//! Each shape is checked first: every output finite and not the poison,
//! a sample of rows against an f64 reference (relative error ≤ 2e-2).

use crate::chart::{BarChart, BarGroup, write_bar_chart};
use crate::commands::Outcome;
use crate::report;
use baton::numeric::{Bf16, SmallFloat};
use baton_attention::{
    Attention, AttentionOptions, AttentionShape, Ctas, KvBlock, Schedule, Strides, TensorMut,
    TensorRef, Warpgroups,
};
use baton_reference::timing::{QueuedTimer, median};
use baton_runtime::{Error, Gpu};
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `baton bench attention`.
#[derive(clap::Args, Debug)]
pub struct AttentionBenchArgs {
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub ordinal: usize,
    /// Timed runs per shape (median reported).
    #[arg(long, default_value_t = 20)]
    pub reps: usize,
    /// Where to write the PNG chart.
    #[arg(long, default_value = "attention-bench.png")]
    pub chart: PathBuf,
    /// Only shapes whose label contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// How the consumer warpgroups take turns: `ordered` (ping-pong on
    /// baton's ordered barrier, the default), `named` (ping-pong on named
    /// barriers), `free` (no turns).
    #[arg(long, value_enum, default_value = "ordered")]
    pub schedule: ScheduleArg,
    /// CTAs per launch: `per-sm` (persistent, the default) or `per-tile`
    /// (one CTA per query tile: the non-persistent launch, to compare).
    #[arg(long, value_enum, default_value = "per-sm")]
    pub ctas: CtasArg,
    /// A fixed persistent CTA count, overriding `--ctas` (causal calls:
    /// planned on the planned kernels, else the static stride).
    #[arg(long)]
    pub grid: Option<core::num::NonZeroU32>,
    /// K/V rows per block at d = 64: `auto` (176 without a causal mask,
    /// 128 with one, the default) or `narrow` (128 always: the causal
    /// kernel, to compare).
    #[arg(long, value_enum, default_value = "auto")]
    pub kv_block: KvBlockArg,
    /// Consumer warpgroups of the d = 64 kernels: `two` (128-row query
    /// tiles, K/V blocks by `--kv-block`, the default) or `three` (192-row
    /// query tiles, 80-row K/V blocks, to compare).
    #[arg(long, value_enum, default_value = "two")]
    pub warpgroups: WarpgroupsArg,
    /// Write every timed row (shape, time, TFLOP/s, check) as JSON here,
    /// for `attention/tools/sdpa_compare.py`.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One timed row of `baton bench attention --json`: the shape in
/// PyTorch's `[b, h, s, d]` terms, our median time and TFLOP/s
/// (`4·b·h·s²·d`, halved for causal), and the check's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct AttentionRow {
    /// The row's label as printed.
    pub label: String,
    /// Batch.
    pub batch: usize,
    /// Query heads.
    pub q_heads: usize,
    /// K/V heads (`q_heads` without GQA).
    pub kv_heads: usize,
    /// Sequence length (queries and keys).
    pub seq: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// PyTorch's `is_causal` (top-left aligned).
    pub causal: bool,
    /// Median time, microseconds.
    pub us: f64,
    /// TFLOP/s at that time.
    pub tflops: f64,
    /// `ok`, or what the check found.
    pub check: String,
}

/// `--warpgroups`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum WarpgroupsArg {
    /// Two.
    Two,
    /// Three at d = 64.
    Three,
}

impl From<WarpgroupsArg> for Warpgroups {
    fn from(w: WarpgroupsArg) -> Self {
        match w {
            WarpgroupsArg::Two => Warpgroups::Two,
            WarpgroupsArg::Three => Warpgroups::Three,
        }
    }
}

/// `--kv-block`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum KvBlockArg {
    /// 176 rows without a causal mask, 128 with one.
    Auto,
    /// 128 rows always.
    Narrow,
}

impl From<KvBlockArg> for KvBlock {
    fn from(k: KvBlockArg) -> Self {
        match k {
            KvBlockArg::Auto => KvBlock::Auto,
            KvBlockArg::Narrow => KvBlock::Narrow,
        }
    }
}

/// `--ctas`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum CtasArg {
    /// One per SM (persistent).
    PerSm,
    /// One per query tile.
    PerTile,
}

impl From<CtasArg> for Ctas {
    fn from(c: CtasArg) -> Self {
        match c {
            CtasArg::PerSm => Ctas::PerSm,
            CtasArg::PerTile => Ctas::PerTile,
        }
    }
}

/// `--schedule`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ScheduleArg {
    /// Ping-pong on baton's ordered barrier.
    Ordered,
    /// Ping-pong on named barriers.
    Named,
    /// No turns.
    Free,
}

impl From<ScheduleArg> for Schedule {
    fn from(s: ScheduleArg) -> Self {
        match s {
            ScheduleArg::Ordered => Schedule::PingPong,
            ScheduleArg::Named => Schedule::PingPongNamedBarriers,
            ScheduleArg::Free => Schedule::Free,
        }
    }
}

/// One benchmark shape: `(batch, q_heads, kv_heads, seq, head_dim, causal)`,
/// `[b, h, s, d]` layout (PyTorch's).
pub const SHAPES: [(usize, usize, usize, usize, usize, bool); 16] = [
    (16, 16, 16, 1024, 128, false),
    (8, 16, 16, 2048, 128, false),
    (4, 16, 16, 4096, 128, false),
    (2, 16, 16, 8192, 128, false),
    (1, 16, 16, 16384, 128, false),
    (4, 16, 16, 4096, 128, true),
    (1, 16, 16, 16384, 128, true),
    (4, 32, 32, 4096, 64, false),
    (4, 32, 32, 4096, 64, true),
    (2, 16, 16, 8192, 256, false),
    (2, 16, 16, 8192, 256, true),
    (4, 32, 4, 4096, 128, false),
    (4, 32, 4, 4096, 128, true),
    (1, 32, 4, 16384, 128, true),
    (4, 32, 4, 4096, 64, false),
    (16, 16, 16, 1024, 64, true),
];

fn label(&(b, h, hkv, s, d, causal): &(usize, usize, usize, usize, usize, bool)) -> String {
    format!(
        "b{b} h{h}{} s{s} d{d}{}",
        if hkv != h {
            format!(":{hkv}")
        } else {
            String::new()
        },
        if causal { " causal" } else { "" }
    )
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Random bf16 in [-amp, amp): a random block of 2^20 repeated with a
/// random offset per repeat (fast on the host for gigabyte tensors).
fn random_bf16(rng: &mut u64, len: usize, amp: f32) -> Vec<u16> {
    let block: Vec<u16> = (0..1 << 20)
        .map(|_| {
            let u = (splitmix64(rng) >> 40) as f32 / (1u64 << 24) as f32;
            Bf16::from_f32((2.0 * u - 1.0) * amp).to_bits()
        })
        .collect();
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let off = (splitmix64(rng) % (1 << 19)) as usize;
        let n = (len - out.len()).min(block.len() - off);
        out.extend_from_slice(&block[off..off + n]);
    }
    out
}

/// `baton bench attention`.
pub fn run(args: &AttentionBenchArgs) -> Outcome {
    let gpu = match Gpu::new(args.ordinal) {
        Ok(g) => g,
        Err(e) if e.is_no_gpu() => {
            println!("SKIPPED: no CUDA GPU ({e})");
            return Outcome::Skip;
        }
        Err(e @ Error::WrongArch { .. }) => {
            println!("SKIPPED: needs an sm_90a GPU ({e})");
            return Outcome::Skip;
        }
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    let attn = match Attention::new(&gpu) {
        Ok(a) => a,
        Err(e) => {
            println!("FAIL: loading the attention kernels: {e}");
            return Outcome::Fail;
        }
    };
    let mut rng = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x5EED, |d| d.as_nanos() as u64);
    println!(
        "{} ({} SMs), seed {rng:#x}, schedule {:?}, ctas {:?}, kv block {:?}, warpgroups {:?}",
        gpu.name(),
        gpu.sm_count(),
        args.schedule,
        args.grid.map_or(args.ctas.into(), Ctas::Fixed),
        args.kv_block,
        args.warpgroups
    );
    println!(
        "{:<28} {:>10} {:>9}  check",
        "shape", "time (us)", "TFLOP/s"
    );
    let mut groups = Vec::new();
    let mut rows = Vec::new();
    let mut outcome = Outcome::Pass;
    for sh in SHAPES {
        let name = label(&sh);
        if args.filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        match bench_one(
            &gpu,
            &attn,
            sh,
            args.reps.max(1),
            args.schedule.into(),
            args.grid.map_or(args.ctas.into(), Ctas::Fixed),
            args.kv_block.into(),
            args.warpgroups.into(),
            &mut rng,
        ) {
            Ok((us, tflops, check)) => {
                println!("{name:<28} {us:>10.1} {tflops:>9.1}  {check}");
                if check != "ok" {
                    outcome = Outcome::Fail;
                }
                let (batch, q_heads, kv_heads, seq, head_dim, causal) = sh;
                rows.push(AttentionRow {
                    label: name.clone(),
                    batch,
                    q_heads,
                    kv_heads,
                    seq,
                    head_dim,
                    causal,
                    us,
                    tflops,
                    check,
                });
                groups.push(BarGroup {
                    label: name,
                    values: vec![tflops],
                    note: None,
                });
            }
            Err(e) => {
                println!("{name:<28} FAIL: {e}");
                outcome = Outcome::Fail;
            }
        }
    }
    if !report::write_if_asked(args.json.as_deref(), &rows) {
        outcome = Outcome::Fail;
    }
    if !groups.is_empty() {
        let chart = BarChart {
            title: format!("baton attention forward, bf16 ({})", gpu.name()),
            series: vec!["baton".into()],
            groups,
            y_label: "TFLOP/s".into(),
            note_meaning: "PyTorch SDPA: ../shared/anchors/sdpa.py, same device call".into(),
        };
        match write_bar_chart(&args.chart, &chart) {
            Ok(()) => println!("chart: {}", args.chart.display()),
            Err(e) => {
                println!("FAIL: chart: {e}");
                outcome = Outcome::Fail;
            }
        }
    }
    outcome
}

type BenchResult = Result<(f64, f64, String), Box<dyn std::error::Error>>;

#[allow(clippy::too_many_arguments)]
fn bench_one(
    gpu: &Gpu,
    attn: &Attention,
    (b, h, hkv, s, d, causal): (usize, usize, usize, usize, usize, bool),
    reps: usize,
    schedule: Schedule,
    ctas: Ctas,
    kv_block: KvBlock,
    warpgroups: Warpgroups,
    rng: &mut u64,
) -> BenchResult {
    let shape = AttentionShape {
        batch: b,
        seq_q: s,
        seq_kv: s,
        q_heads: h,
        kv_heads: hkv,
        head_dim: d,
    };
    let (sq, skv) = (Strides::bhsd(s, h, d), Strides::bhsd(s, hkv, d));
    let (nq, nkv) = (b * h * s * d, b * hkv * s * d);
    let (q, k, v) = (
        random_bf16(rng, nq, 2.0),
        random_bf16(rng, nkv, 2.0),
        random_bf16(rng, nkv, 1.0),
    );
    let stream = gpu.stream();
    let (dq, dk, dv) = (
        stream.clone_htod(&q)?,
        stream.clone_htod(&k)?,
        stream.clone_htod(&v)?,
    );
    let mut d_o = stream.clone_htod(&vec![0x7FC0u16; nq])?;
    let opts = AttentionOptions {
        causal,
        schedule,
        ctas,
        kv_block,
        warpgroups,
        ..Default::default()
    };
    let call = attn.prepare(
        stream,
        &shape,
        &opts,
        TensorRef {
            data: &dq,
            strides: sq,
        },
        TensorRef {
            data: &dk,
            strides: skv,
        },
        TensorRef {
            data: &dv,
            strides: skv,
        },
        TensorMut {
            data: &mut d_o,
            strides: sq,
        },
        None,
    )?;
    let warmup = 3;
    let mut timer = QueuedTimer::<1>::new();
    for _ in 0..warmup + reps {
        timer.time(gpu, 0, || call.launch())?;
    }
    let [times] = timer.finish(gpu, warmup)?;
    drop(call);
    let ms = median(times);
    let tflops = shape.flops(causal) / (ms * 1e-3) / 1e12;
    let o = stream.clone_dtoh(&d_o)?;
    gpu.synchronize()?;
    Ok((
        ms * 1e3,
        tflops,
        check_sample(&shape, causal, &q, &k, &v, &o, rng),
    ))
}

/// Every output finite; 8 random rows of random heads against f64.
fn check_sample(
    s: &AttentionShape,
    causal: bool,
    q: &[u16],
    k: &[u16],
    v: &[u16],
    o: &[u16],
    rng: &mut u64,
) -> String {
    let f = |x: u16| Bf16::from_bits(x).to_f64();
    let bad = o.iter().filter(|&&x| !f(x).is_finite()).count();
    if bad > 0 {
        return format!("{bad} non-finite outputs");
    }
    let d = s.head_dim;
    let (mut err2, mut ref2) = (0f64, 0f64);
    for _ in 0..8 {
        let b = (splitmix64(rng) % s.batch as u64) as usize;
        let h = (splitmix64(rng) % s.q_heads as u64) as usize;
        let i = (splitmix64(rng) % s.seq_q as u64) as usize;
        let kh = h / (s.q_heads / s.kv_heads);
        let row = |t: &[u16], heads: usize, hh: usize, r: usize, seq: usize| -> Vec<f64> {
            t[((b * heads + hh) * seq + r) * d..][..d]
                .iter()
                .map(|&x| f(x))
                .collect()
        };
        let qi = row(q, s.q_heads, h, i, s.seq_q);
        let cols = if causal { i + 1 } else { s.seq_kv };
        let scores: Vec<f64> = (0..cols)
            .map(|j| {
                let kj = row(k, s.kv_heads, kh, j, s.seq_kv);
                qi.iter().zip(&kj).map(|(a, b)| a * b).sum::<f64>() / (d as f64).sqrt()
            })
            .collect();
        let mx = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = scores.iter().map(|x| (x - mx).exp()).collect();
        let sum: f64 = w.iter().sum();
        let mut want = vec![0f64; d];
        for (j, wj) in w.iter().enumerate() {
            for (o, x) in want.iter_mut().zip(row(v, s.kv_heads, kh, j, s.seq_kv)) {
                *o += wj / sum * x;
            }
        }
        let got = row(o, s.q_heads, h, i, s.seq_q);
        for (g, w) in got.iter().zip(&want) {
            err2 += (g - w) * (g - w);
            ref2 += w * w;
        }
    }
    let rel = (err2 / ref2.max(1e-300)).sqrt();
    // NaN fails this comparison too.
    if rel <= 2e-2 {
        "ok".into()
    } else {
        format!("rel err {rel:.2e} over 2e-2")
    }
}
