//! Prints the BF16 heuristic's plan and the cost model's estimate for every
//! shape of the BF16 sweep grid (`baton bench gemm --sweep`:
//! [`SWEEP_M`] × [`SWEEP_NK`], long-K pairs only where M·N ≤
//! [`LONG_K_MAX_OUTPUTS`]) and of issue #6's set ([`GEMM_SHAPES`]), on an
//! H100 (132 SMs, 66 cluster slots), without C (as the bench runs beta = 0,
//! so swap-AB competes at small M). No GPU needed.
//!
//! One line per shape: `M N K config ctas splits estimate math dram l2
//! fixup` (µs; `ctas` as the bench's plan label counts them: workers ×
//! cluster size, at most one wave). Run it on two commits and join the
//! lines by shape to list the plans that a cost-model change moves:
//!
//! ```text
//! cargo run -q -p baton-cli --example bf16_plans > plans.txt
//! ```

use baton_cli::bench::GEMM_SHAPES;
use baton_cli::sweep::{LONG_K_MAX_OUTPUTS, SWEEP_M, SWEEP_NK, ShapeClass};
use baton_runtime::Target;
use baton_runtime::gemm::GemmConfig;

fn main() {
    let slots = |c: GemmConfig| 132 / c.cluster_m();
    let mut shapes = Vec::new();
    for &m in &SWEEP_M {
        for pair in &SWEEP_NK {
            if pair.class == ShapeClass::LongK && m * pair.n > LONG_K_MAX_OUTPUTS {
                continue;
            }
            shapes.push(((m, pair.n, pair.k), "sweep"));
        }
    }
    shapes.extend(GEMM_SHAPES.iter().map(|&s| (s, "issue6")));
    println!("# set M N K config ctas splits estimate_us math_us dram_us l2_us fixup_us");
    for ((m, n, k), set) in shapes {
        let (config, splits) = GemmConfig::plan_for_operands(Target::Sm90a, m, n, k, false, slots);
        let c = config.plan_cost(m, n, k, slots(config));
        let ctas = (c.units * c.splits).min(c.slots) * config.cluster_m() as usize;
        println!(
            "{set} {m} {n} {k} {} {ctas} {splits} {:.1} {:.1} {:.1} {:.1} {:.1}",
            config.name(),
            c.estimate_us(),
            c.math_us,
            c.dram_us,
            c.l2_us,
            c.fixup_us
        );
    }
}
