use baton_runtime::gemm::GemmConfig;
use baton_runtime::gemm::cost_model::Problem;
fn main() {
    let slots = |c: GemmConfig| 132 / c.cluster_m();
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    for sh in args.chunks(3) {
        let (m, n, k) = (sh[0], sh[1], sh[2]);
        let cands = GemmConfig::candidates_for_operands(m, false);
        let (c, cost) = GemmConfig::plan_among(&cands, m, n, k, slots);
        println!(
            "{m}x{n}x{k}: plan {:?} est {:.1} us splits {}",
            c,
            cost.estimate_us(),
            cost.splits
        );
        let p = Problem::bf16(m, n, k);
        for &cc in &cands {
            let t = cc.plan_cost_for(&p, slots(cc));
            println!(
                "   {:?}: est {:.1} math {:.1} chain {:.1} dram {:.1} l2 {:.1} splits {} units {} waves {}",
                cc,
                t.estimate_us(),
                t.math_us,
                t.chain_us,
                t.dram_us,
                t.l2_us,
                t.splits,
                t.units,
                t.waves
            );
        }
    }
}
