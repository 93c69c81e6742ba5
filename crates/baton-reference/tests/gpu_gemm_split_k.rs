//! Split-K (issue #18): every unit's K blocks on several workers, the
//! partials added by the unit's first worker in worker order. BF16 and
//! FP8 against the f64 reference at ragged shapes, against cuBLAS at the
//! long-K shapes the heuristic splits, and bit for bit against a second
//! launch. Fresh random inputs, poisoned outputs (NaN never passes).
//! Without a CUDA GPU each test prints `SKIPPED: no CUDA GPU (<reason>)`
//! and returns.

use baton_reference::gemm_check::{self, GemmTuning};
use baton_reference::gemm_fp8_check;
use baton_reference::random::XorShift;
use baton_runtime::gemm::fp8::{self, Fp8GemmPlan};
use baton_runtime::gemm::{GemmConfig, GemmError, GemmPlan};
use baton_runtime::{Error, Gpu, Variant};

/// `BATON_SMALL=1` (the sanitizer mode of `tools/gpu-suite.sh`): smaller
/// K so the runs finish under compute-sanitizer.
fn small() -> bool {
    std::env::var("BATON_SMALL").as_deref() == Ok("1")
}

/// Ragged shapes whose units leave most SMs idle, with K long enough for
/// three splits of every tile: 129×264 (2 tile rows, a ragged column),
/// 77×200, a single row, 300×520.
const RAGGED: [(usize, usize, usize); 4] = [
    (129, 264, 1032),
    (77, 200, 2056),
    (1, 1024, 4096),
    (300, 520, 640),
];

/// Every BF16 configuration (clusters included), 2, 3, 6 and 8 splits,
/// beta 0 and 0.5, against f64 (8: the distributed fixup of the
/// configurations up to 128 wide, `DISTRIBUTED_MIN_SPLITS`). 6 splits give a finalizer 5 contributors: one
/// load batch of 4 (128×64), two of 2 and a single one (128×128), or 5
/// single ones, then its own (`fixup_batch`); 3 and 6 ways also cut
/// the K blocks unevenly (workers crossing a unit boundary). Counts the
/// grid cannot hold resident (`units · splits > slots`: 6 ways of most
/// tiles, 3 of 128×32 at 300×520) are skipped (printed).
#[test]
fn bf16_split_k_matches_f64_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[_] = if small() { &RAGGED[..2] } else { &RAGGED };
    for config in GemmConfig::ALL {
        for splits in [2, 3, 6, 8] {
            let tuning = GemmTuning {
                config: Some(config),
                split_k: Some(splits),
                ..GemmTuning::default()
            };
            for &(m, n, k) in shapes {
                for beta in [0.0f32, 0.5] {
                    let run =
                        gemm_check::check_vs_f64(&gpu, &kernels, tuning, (m, n, k), 1.0, beta);
                    if let Err(baton_reference::Error::Runtime(Error::Gemm(
                        GemmError::SplitKCount {
                            splits,
                            units,
                            slots,
                            ..
                        },
                    ))) = &run
                        && units * splits > *slots
                    {
                        println!("{config:?} split {splits} {m}x{n}x{k}: not resident, skipped");
                        continue;
                    }
                    let cmp = run
                        .unwrap_or_else(|e| panic!("{config:?} split {splits} {m}x{n}x{k}: {e}"));
                    println!(
                        "{config:?} split {splits} {m}x{n}x{k} beta {beta}: rel {:.2e}",
                        cmp.rel_error
                    );
                    assert!(
                        cmp.passes(1e-2),
                        "{config:?} split {splits} {m}x{n}x{k} beta {beta}: {cmp:?}"
                    );
                }
            }
        }
    }
}

/// Split counts the grid cannot hold resident, or with workers of no K
/// block, are refused with the bound named; 1 turns split-K off.
#[test]
fn bf16_split_k_counts_out_of_range_are_refused() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    // 16 units of 128×64, 2 K blocks: at most 2 splits.
    let (m, n, k) = (8, 1024, 128);
    let a = s.alloc_zeros::<u16>(m * k).unwrap();
    let b = s.alloc_zeros::<u16>(n * k).unwrap();
    let mut d = s.alloc_zeros::<u16>(m * n).unwrap();
    let mut plan = GemmPlan::with_config(
        &gpu,
        &kernels,
        GemmConfig::T128x64,
        &a,
        &b,
        None,
        &mut d,
        m,
        n,
        k,
    )
    .unwrap();
    for splits in [0, 3, 1000] {
        match plan.set_split_k(&gpu, splits) {
            Err(Error::Gemm(GemmError::SplitKCount { max, .. })) => assert_eq!(max, 2),
            other => panic!("split {splits}: {other:?}"),
        }
    }
    plan.set_split_k(&gpu, 2).unwrap();
    assert_eq!(plan.split_k(), Some(2));
    plan.set_split_k(&gpu, 1).unwrap();
    assert_eq!((plan.split_k(), plan.stream_k()), (None, None));
}

/// The heuristic splits the long-K cliff shapes (few output tiles), the
/// result matches cuBLAS, and a second launch of the same plan on the same
/// inputs (D poisoned between) gives the same bits.
#[cfg(feature = "cublas")]
#[test]
fn bf16_heuristic_split_k_matches_cublas_and_is_deterministic() {
    use baton_reference::gemm_cublas::check_vs_cublas;
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let k = if small() { 4096 } else { 32768 };
    // 16 or 32 units: split at K = 4096 and at K = 32768.
    for (m, n) in [(8, 1024), (64, 1024), (256, 1024)] {
        let cmp = check_vs_cublas(&gpu, &kernels, GemmTuning::default(), (m, n, k), 1.0, 0.0)
            .unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
        println!("heuristic {m}x{n}x{k} vs cuBLAS: rel {:.2e}", cmp.rel_error);
        assert!(cmp.passes(1e-2), "{m}x{n}x{k}: {cmp:?}");
        let (bits, splits) = bf16_twice(&gpu, &kernels, (m, n, k));
        assert!(splits.is_some_and(|s| s > 1), "{m}x{n}x{k}: not split");
        assert_eq!(bits.0, bits.1, "{m}x{n}x{k}: two launches differ");
    }
}

/// Runs the heuristic's plan twice on the same random inputs, poisoning D
/// before each; returns both outputs and the plan's split.
#[cfg(feature = "cublas")]
fn bf16_twice(
    gpu: &Gpu,
    kernels: &baton_runtime::Kernels,
    (m, n, k): (usize, usize, usize),
) -> ((Vec<u16>, Vec<u16>), Option<u32>) {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let s = gpu.stream();
    let a = s
        .clone_htod(&gemm_check::random_bf16(m * k, &mut rng))
        .unwrap();
    let b = s
        .clone_htod(&gemm_check::random_bf16(n * k, &mut rng))
        .unwrap();
    let mut outs = Vec::new();
    let mut splits = None;
    for _ in 0..2 {
        let mut d = s.clone_htod(&vec![gemm_check::POISON_BF16; m * n]).unwrap();
        let plan = GemmPlan::new(gpu, kernels, &a, &b, None, &mut d, m, n, k).unwrap();
        splits = plan.split_k();
        plan.run(gpu, 1.0, 0.0).unwrap();
        drop(plan);
        gpu.synchronize().unwrap();
        let out = s.clone_dtoh(&d).unwrap();
        assert!(
            out.iter().all(|&x| x & 0x7F80 != 0x7F80),
            "{m}x{n}x{k}: a non-finite (or unwritten) output"
        );
        outs.push(out);
    }
    let second = outs.pop().unwrap();
    ((outs.pop().unwrap(), second), splits)
}

/// Every FP8 kernel (the two-wave 256×128 and 128×256 ones hand over both
/// waves' accumulators), 2 and 3 splits, against f64.
#[test]
fn fp8_split_k_matches_f64_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes = [(129, 264, 1024), (77, 200, 2048), (32, 1024, 4096)];
    for kernel in fp8::VARIANTS.into_iter().filter(|k| fp8::has_stream_k(k)) {
        for splits in [2, 3] {
            for &(m, n, k) in &shapes {
                let cmp =
                    gemm_fp8_check::check_vs_f64_split_k(&gpu, &kernels, kernel, (m, n, k), splits)
                        .unwrap_or_else(|e| panic!("{kernel} split {splits} {m}x{n}x{k}: {e}"));
                println!(
                    "{kernel} split {splits} {m}x{n}x{k}: rel {:.2e}",
                    cmp.rel_error
                );
                assert!(
                    cmp.passes(2e-2),
                    "{kernel} split {splits} {m}x{n}x{k}: {cmp:?}"
                );
            }
        }
    }
}

/// The FP8 heuristic splits the long-K cliff shape; the result matches the
/// f64 reference and two launches give the same bits.
#[test]
fn fp8_heuristic_split_k_matches_f64_and_is_deterministic() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (m, n, k) = (32, 1024, if small() { 4096 } else { 32768 });
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = gemm_fp8_check::random_e4m3(m * k, 448.0, &mut rng);
    let b = gemm_fp8_check::random_e4m3(n * k, 448.0, &mut rng);
    let (sa_len, sb_len) = fp8::scale_lens(m, n, k);
    let sa: Vec<f32> = gemm_fp8_check::random_scales(sa_len, &mut rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    let sb: Vec<f32> = gemm_fp8_check::random_scales(sb_len, &mut rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    let s = gpu.stream();
    let (a_d, b_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let (sa_d, sb_d) = (s.clone_htod(&sa).unwrap(), s.clone_htod(&sb).unwrap());
    let reference = gemm_fp8_check::reference_f64(&a, &b, &sa, &sb, m, n, k);
    let mut outs = Vec::new();
    for launch in 0..2 {
        let mut d = s
            .clone_htod(&vec![gemm_fp8_check::POISON_BF16; m * n])
            .unwrap();
        let plan =
            Fp8GemmPlan::new(&gpu, &kernels, &a_d, &b_d, &sa_d, &sb_d, &mut d, (m, n, k)).unwrap();
        assert!(
            plan.split_k().is_some_and(|s| s > 1),
            "{m}x{n}x{k}: not split"
        );
        plan.run(&gpu).unwrap();
        drop(plan);
        gpu.synchronize().unwrap();
        let out = s.clone_dtoh(&d).unwrap();
        let cmp = gemm_check::Comparison::new(&out, &reference);
        println!(
            "FP8 heuristic {m}x{n}x{k} launch {launch}: rel {:.2e}",
            cmp.rel_error
        );
        assert!(cmp.passes(2e-2), "launch {launch}: {cmp:?}");
        outs.push(out);
    }
    assert_eq!(outs[0], outs[1], "{m}x{n}x{k}: two launches differ");
}
