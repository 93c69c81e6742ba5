//! `baton::pipeline` and `baton::epi_load` on a real GPU (kernels in
//! `kernels/src/pipeline.rs`): ≥ 10^6 sequence-numbered payloads from a
//! producer warp to 4 consumer warps (128 arrivals), explicit consumption
//! with lane-guarded arrives, and the epilogue-load round trip. Without a
//! CUDA GPU each test prints `SKIPPED: no CUDA GPU (<reason>)` and returns.

use baton_runtime::{Gpu, Variant};
use baton_selftest::pipeline_gpu;

/// `BATON_SMALL=1` (the GPU suite's sanitizer mode, `tools/gpu-suite.sh
/// --sanitize`): sizes small enough to finish under compute-sanitizer.
fn small() -> bool {
    std::env::var("BATON_SMALL").as_deref() == Ok("1")
}

#[test]
fn a_million_payloads_pass_through_the_ring_intact() {
    let Some(gpu) = Gpu::for_test() else { return };
    for variant in Variant::ALL {
        let kernels =
            baton_selftest::kernels::load_kernels(&gpu, variant).unwrap_or_else(|e| panic!("{e}"));
        for kernel in ["baton_pipeline_handoff", "baton_pipeline_explicit"] {
            // 132 blocks × 8192 payloads ≈ 1.08 × 10^6 handoffs to 128 consumers
            // each (small: 8 × 512, every slot reused 128 times).
            let (blocks, items) = if small() { (8, 512) } else { (132, 8192) };
            let run = pipeline_gpu::run_handoff(&gpu, &kernels, kernel, blocks, items)
                .unwrap_or_else(|e| panic!("{kernel}: {e}"));
            println!(
                "{variant} {kernel}: {} payloads in {:.2} ms",
                run.payloads, run.ms
            );
            assert!(run.payloads >= if small() { 4096 } else { 1_000_000 });
            assert!(run.passed(), "{variant} {kernel}: {run:#?}");
        }
    }
}

#[test]
fn epilogue_load_pipeline_round_trip() {
    let Some(gpu) = Gpu::for_test() else { return };
    for variant in Variant::ALL {
        let kernels =
            baton_selftest::kernels::load_kernels(&gpu, variant).unwrap_or_else(|e| panic!("{e}"));
        for beta in [0.5f32, 1.0, -2.0] {
            let (blocks, tiles) = if small() { (4, 24) } else { (16, 300) };
            let run = pipeline_gpu::run_epi_load(&gpu, &kernels, blocks, tiles, beta)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                (run.wrong, run.unwritten),
                (0, 0),
                "{variant} beta {beta}: {run:?}"
            );
        }
    }
}

#[test]
fn pipeline_and_handwritten_handoffs_agree() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (blocks, iters, repeats) = if small() {
        (8, 1 << 10, 1)
    } else {
        (132, 1 << 14, 3)
    };
    let [ours, hand] = pipeline_gpu::run_zero_cost(&gpu, &kernels, blocks, iters, repeats)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{}: {:.1} handoffs/us; {}: {:.1} handoffs/us",
        ours.kernel, ours.handoffs_per_us, hand.kernel, hand.handoffs_per_us
    );
}
