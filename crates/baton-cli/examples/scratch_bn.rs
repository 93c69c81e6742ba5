use baton_cli::sweep::{LONG_K_MAX_OUTPUTS, SWEEP_M, SWEEP_NK, ShapeClass};
use baton_runtime::Target;
use baton_runtime::gemm::GemmConfig;
use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
fn main() {
    let slots = |c: GemmConfig| 132 / c.cluster_m();
    let base = GemmConfig::T128x224C2;
    let mut shapes = vec![];
    for &m in &SWEEP_M {
        for pair in &SWEEP_NK {
            if pair.class == ShapeClass::LongK && m * pair.n > LONG_K_MAX_OUTPUTS {
                continue;
            }
            shapes.push((m, pair.n, pair.k));
        }
    }
    let extra: Vec<(usize, usize, usize)> = std::env::args()
        .skip(1)
        .map(|a| {
            let v: Vec<usize> = a.split('x').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2])
        })
        .collect();
    if !extra.is_empty() {
        shapes = extra;
    }
    for (m, n, k) in shapes {
        let (config, _) = GemmConfig::plan_for_operands(Target::Sm90a, m, n, k, false, slots);
        let cur = config.plan_cost(m, n, k, slots(config)).estimate_us();
        let mut line = format!("{m}x{n}x{k} {config:?} {cur:.1}");
        let mut best = cur;
        for bn in [160usize, 192] {
            for cl in [1usize, 2] {
                let t = TileShape {
                    bm: 128,
                    bn,
                    bk: 64,
                    cluster_m: cl,
                    speed: 0.98,
                };
                let c = t
                    .cost_best_split_streaming(
                        &Problem::bf16(m, n, k),
                        &Machine::H100_BF16,
                        (132 / cl) as u32,
                        base.max_splits(m, 66),
                        base.tile_overhead_k_blocks(),
                        base.streaming(),
                    )
                    .estimate_us();
                line += &format!(" {bn}c{cl}:{c:.1}");
                best = best.min(c);
            }
        }
        println!("{line} gain {:.3}", cur / best);
    }
}
