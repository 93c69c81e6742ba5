//! `baton info`, `baton smoke`, `baton probe`, `baton demo`.
//!
//! Exit codes (see [`Outcome`]): 0 pass, 1 fail, 77 skipped (no usable GPU
//! or no PTX in this build) — the convention `tools/gpu-suite.sh` reads.

use baton_reference::random::XorShift;
use baton_runtime::{Error, Gpu, KERNELS, Target, Variant, ptx};
use baton_selftest::smoke;
use std::fmt::Write as _;
use xtask::ptxas;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything checked passed.
    Pass,
    /// Something checked failed.
    Fail,
    /// Nothing could be checked here (no GPU, no PTX); the reason was printed.
    Skip,
}

impl Outcome {
    /// The process exit code: 0, 1 or 77.
    pub fn code(self) -> i32 {
        match self {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::Skip => 77,
        }
    }
}

/// Opens GPU `ordinal` of any supported [`Target`], or says why not:
/// `Err(Skip reason)` when there is no usable GPU, `Err(Fail reason)` for
/// other errors.
pub(crate) fn open_any_gpu(ordinal: usize) -> Result<Gpu, (Outcome, String)> {
    match Gpu::new(ordinal) {
        Ok(g) => Ok(g),
        Err(e @ Error::WrongArch { .. }) => Err((Outcome::Skip, e.to_string())),
        Err(e) if e.is_no_gpu() => Err((Outcome::Skip, e.to_string())),
        Err(e) => Err((Outcome::Fail, e.to_string())),
    }
}

/// Opens GPU `ordinal` for a command that runs sm_90a (Hopper) kernels;
/// on another target it is a skip that says so.
pub(crate) fn open_gpu(ordinal: usize) -> Result<Gpu, (Outcome, String)> {
    let gpu = open_any_gpu(ordinal)?;
    if gpu.target() != Target::Sm90a {
        return Err((
            Outcome::Skip,
            format!(
                "this command runs the {} kernels; GPU {ordinal} is {} ({})",
                Target::Sm90a,
                gpu.name(),
                gpu.target()
            ),
        ));
    }
    Ok(gpu)
}

/// Prints the line a bench starts with: `GPU: NAME (N SMs, DRAM X TB/s
/// for the plans' cost model), driver V`.
pub(crate) fn print_gpu_line(gpu: &Gpu) {
    println!(
        "GPU: {} ({} SMs, DRAM {:.2} TB/s for the plans' cost model), driver {}",
        gpu.name(),
        gpu.sm_count(),
        gpu.dram_bytes_per_s() / 1e12,
        gpu.driver_version()
    );
}

/// Opens GPU `ordinal` and loads `variant` of the kernels, or prints why
/// not (`SKIPPED: …` without a usable GPU, `FAIL: …` otherwise) and returns
/// the outcome to exit with.
pub(crate) fn open_gpu_kernels(
    ordinal: usize,
    variant: Variant,
) -> Result<(Gpu, baton_runtime::Kernels), Outcome> {
    open_kernels_with(open_gpu(ordinal), variant, false)
}

/// [`open_gpu_kernels`] for the test and evidence kernels (their own module,
/// `baton_selftest::kernels::load_kernels`: smoke, pipeline, tile copy, zero-cost pair,
/// hang report).
pub(crate) fn open_gpu_selftest_kernels(
    ordinal: usize,
    variant: Variant,
) -> Result<(Gpu, baton_runtime::Kernels), Outcome> {
    open_kernels_with(open_gpu(ordinal), variant, true)
}

/// [`open_gpu_kernels`] on a GPU of any supported [`Target`] (commands
/// whose kernels exist for both: `bench gemm`).
pub(crate) fn open_any_gpu_kernels(
    ordinal: usize,
    variant: Variant,
) -> Result<(Gpu, baton_runtime::Kernels), Outcome> {
    open_kernels_with(open_any_gpu(ordinal), variant, false)
}

fn open_kernels_with(
    opened: Result<Gpu, (Outcome, String)>,
    variant: Variant,
    selftest: bool,
) -> Result<(Gpu, baton_runtime::Kernels), Outcome> {
    let gpu = match opened {
        Ok(g) => g,
        Err((o, why)) => {
            println!(
                "{}: {why}",
                if o == Outcome::Skip {
                    "SKIPPED"
                } else {
                    "FAIL"
                }
            );
            return Err(o);
        }
    };
    let loaded = if selftest {
        baton_selftest::kernels::load_kernels(&gpu, variant)
    } else {
        gpu.load_kernels(variant)
    };
    match loaded {
        Ok(k) => Ok((gpu, k)),
        Err(e) => {
            println!("FAIL: {e}");
            Err(Outcome::Fail)
        }
    }
}

/// The build-time ptxas report of `variant` as a table (kernel, hot,
/// registers, spills, stack, smem), or a line saying why there is none.
pub fn ptxas_table(variant: Variant) -> String {
    // The production module's report, then the test kernels' module's.
    let (Some(text), Some(selftest)) = (
        ptx::ptxas_report(variant),
        baton_selftest::kernels::ptxas_report(variant),
    ) else {
        return format!(
            "  (no ptxas report for the {variant} PTX: ptxas was not available when it was built)\n"
        );
    };
    let reports = match (ptxas::parse(text), ptxas::parse(selftest)) {
        (Ok(mut r), Ok(t)) => {
            r.extend(t);
            r
        }
        (Err(e), _) | (_, Err(e)) => return format!("  (unreadable ptxas report: {e})\n"),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  {:<34} {:>4} {:>5} {:>7} {:>7} {:>6} {:>6}",
        "kernel", "hot", "regs", "spill-s", "spill-l", "stack", "smem"
    );
    for r in reports.iter().filter(|r| r.entry) {
        let hot = match all_kernels().find(|k| k.name == r.kernel) {
            Some(k) if k.hot => "yes",
            Some(_) => "no",
            None => "??",
        };
        let flag = if variant == Variant::Release && hot == "yes" && !r.is_clean() {
            "  <- hot kernel spills/uses stack"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {:<34} {:>4} {:>5} {:>7} {:>7} {:>6} {:>6}{flag}",
            r.kernel, hot, r.registers, r.spill_stores, r.spill_loads, r.stack_frame, r.smem
        );
    }
    s
}

/// The production kernels, then the test kernels (their own module).
fn all_kernels() -> impl Iterator<Item = &'static baton_runtime::KernelInfo> {
    KERNELS.iter().chain(baton_selftest::kernels::KERNELS)
}

/// `baton info`: the embedded kernels, their ptxas reports, and the GPU.
pub fn info(ordinal: usize) -> Outcome {
    println!("baton {} — kernels for sm_90a", env!("CARGO_PKG_VERSION"));
    println!("PTX: {}", ptx::SOURCE);
    println!("test-kernel PTX: {}", baton_selftest::kernels::SOURCE);
    println!("\nKernels:");
    for k in all_kernels() {
        println!(
            "  {:<34} {:<4} {}",
            k.name,
            if k.hot { "hot" } else { "" },
            k.about
        );
    }
    for v in Variant::ALL {
        println!("\nptxas -v ({v} PTX, at build time):");
        print!("{}", ptxas_table(v));
    }
    println!();
    match open_any_gpu(ordinal) {
        Ok(gpu) => {
            println!(
                "GPU {}: {} — compute capability {}.{} ({}), {} SMs, {} KiB shared memory per block (opt-in), DRAM {:.2} TB/s for the GEMM plans' cost model, driver API {}.{}",
                gpu.ordinal(),
                gpu.name(),
                gpu.arch().0,
                gpu.arch().1,
                gpu.target().name(),
                gpu.sm_count(),
                gpu.max_smem_optin() / 1024,
                gpu.dram_bytes_per_s() / 1e12,
                gpu.driver_version() / 1000,
                (gpu.driver_version() % 1000) / 10
            );
            let mut outcome = Outcome::Pass;
            for (v, selftest) in Variant::ALL
                .into_iter()
                .flat_map(|v| [(v, false), (v, true)])
            {
                let (what, loaded) = if selftest {
                    (
                        "test-kernel module",
                        baton_selftest::kernels::load_kernels(&gpu, v),
                    )
                } else {
                    ("module", gpu.load_kernels(v))
                };
                match loaded {
                    Ok(ks) => {
                        println!(
                            "  {v} {what} loaded (driver JIT): {} kernels",
                            ks.names().len()
                        );
                        for name in ks.names() {
                            match ks.get(name) {
                                Ok(k) => {
                                    let a = k.attrs();
                                    println!(
                                        "    {name:<34} {:>3} regs, {:>4} B local, {:>5} B static smem, <= {} threads/block",
                                        a.registers,
                                        a.local_bytes,
                                        a.static_smem_bytes,
                                        a.max_threads_per_block
                                    );
                                }
                                Err(e) => {
                                    println!("    {name}: {e}");
                                    outcome = Outcome::Fail;
                                }
                            }
                        }
                    }
                    Err(e) => {
                        println!("  {v} {what}: {e}");
                        outcome = Outcome::Fail;
                    }
                }
            }
            outcome
        }
        Err((o, reason)) => {
            println!("GPU: none usable: {reason}");
            if o == Outcome::Fail { o } else { Outcome::Pass }
        }
    }
}

/// `baton probe`: Pass when GPU `ordinal` is a usable Hopper GPU and this
/// build has its PTX; Skip (with the reason printed) otherwise.
pub fn probe(ordinal: usize) -> Outcome {
    match open_gpu(ordinal) {
        Ok(gpu) => match ptx::get(Variant::Release) {
            Ok(_) => {
                println!(
                    "GPU {}: {} (sm_{}{}) ready",
                    gpu.ordinal(),
                    gpu.name(),
                    gpu.arch().0,
                    gpu.arch().1
                );
                Outcome::Pass
            }
            Err(e) => {
                println!("GPU present but {e}");
                Outcome::Skip
            }
        },
        Err((o, reason)) => {
            println!("no usable GPU: {reason}");
            if o == Outcome::Fail {
                Outcome::Fail
            } else {
                Outcome::Skip
            }
        }
    }
}

/// The PASS/FAIL table of one smoke run.
pub fn smoke_table(variant: Variant, r: &smoke::SmokeReport) -> String {
    let mut s = String::new();
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let _ = writeln!(
        s,
        "smoke kernel {} ({variant} PTX, module {}), seed {:#018x}",
        smoke::KERNEL,
        r.module,
        r.seed
    );
    let _ = writeln!(
        s,
        "  {:<72} {:>12} {:>12}  result",
        "check", "expected", "got"
    );
    let (data, flags) = r.checks.split_at(smoke::N.min(r.checks.len()));
    let ok = data.iter().filter(|c| c.ok()).count();
    let _ = writeln!(
        s,
        "  {:<72} {:>12} {:>12}  {}",
        format!(
            "out[0..{}] = in*3+1 (random input, poisoned output)",
            data.len()
        ),
        format!("{} words", data.len()),
        format!("{ok} match"),
        verdict(ok == data.len())
    );
    for c in data.iter().filter(|c| !c.ok()) {
        let _ = writeln!(
            s,
            "    {:<70} {:>#12x} {:>#12x}  FAIL",
            c.name, c.expected, c.got
        );
    }
    for c in flags {
        let _ = writeln!(
            s,
            "  {:<72} {:>12} {:>12}  {}",
            c.name,
            c.expected,
            c.got,
            verdict(c.ok())
        );
    }
    let _ = writeln!(s, "  => {}", verdict(r.passed()));
    s
}

/// Cluster sizes `baton smoke` launches the cluster smoke kernel with (16 is
/// Hopper's non-portable maximum).
pub const CLUSTER_SIZES: [u32; 4] = [1, 2, 8, 16];

/// One row per check: name, expected, got, PASS/FAIL.
pub fn checks_table(checks: &[smoke::Check]) -> String {
    let mut s = String::new();
    for c in checks {
        let _ = writeln!(
            s,
            "  {:<72} {:>12} {:>12}  {}",
            c.name,
            c.expected,
            c.got,
            if c.ok() { "PASS" } else { "FAIL" }
        );
    }
    s
}

/// `baton smoke`: runs the smoke kernel from each of `variants` and prints
/// a PASS/FAIL table. Skip without a usable GPU or without PTX.
pub fn smoke(ordinal: usize, variants: &[Variant], seed: Option<u64>) -> Outcome {
    let gpu = match open_gpu(ordinal) {
        Ok(g) => g,
        Err((o, reason)) => {
            println!(
                "{}: no CUDA GPU ({reason})",
                if o == Outcome::Skip {
                    "SKIPPED"
                } else {
                    "FAIL"
                }
            );
            return o;
        }
    };
    println!(
        "GPU {}: {} (sm_{}{}, {} SMs)\n",
        gpu.ordinal(),
        gpu.name(),
        gpu.arch().0,
        gpu.arch().1,
        gpu.sm_count()
    );
    let mut outcome = Outcome::Pass;
    for &v in variants {
        let kernels = match baton_selftest::kernels::load_kernels(&gpu, v) {
            Ok(k) => k,
            Err(e @ Error::PtxNotBuilt { .. }) => {
                println!("SKIPPED: {e}");
                if outcome == Outcome::Pass {
                    outcome = Outcome::Skip;
                }
                continue;
            }
            Err(e) => {
                println!("FAIL: {e}");
                outcome = Outcome::Fail;
                continue;
            }
        };
        let seed = seed.unwrap_or_else(XorShift::seed_from_time);
        match smoke::run(&gpu, &kernels, seed) {
            Ok(r) => {
                print!("{}", smoke_table(v, &r));
                if !r.passed() {
                    outcome = Outcome::Fail;
                }
            }
            Err(e) => {
                println!("FAIL: smoke kernel ({v}): {e}");
                outcome = Outcome::Fail;
            }
        }
        println!();
        println!(
            "cluster smoke kernel {} ({v} PTX): 2 clusters of each size",
            smoke::CLUSTER_KERNEL
        );
        for cluster in CLUSTER_SIZES {
            match smoke::run_cluster(&gpu, &kernels, 2 * cluster, cluster) {
                Ok(r) => {
                    print!("{}", checks_table(&r.checks));
                    if !r.passed() {
                        outcome = Outcome::Fail;
                    }
                }
                Err(e) => {
                    println!("  FAIL: clusters of {cluster}: {e}");
                    outcome = Outcome::Fail;
                }
            }
        }
        println!();
    }
    println!(
        "smoke: {}",
        match outcome {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Skip => "SKIPPED",
        }
    );
    outcome
}

/// `baton demo`: the pipeline on the CPU backend (host threads stand for
/// warps, atomics for mbarriers); no GPU needed.
pub fn run_cpu_demo(items: u64, consumer_warps: u32) -> Outcome {
    let r = crate::demo::run(items, consumer_warps);
    println!("{r}");
    if r.errors == 0 {
        Outcome::Pass
    } else {
        Outcome::Fail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(corrupt: Option<usize>) -> smoke::SmokeReport {
        let input = smoke::input(42);
        let mut checks = smoke::expected(&input);
        for c in &mut checks {
            c.got = c.expected;
        }
        if let Some(i) = corrupt {
            checks[i].got ^= 1;
        }
        smoke::SmokeReport {
            module: "m".into(),
            seed: 42,
            checks,
        }
    }

    #[test]
    fn smoke_table_passes_a_clean_report() {
        let t = smoke_table(Variant::Release, &report(None));
        assert!(
            t.contains("32 match") && t.trim_end().ends_with("=> PASS"),
            "{t}"
        );
        assert!(!t.contains("FAIL"), "{t}");
    }

    #[test]
    fn smoke_table_shows_a_bad_data_word() {
        let t = smoke_table(Variant::Debug, &report(Some(5)));
        assert!(
            t.contains("out[5]") && t.contains("31 match") && t.trim_end().ends_with("=> FAIL"),
            "{t}"
        );
    }

    #[test]
    fn smoke_table_shows_a_bad_phase_flag() {
        let t = smoke_table(Variant::Release, &report(Some(smoke::N + 1)));
        let line = t
            .lines()
            .find(|l| l.contains("fresh barrier: try_wait.parity(1)"))
            .unwrap();
        assert!(line.ends_with("FAIL"), "{t}");
    }

    #[test]
    fn checks_table_marks_each_row() {
        let out: Vec<u32> = (0..4u32)
            .flat_map(|b| [b % 2, 2, b, u32::from(b != 3)])
            .collect();
        let t = checks_table(&smoke::cluster_checks(&out, 4, 2));
        let fails: Vec<&str> = t.lines().filter(|l| l.ends_with("FAIL")).collect();
        assert_eq!(fails.len(), 1, "{t}");
        assert!(fails[0].contains("remote arrivals"), "{t}");
    }

    #[test]
    fn exit_codes() {
        assert_eq!(
            [
                Outcome::Pass.code(),
                Outcome::Fail.code(),
                Outcome::Skip.code()
            ],
            [0, 1, 77]
        );
    }

    #[test]
    fn cpu_demo_passes() {
        assert_eq!(run_cpu_demo(2_000, 2), Outcome::Pass);
    }
}
