//! Prints the BF16 heuristic's plan and the cost model's estimate for every
//! shape of the BF16 sweep grid (`baton bench gemm --sweep`:
//! [`SWEEP_M`] × [`SWEEP_NK`], long-K pairs only where M·N ≤
//! [`LONG_K_MAX_OUTPUTS`]) and of issue #6's set ([`GEMM_SHAPES`]), on an
//! H100 (132 SMs, 66 cluster slots), without C (as the bench runs beta = 0,
//! so swap-AB competes at small M). No GPU needed.
//!
//! One line per shape: `M N K config ctas splits estimate math dram l2
//! fixup repack` (µs; `repack` the operand the plan copies to rows 128
//! bytes apart, [`plan_with_repack`], or `-`; `ctas` as the bench's plan label counts them: workers ×
//! cluster size, at most one wave). Run it on two commits and join the
//! lines by shape to list the plans that a cost-model change moves:
//!
//! ```text
//! cargo run -q -p baton-cli --example bf16_plans > plans.txt
//! cargo run -q -p baton-cli --example bf16_plans -- 192x1536x16384 128x2048x8192
//! ```
//!
//! With arguments, those shapes instead (set `args`): `MxNxK` for the
//! heuristic's plan, `MxNxK:CONFIG:SPLITS` (e.g. `256x1024x32768:128x128:8`)
//! for the estimate of a forced plan (`GemmConfig::plan_cost_split_on`, what
//! `baton bench gemm --config CONFIG --split-k SPLITS` runs; set `forced`).
//!
//! `BATON_DRAM_TBPS` (e.g. `4.17`, an H200) plans at that DRAM bandwidth
//! (`OnGpu`, as `GemmPlan::new` plans on the device) instead of the H100's.

use baton_cli::args::{ForcedPlan, parse_config, parse_forced_plan};
use baton_cli::bench::GEMM_SHAPES;
use baton_cli::sweep::{LONG_K_MAX_OUTPUTS, SWEEP_M, SWEEP_NK, ShapeClass};
use baton_runtime::Target;
use baton_runtime::gemm::cost_model::{Machine, Problem, TileCost};
use baton_runtime::gemm::{GemmConfig, OnGpu, PlanGpu, Repack, plan_with_repack};

fn main() {
    let slots = |c: GemmConfig| 132 / c.cluster_m();
    let dram_bytes_per_s = std::env::var("BATON_DRAM_TBPS")
        .map_or(Machine::H100_BF16.dram_bytes_per_s, |v| {
            v.parse::<f64>().expect("BATON_DRAM_TBPS: TB/s") * 1e12
        });
    let gpu = OnGpu {
        slots_of: slots,
        dram_bytes_per_s,
    };
    let machine = gpu.machine();
    let args: Vec<Arg> = std::env::args().skip(1).map(|a| parse(&a)).collect();
    println!("# set M N K config ctas splits estimate_us math_us dram_us l2_us fixup_us repack");
    let mut shapes = Vec::new();
    for &(shape, forced) in &args {
        match forced {
            Some((config, splits)) => {
                let (m, n, k) = shape;
                let c = config.plan_cost_split_on(
                    &Problem::bf16(m, n, k),
                    slots(config),
                    splits,
                    &machine,
                );
                print_line("forced", shape, config, &c, None);
            }
            None => shapes.push((shape, "args")),
        }
    }
    for &m in SWEEP_M.iter().filter(|_| args.is_empty()) {
        for pair in &SWEEP_NK {
            if pair.class == ShapeClass::LongK && m * pair.n > LONG_K_MAX_OUTPUTS {
                continue;
            }
            shapes.push(((m, pair.n, pair.k), "sweep"));
        }
    }
    if args.is_empty() {
        shapes.extend(GEMM_SHAPES.iter().map(|&s| (s, "issue6")));
    }
    for ((m, n, k), set) in shapes {
        let (config, splits) = GemmConfig::plan_for_operands(Target::Sm90a, m, n, k, false, gpu);
        // The 128-row narrow swap-AB tile stands in for a 128×64 plan and
        // carries its cost (`GemmConfig::narrow_128_instead`).
        let costed = match config {
            GemmConfig::SwapAbNarrow128 => GemmConfig::T128x64,
            c => c,
        };
        let c = costed.plan_cost_on(&Problem::bf16(m, n, k), slots(costed), &machine);
        assert_eq!(c.splits, splits as usize);
        // What `GemmPlan::new` runs on packed operands: re-packing one of
        // them where that pays.
        let p = plan_with_repack(m, n, k, (k, k), false, gpu);
        match p.repack {
            None => print_line(set, (m, n, k), config, &c, None),
            Some(which) => print_line(set, (m, n, k), p.config, &p.cost, Some(which)),
        }
    }
}

/// One output line: `set M N K config ctas splits estimate math dram l2
/// fixup repack`.
fn print_line(
    set: &str,
    (m, n, k): (usize, usize, usize),
    config: GemmConfig,
    c: &TileCost,
    repack: Option<Repack>,
) {
    let ctas = (c.units * c.splits).min(c.slots) * config.cluster_m() as usize;
    let repack = repack.map_or("-".to_string(), |r| format!("{r:?}"));
    println!(
        "{set} {m} {n} {k} {} {ctas} {} {:.1} {:.1} {:.1} {:.1} {:.1} {repack}",
        config.name(),
        c.splits,
        c.estimate_us(),
        c.math_us,
        c.dram_us,
        c.l2_us,
        c.fixup_us
    );
}

/// A command-line shape, and the configuration and split count forced on
/// it, if any.
type Arg = ForcedPlan<GemmConfig>;

/// `MxNxK` or `MxNxK:CONFIG:SPLITS` (CONFIG a sm_90a configuration's
/// name, as `baton bench gemm --config` takes it).
fn parse(a: &str) -> Arg {
    let sm90 = |name: &str| {
        parse_config(name).and_then(|c| match c.target() {
            Target::Sm90a => Ok(c),
            _ => Err(format!("{name} is not a sm_90a configuration")),
        })
    };
    parse_forced_plan(a, sm90).unwrap_or_else(|e| panic!("{e}"))
}
