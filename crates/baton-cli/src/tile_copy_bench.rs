//! `baton bench tile-copy`: the TMA tile-copy kernels (plain and 2-CTA
//! multicast) against a device-to-device `cuMemcpyDtoDAsync` of the same
//! bytes, timed in one process with CUDA events (issue #5).
//!
//! Every configuration is timed `reps` times after `warmup` untimed runs,
//! round-robin (so clock drift hits all alike); the median is reported as
//! GB/s of bytes read plus bytes written. Each kernel's output is poisoned
//! before its first run and compared bit for bit with the source at the end.

use crate::commands::{Outcome, open_gpu};
use baton_reference::random::XorShift;
use baton_reference::timing::median;
use baton_runtime::cudarc::driver::sys::CUevent_flags;
use baton_runtime::cudarc::driver::{CudaSlice, DevicePtrMut, result};
use baton_runtime::{Gpu, Variant};
use baton_selftest::tile_copy::{self, Mode, TileCopyPlan};
use baton_selftest::{Error, Result};

/// Default matrix: 16384 × 16384 bf16 = 512 MiB in, 512 MiB out.
pub const DEFAULT_SHAPE: (usize, usize) = (16384, 16384);

/// The kernel/copy bandwidth ratio the issue asks for.
pub const GOAL: f64 = 0.9;

/// One timed configuration.
#[derive(Clone, Debug)]
pub struct Timing {
    /// What ran: `memcpy_dtod` or the kernel and its grid.
    pub what: String,
    /// Kernel mode (`None` for the memcpy).
    pub mode: Option<Mode>,
    /// CTAs launched (0 for the memcpy).
    pub grid: u32,
    /// The plan's default grid (what `TileCopyPlan::new` picks).
    pub default: bool,
    /// Median milliseconds.
    pub median_ms: f64,
    /// Fastest milliseconds.
    pub min_ms: f64,
    /// GB/s (10^9 bytes) read + written, at the median.
    pub gbps: f64,
}

fn poison(gpu: &Gpu, buf: &mut CudaSlice<u16>) -> Result<()> {
    let stream = gpu.stream();
    let bytes = buf.len() * 2;
    let (ptr, _sync) = buf.device_ptr_mut(stream);
    // SAFETY: `ptr` is the start of a live allocation of `bytes` bytes,
    // written in stream order.
    unsafe { result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }?;
    Ok(())
}

/// Verifies and times the kernels and the memcpy on a `rows × cols` matrix.
/// Returns the timings: the memcpy first, then each kernel at each grid.
pub fn measure(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    warmup: usize,
    reps: usize,
) -> Result<Vec<Timing>> {
    let kernels = baton_selftest::kernels::load_kernels(gpu, Variant::Release)?;
    let n = rows * cols;
    let bytes = (2 * n) as f64;
    let stream = gpu.stream();
    let seed = XorShift::seed_from_time();
    let src_host = tile_copy::random_bf16(n, &mut XorShift::new(seed));
    let src = stream.clone_htod(&src_host)?;
    let mut outs = Vec::new();
    for _ in 0..3 {
        // SAFETY: poisoned (or fully overwritten) before it is read.
        let mut b = unsafe { stream.alloc::<u16>(n) }?;
        poison(gpu, &mut b)?;
        outs.push(b);
    }
    let [out_plain, out_mc, out_copy] = &mut outs[..] else {
        unreachable!()
    };
    let sms = gpu.sm_count();
    let mut plans = Vec::new();
    let mut defaults = Vec::new();
    for (mode, out) in [(Mode::Plain, out_plain), (Mode::Multicast, out_mc)] {
        let plan = TileCopyPlan::new(gpu, &kernels, mode, &src, out, rows, cols)?;
        let resident = plan.resident_ctas();
        // Grids: half the SMs, then 1, 2, … CTAs per SM up to what is
        // resident (as the driver counts it), and the default.
        let mut grids: Vec<u32> = (1..=resident.div_ceil(sms))
            .map(|k| (k * sms).min(resident))
            .collect();
        grids.push(sms / 2 / mode.cluster() * mode.cluster());
        grids.push(plan.grid());
        grids.sort_unstable();
        grids.dedup();
        println!(
            "{mode:<9} {}: {} tiles, {} CTAs resident ({} SMs), default grid {}",
            mode.kernel(),
            plan.tiles(),
            resident,
            sms,
            plan.grid()
        );
        defaults.push(plan.grid());
        plans.push((plan, grids));
    }
    // Configurations: index 0 = memcpy, then (plan, grid) pairs.
    let mut configs: Vec<(Option<usize>, u32)> = vec![(None, 0)];
    for (p, (_, grids)) in plans.iter().enumerate() {
        configs.extend(grids.iter().map(|&g| (Some(p), g)));
    }
    let mut run = |cfg: (Option<usize>, u32), plans: &mut Vec<(TileCopyPlan, Vec<u32>)>| match cfg {
        (None, _) => stream.memcpy_dtod(&src, out_copy).map_err(Error::from),
        (Some(p), g) => {
            let plan = &mut plans[p].0;
            plan.set_grid(g);
            plan.launch(gpu)
        }
    };
    // First kernel runs land in the poisoned outputs; later ones rewrite
    // the same values, so a skipped tile stays poisoned to the end.
    for _ in 0..warmup.max(1) {
        for &c in &configs {
            run(c, &mut plans)?;
        }
    }
    gpu.synchronize()?;
    let mut times = vec![Vec::with_capacity(reps); configs.len()];
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    for _ in 0..reps {
        let mut events = Vec::with_capacity(configs.len());
        for &c in &configs {
            let start = stream.record_event(flags)?;
            run(c, &mut plans)?;
            let end = stream.record_event(flags)?;
            events.push((start, end));
        }
        for (i, (start, end)) in events.iter().enumerate() {
            times[i].push(start.elapsed_ms(end)? as f64);
        }
    }
    gpu.synchronize()?;
    let grids_of: Vec<_> = configs.clone();
    let modes: Vec<Mode> = plans.iter().map(|(p, _)| p.mode()).collect();
    drop(plans);
    // Verify every output bit for bit.
    for (what, out) in [
        ("memcpy_dtod", &outs[2]),
        (tile_copy::KERNEL, &outs[0]),
        (tile_copy::MULTICAST_KERNEL, &outs[1]),
    ] {
        let host = stream.clone_dtoh(out)?;
        let bad = host.iter().zip(&src_host).filter(|(a, b)| a != b).count();
        if bad != 0 {
            let first = host.iter().zip(&src_host).position(|(a, b)| a != b);
            println!("{what} {rows}×{cols}: seed {seed:#x}");
            return Err(Error::Mismatch {
                check: what,
                wrong: bad,
                total: n,
                unit: "elements",
                first: first.map(|i| (i / cols, i % cols)),
            });
        }
        println!("verified {what}: {n} elements bit-exact (seed {seed:#x})");
    }
    Ok(grids_of
        .iter()
        .zip(times.iter())
        .map(|(&(p, grid), t)| {
            let median_ms = median(t.clone());
            let min_ms = t.iter().copied().fold(f64::INFINITY, f64::min);
            let mode = p.map(|p| modes[p]);
            Timing {
                what: match mode {
                    None => "memcpy_dtod (cuMemcpyDtoDAsync)".into(),
                    Some(m) => format!("{} grid {grid}", m.kernel()),
                },
                mode,
                grid,
                default: p.is_some_and(|p| defaults[p] == grid),
                median_ms,
                min_ms,
                gbps: 2.0 * bytes / (median_ms * 1e-3) / 1e9,
            }
        })
        .collect())
}

/// One configuration's result in `baton bench tile-copy --json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TileCopyResult {
    /// What ran: `memcpy_dtod` or the kernel and its grid.
    pub what: String,
    /// CTAs launched (0 for the memcpy).
    pub grid: u32,
    /// Whether this is the plan's default grid.
    pub default_grid: bool,
    /// Median ms.
    pub median_ms: f64,
    /// Fastest ms.
    pub min_ms: f64,
    /// GB/s read + written at the median.
    pub gbps: f64,
    /// GB/s over the memcpy's.
    pub vs_memcpy: f64,
}

/// `baton bench tile-copy --json`: the matrix and every configuration.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TileCopyReport {
    /// The GPU's name.
    pub gpu: String,
    /// Matrix rows (bf16).
    pub rows: usize,
    /// Matrix columns.
    pub cols: usize,
    /// Timed runs per configuration.
    pub reps: usize,
    /// The memcpy first, then each kernel at each grid.
    pub results: Vec<TileCopyResult>,
}

/// The JSON rows of `timings` (the memcpy first).
///
/// ```
/// use baton_cli::tile_copy_bench::{Timing, json_results};
/// let t = |what: &str, gbps| Timing { what: what.into(), mode: None, grid: 0, default: false,
///     median_ms: 1.0, min_ms: 1.0, gbps };
/// let r = json_results(&[t("memcpy_dtod", 2000.0), t("kernel", 1900.0)]);
/// assert_eq!(r[1].vs_memcpy, 0.95);
/// ```
pub fn json_results(timings: &[Timing]) -> Vec<TileCopyResult> {
    let copy = timings.first().map_or(f64::NAN, |t| t.gbps);
    timings
        .iter()
        .map(|t| TileCopyResult {
            what: t.what.clone(),
            grid: t.grid,
            default_grid: t.default,
            median_ms: t.median_ms,
            min_ms: t.min_ms,
            gbps: t.gbps,
            vs_memcpy: t.gbps / copy,
        })
        .collect()
}

/// `baton bench tile-copy`: prints one row per configuration and, per
/// kernel, its default-grid and best bandwidth as a fraction of the
/// memcpy's; writes every configuration to `json` when given.
pub fn tile_copy(
    ordinal: usize,
    rows: usize,
    cols: usize,
    warmup: usize,
    reps: usize,
    json: Option<&std::path::Path>,
) -> Outcome {
    let gpu = match open_gpu(ordinal) {
        Ok(g) => g,
        Err((o, why)) => {
            println!("SKIPPED: {why}");
            return o;
        }
    };
    let mib = (rows * cols * 2) as f64 / (1 << 20) as f64;
    crate::commands::print_gpu_line(&gpu);
    println!(
        "tile copy {rows}×{cols} bf16: {mib:.0} MiB read + {mib:.0} MiB written; {warmup} warm-up + {reps} timed runs each (median, CUDA events)"
    );
    let timings = match measure(&gpu, rows, cols, warmup, reps) {
        Ok(t) => t,
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    let copy = timings[0].gbps;
    println!();
    println!(
        "{:<48} {:>10} {:>10} {:>9} {:>10}",
        "what", "median ms", "min ms", "GB/s", "vs memcpy"
    );
    for t in &timings {
        println!(
            "{:<48} {:>10.4} {:>10.4} {:>9.1} {:>10.3}",
            t.what,
            t.median_ms,
            t.min_ms,
            t.gbps,
            t.gbps / copy
        );
    }
    println!();
    let mut all_met = true;
    for mode in Mode::ALL {
        let of_mode: Vec<&Timing> = timings.iter().filter(|t| t.mode == Some(mode)).collect();
        let best = of_mode
            .iter()
            .max_by(|a, b| a.gbps.total_cmp(&b.gbps))
            .expect("timed");
        let default = of_mode.iter().find(|t| t.default).expect("timed");
        let frac = default.gbps / copy;
        all_met &= frac >= GOAL;
        println!(
            "{mode:<9} kernel/copy: {frac:.3} at the default grid ({} CTAs, {:.1} GB/s); best {:.3} at grid {} ({:.1} GB/s); goal >= {GOAL}",
            default.grid,
            default.gbps,
            best.gbps / copy,
            best.grid,
            best.gbps
        );
    }
    println!(
        "{}",
        if all_met {
            "goal met"
        } else {
            "goal NOT met (see the grids above)"
        }
    );
    let report = TileCopyReport {
        gpu: gpu.name().into(),
        rows,
        cols,
        reps,
        results: json_results(&timings),
    };
    if crate::report::write_if_asked(json, &report) {
        Outcome::Pass
    } else {
        Outcome::Fail
    }
}
