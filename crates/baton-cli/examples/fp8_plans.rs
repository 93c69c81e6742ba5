//! Prints the FP8 heuristic's plan (`baton_runtime::gemm::fp8::plan`:
//! kernel and split-K count) and the cost model's estimate for every shape
//! of the FP8 sweep grid (`baton bench gemm-fp8 --sweep`: the shapes
//! [`sweep::plan`] times at the default memory budget) and of issue #7's
//! set ([`FP8_SHAPES`]), on an H100 (132 SMs). No GPU needed.
//!
//! One line per shape: `set M N K kernel ctas splits estimate math dram l2
//! fixup` (µs; `kernel` without the `baton_gemm_fp8_blockwise_` prefix;
//! `ctas` as the bench's grid counts them: `units · splits` for a split,
//! else the equal-waves workers times the cluster size; at M ≤ 128 a
//! whole-tile plan names the 64-row kernel that `fp8::for_m` runs, while
//! `ctas` and the estimates are the cost model's 128-row tile's). Run it on two
//! commits and join the lines by shape to list the plans that a
//! cost-model change moves:
//!
//! ```text
//! cargo run -q -p baton-cli --example fp8_plans > plans.txt
//! cargo run -q -p baton-cli --example fp8_plans -- 32x1024x32768 32x1024x32768:128x32_db:4
//! ```
//!
//! With arguments, those shapes instead (set `args`): `MxNxK` for the
//! heuristic's plan, `MxNxK:KERNEL:SPLITS` (e.g. `32x1024x32768:128x32_db:4`,
//! the kernel with or without its prefix) for the estimate of a forced plan
//! (`fp8::plan_cost`, what `baton bench gemm-fp8 --kernel KERNEL
//! --fp8-split-k SPLITS` runs; set `forced`; `cap` appended where the plan
//! would refuse the count: `units · splits` over the slots, or fewer than
//! one K block per worker).
//!
//! `BATON_DRAM_TBPS` (e.g. `4.17`, an H200) plans the sweep at that DRAM
//! bandwidth (`fp8::plan_on`, as `Fp8GemmPlan::new` plans on the device).
//!
//! [`sweep::plan`]: baton_cli::sweep::plan
//! [`FP8_SHAPES`]: baton_cli::fp8_bench::FP8_SHAPES

use baton_cli::args::{
    FP8_KERNEL_PREFIX as PREFIX, ForcedPlan, parse_forced_plan, parse_fp8_kernel,
};
use baton_cli::fp8_bench::FP8_SHAPES;
use baton_cli::sweep::{self, DEFAULT_BUDGET_GIB, Family};
use baton_runtime::gemm::cost_model::TileCost;
use baton_runtime::gemm::fp8::{self, SCALE_BLOCK};

/// The H100's SMs.
const SMS: u32 = 132;

fn main() {
    let args: Vec<Arg> = std::env::args().skip(1).map(|a| parse(&a)).collect();
    println!("# set M N K kernel ctas splits estimate_us math_us dram_us l2_us fixup_us");
    let mut shapes = Vec::new();
    for &(shape, forced) in &args {
        match forced {
            Some((kernel, splits)) => {
                let (m, n, k) = shape;
                let Some(c) = fp8::plan_cost(m, n, k, SMS, kernel, splits) else {
                    println!("# {m}x{n}x{k}: {kernel} has no cost tile");
                    continue;
                };
                // (Whole tiles, `splits == 1`, run in as many waves as
                // they take: no cap.)
                let capped = splits > 1 && (c.units * splits > c.slots || k / SCALE_BLOCK < splits);
                print_line(
                    "forced",
                    shape,
                    kernel,
                    &c,
                    if capped { " cap" } else { "" },
                );
            }
            None => shapes.push((shape, "args")),
        }
    }
    if args.is_empty() {
        let budget = (DEFAULT_BUDGET_GIB * (1u64 << 30) as f64) as u64;
        shapes.extend(
            sweep::plan(Family::Fp8, budget, 21)
                .into_iter()
                .filter(|s| s.skip.is_none())
                .map(|s| (s.mnk, "sweep")),
        );
        shapes.extend(FP8_SHAPES.iter().map(|&s| (s, "issue7")));
    }
    let dram_bytes_per_s = std::env::var("BATON_DRAM_TBPS").map_or(
        baton_runtime::gemm::cost_model::Machine::H100_FP8.dram_bytes_per_s,
        |v| v.parse::<f64>().expect("BATON_DRAM_TBPS: TB/s") * 1e12,
    );
    for ((m, n, k), set) in shapes {
        let (kernel, c) = fp8::plan_on(m, n, k, SMS, dram_bytes_per_s);
        print_line(set, (m, n, k), kernel, &c, "");
    }
}

/// One output line: `set M N K kernel ctas splits estimate math dram l2
/// fixup`, then `tail`.
fn print_line(set: &str, (m, n, k): (usize, usize, usize), kernel: &str, c: &TileCost, tail: &str) {
    let cluster = fp8::cluster_of(kernel) as usize;
    let ctas = if c.splits > 1 {
        c.units * c.splits * cluster
    } else {
        fp8::equal_waves_workers(c.units as u32, c.slots as u32) as usize * cluster
    };
    println!(
        "{set} {m} {n} {k} {} {ctas} {} {:.1} {:.1} {:.1} {:.1} {:.1}{tail}",
        kernel.trim_start_matches(PREFIX),
        c.splits,
        c.estimate_us(),
        c.math_us,
        c.dram_us,
        c.l2_us,
        c.fixup_us
    );
}

/// A command-line shape, and the kernel and split count forced on it, if
/// any.
type Arg = ForcedPlan<&'static str>;

/// `MxNxK` or `MxNxK:KERNEL:SPLITS` (KERNEL one of `fp8::VARIANTS`, with
/// or without the `baton_gemm_fp8_blockwise_` prefix).
fn parse(a: &str) -> Arg {
    parse_forced_plan(a, parse_fp8_kernel).unwrap_or_else(|e| panic!("{e}"))
}
