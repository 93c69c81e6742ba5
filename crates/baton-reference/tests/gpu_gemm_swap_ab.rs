//! Swap-AB BF16 GEMM for small M (issue #18 item 3): `Dᵀ = B·Aᵀ` with the
//! user's N as the MMA's rows. Every swap-AB configuration (clusters included), whole and
//! split 2–9 ways, against the f64 reference at ragged shapes (M = 1, 7, 16, 33,
//! 64; N with a ragged last tile of 128 and of 64 rows; K with a ragged K
//! block), and with stream-K (partial-wave segments); the heuristic's plans and the forced configurations against cuBLAS; C
//! refused. Fresh random inputs, poisoned outputs (NaN never passes).
//! Without a CUDA GPU each test prints `SKIPPED: no CUDA GPU (<reason>)`
//! and returns.
//!
//! `swap_ab_timing_grid` (ignored: run it with `--ignored --nocapture`)
//! times the small-M candidates and cuBLAS, each on its own cold inputs
//! (`cold_inputs`), one shape after another; it asserts only their outputs against cuBLAS.

use baton_reference::gemm_check::{self, GemmTuning};
#[cfg(feature = "cublas")]
use baton_reference::{
    cold_inputs,
    gemm_check::{Comparison, POISON_BF16, random_bf16},
    gemm_cublas,
    random::XorShift,
    timing::{QueuedTimer, median},
};
#[cfg(feature = "cublas")]
use baton_runtime::gemm::bf16_to_f32;
use baton_runtime::gemm::matrix::MatrixError;
use baton_runtime::gemm::{GemmConfig, GemmPlan};
use baton_runtime::{Error, Gpu, Variant};

/// `BATON_SMALL=1` (the sanitizer mode of `tools/gpu-suite.sh`): fewer,
/// smaller shapes so the runs finish under compute-sanitizer.
fn small() -> bool {
    std::env::var("BATON_SMALL").as_deref() == Ok("1")
}

/// Ragged small-M shapes: M below, at and above a tile's rows (16, 32,
/// 64, 128); N with a ragged last 128-row tile of B (200, 264), a 64-row tail
/// of 40 (1000) or whole (1024);
/// K with a ragged last K block (520, 1032) or whole (256).
const RAGGED: [(usize, usize, usize); 11] = [
    (1, 264, 520),
    (7, 200, 1032),
    (16, 1024, 256),
    (33, 264, 520),
    (64, 200, 1032),
    (1, 8, 64),
    (40, 1032, 520),
    // N mod 64 = 40, N mod 128 = 104: a different tail in the narrow tiles.
    (24, 1000, 136),
    // M past 64 and past 128 (several tiles of the user's M; the 128-row
    // narrow tiles store each 32 columns as two 64-row halves, the second
    // clipped or past M).
    (100, 264, 520),
    (129, 200, 1032),
    (300, 1000, 136),
];

/// Whether every worker of `config` split `splits` ways at M×N is resident
/// at once, as the plan requires of split-K: units (of `cluster_m` CTAs,
/// `GemmConfig::work_units`) times splits on `sm_count / cluster_m` slots.
fn workers_resident(gpu: &Gpu, config: GemmConfig, (m, n): (usize, usize), splits: u32) -> bool {
    let units = config.work_units(m as u32, n as u32);
    units * splits <= gpu.sm_count() / config.cluster_m()
}

#[test]
fn swap_ab_matches_f64_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[_] = if small() { &RAGGED[..2] } else { &RAGGED };
    // Splits 5, 6 and 9: the finalizer adds 4, 5 and 8 contributors' partials
    // (`accumulate_all`: batches of 4, then one at a time).
    for config in GemmConfig::SWAP_AB {
        for splits in [1, 2, 3, 5, 6, 9] {
            for &(m, n, k) in shapes {
                let tuning = GemmTuning {
                    config: Some(config),
                    split_k: Some(splits),
                    ..GemmTuning::default()
                };
                if k.div_ceil(64) < splits as usize
                    || !workers_resident(&gpu, config, (m, n), splits)
                {
                    continue;
                }
                for alpha in [1.0f32, -1.5] {
                    let cmp =
                        gemm_check::check_vs_f64(&gpu, &kernels, tuning, (m, n, k), alpha, 0.0)
                            .unwrap_or_else(|e| {
                                panic!("{config:?} split {splits} {m}x{n}x{k}: {e}")
                            });
                    println!(
                        "{config:?} split {splits} {m}x{n}x{k} alpha {alpha}: rel {:.2e}",
                        cmp.rel_error
                    );
                    assert!(
                        cmp.passes(1e-2),
                        "{config:?} split {splits} {m}x{n}x{k} alpha {alpha}: {cmp:?}"
                    );
                }
            }
        }
    }
}

/// Stream-K (not split-K) on every swap-AB configuration: more tiles than
/// SMs for the narrow tiles (9000 / 64 = 141 and 17000 / 64 = 266 units)
/// and fewer for the 128-row ones, segments of at least 1 and 4 K blocks,
/// 0 and 1 extra waves, against f64. (A decode step with a large vocabulary,
/// M = 1, N ≈ 128 k, runs the narrow tiles with stream-K: ~2000 units.)
#[test]
fn swap_ab_stream_k_matches_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(7, 9000, 520)]
    } else {
        &[(7, 9000, 520), (40, 17000, 264)]
    };
    for config in GemmConfig::SWAP_AB {
        for &(m, n, k) in shapes {
            if (config.tile().0 as usize) < m {
                continue;
            }
            for (min_segment, waves) in [(1, 0), (4, 1)] {
                let tuning = GemmTuning {
                    config: Some(config),
                    stream_k: Some(min_segment),
                    stream_k_waves: Some(waves),
                    ..GemmTuning::default()
                };
                let cmp = gemm_check::check_vs_f64(&gpu, &kernels, tuning, (m, n, k), 1.0, 0.0)
                    .unwrap_or_else(|e| {
                        panic!("{config:?} stream-K {min_segment}/{waves} {m}x{n}x{k}: {e}")
                    });
                println!(
                    "{config:?} stream-K {min_segment}/{waves} {m}x{n}x{k}: rel {:.2e}",
                    cmp.rel_error
                );
                assert!(
                    cmp.passes(1e-2),
                    "{config:?} stream-K {min_segment}/{waves} {m}x{n}x{k}: {cmp:?}"
                );
            }
        }
    }
}

/// The heuristic's plans (no C: swap-AB may be chosen) and every swap-AB
/// configuration against cuBLAS at sweep shapes with small M.
#[cfg(feature = "cublas")]
#[test]
fn swap_ab_matches_cublas() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(8, 1024, 512)]
    } else {
        &[
            (1, 4096, 4096),
            (8, 1024, 4096),
            (16, 4104, 2056),
            (32, 5000, 4096),
            (64, 8192, 1024),
            (1, 1024, 32768),
        ]
    };
    for &(m, n, k) in shapes {
        let mut tunings = vec![GemmTuning::default()];
        tunings.extend(GemmConfig::SWAP_AB.map(GemmTuning::from));
        // Many contributors per unit (the overlapped finalizer's batches
        // of 4 and the rest): 8 units split 16 and 13 ways.
        if n == 1024 && k >= 4096 && m <= 16 {
            for splits in [16, 13] {
                tunings.push(GemmTuning {
                    config: Some(GemmConfig::SwapAb16),
                    split_k: Some(splits),
                    ..GemmTuning::default()
                });
            }
        }
        for tuning in tunings {
            let cmp = gemm_cublas::check_vs_cublas(&gpu, &kernels, tuning, (m, n, k), 1.0, 0.0)
                .unwrap_or_else(|e| panic!("{tuning:?} {m}x{n}x{k}: {e}"));
            println!(
                "{:?} split {:?} {m}x{n}x{k} vs cuBLAS: rel {:.2e}",
                tuning.config, tuning.split_k, cmp.rel_error
            );
            assert!(cmp.passes(1e-2), "{tuning:?} {m}x{n}x{k}: {cmp:?}");
        }
    }
}

/// A swap-AB plan with C is refused (its epilogue has no C), naming the
/// rule; without C it is made.
#[test]
fn swap_ab_refuses_c() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    let (m, n, k) = (8, 256, 128);
    let a = s.alloc_zeros::<u16>(m * k).unwrap();
    let b = s.alloc_zeros::<u16>(n * k).unwrap();
    let c = s.alloc_zeros::<u16>(m * n).unwrap();
    let mut d = s.alloc_zeros::<u16>(m * n).unwrap();
    let config = GemmConfig::SwapAb16;
    match GemmPlan::with_config(&gpu, &kernels, config, &a, &b, Some(&c), &mut d, m, n, k) {
        Err(Error::Matrix(MatrixError::NotSupported { what, .. })) => {
            assert!(what.contains("C"), "{what}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a swap-AB plan with C was made"),
    }
    let plan = GemmPlan::with_config(&gpu, &kernels, config, &a, &b, None, &mut d, m, n, k)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.config(), config);
}

/// Small-M candidates against cuBLAS, same inputs, one process: the
/// heuristic's plan, 128×64 (the pick before swap-AB) and each swap-AB
/// configuration whole and split 2–16 ways (where the split fits).
#[cfg(feature = "cublas")]
#[test]
#[ignore = "timing grid: run with --ignored --nocapture"]
fn swap_ab_timing_grid() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let blas = cudarc::cublas::CudaBlas::new(gpu.stream().clone()).unwrap();
    let reps = 15;
    let mut shapes: Vec<(usize, usize, usize)> = Vec::new();
    for m in [1, 8, 16, 32, 64] {
        for (n, k) in [
            (4096, 4096),
            (1024, 4096),
            (8192, 1024),
            (4104, 2056),
            (5000, 4096),
            (1024, 32768),
            (16384, 4096),
        ] {
            shapes.push((m, n, k));
        }
    }
    // The launch floor (one tile, one K block), then one CTA streaming
    // 1 MiB and 8 MiB of B: its own DRAM rate.
    shapes.extend([(1, 128, 64), (1, 128, 4096), (1, 128, 32768)]);
    println!("GRID m n k | tuning | config grid | ours_us cublas_us ratio | rel");
    let mut failures = Vec::new();
    for (m, n, k) in shapes {
        let mut tunings = vec![
            GemmTuning::default(),
            GemmTuning {
                config: Some(GemmConfig::T128x64),
                ..GemmTuning::default()
            },
        ];
        for config in GemmConfig::SWAP_AB {
            let (bm, _, _) = config.tile();
            // Several tile rows along M (bm < M): whole and 2-way only.
            let max_splits = if (bm as usize) < m { 2 } else { 16 };
            for splits in [1u32, 2, 3, 4, 6, 8, 12, 16] {
                if splits > max_splits
                    || !workers_resident(&gpu, config, (m, n), splits)
                    || k.div_ceil(64) < 2 * splits as usize
                {
                    continue;
                }
                tunings.push(GemmTuning {
                    config: Some(config),
                    split_k: Some(splits),
                    ..GemmTuning::default()
                });
            }
        }
        // Cold inputs as `bench_shape` times them: ours and cuBLAS each
        // rotate through their own copies, more than 2× L2 per rotation.
        let stream = gpu.stream();
        let mut rng = XorShift::new(XorShift::seed_from_time());
        let sets = cold_inputs::sets_per_library(2 * (m * k + n * k), cold_inputs::l2_bytes(&gpu));
        let warmup = cold_inputs::warmup_launches(sets);
        let a0 = stream.clone_htod(&random_bf16(m * k, &mut rng)).unwrap();
        let b0 = stream.clone_htod(&random_bf16(n * k, &mut rng)).unwrap();
        let copies = || -> Vec<_> {
            (0..sets)
                .map(|_| {
                    let a = stream.clone_dtod(&a0).unwrap();
                    (a, stream.clone_dtod(&b0).unwrap())
                })
                .collect()
        };
        let (inputs, ref_inputs) = (copies(), copies());
        let mut d_ref: Vec<_> = (0..sets)
            .map(|_| stream.clone_htod(&vec![POISON_BF16; m * n]).unwrap())
            .collect();
        for tuning in tunings {
            let mut d_ours: Vec<_> = (0..sets)
                .map(|_| stream.clone_htod(&vec![POISON_BF16; m * n]).unwrap())
                .collect();
            let plans: Vec<GemmPlan<'_>> = inputs
                .iter()
                .zip(d_ours.iter_mut())
                .map(|((a, b), d)| {
                    let mut p = match tuning.config {
                        Some(c) => GemmPlan::with_config(&gpu, &kernels, c, a, b, None, d, m, n, k),
                        None => GemmPlan::new(&gpu, &kernels, a, b, None, d, m, n, k),
                    }
                    .unwrap_or_else(|e| panic!("{tuning:?} {m}x{n}x{k}: {e}"));
                    if let Some(s) = tuning.split_k {
                        p.set_split_k(&gpu, s)
                            .unwrap_or_else(|e| panic!("{tuning:?} {m}x{n}x{k}: {e}"));
                    }
                    p
                })
                .collect();
            let (config, grid) = (plans[0].config(), plans[0].grid());
            let mut timer = QueuedTimer::<2>::new();
            for rep in 0..reps + warmup {
                let i = rep % sets;
                timer
                    .time(&gpu, 0, || plans[i].run(&gpu, 1.0, 0.0))
                    .unwrap();
                let (a, b) = &ref_inputs[i];
                let d = &mut d_ref[i];
                timer
                    .time(&gpu, 1, || {
                        gemm_cublas::cublas_gemm_bf16(&blas, &gpu, a, b, d, m, n, k, 1.0, 0.0)
                    })
                    .unwrap();
            }
            let [ours, theirs] = timer.finish(&gpu, warmup).unwrap();
            drop(plans);
            let theirs_d: Vec<f64> = stream
                .clone_dtoh(&d_ref[0])
                .unwrap()
                .iter()
                .map(|&x| bf16_to_f32(x) as f64)
                .collect();
            let check = Comparison::new(&stream.clone_dtoh(&d_ours[0]).unwrap(), &theirs_d);
            let (ours_ms, cublas_ms) = (median(ours), median(theirs));
            println!(
                "GRID {m} {n} {k} | {:?} split {:?} | {} {} | {:.2} {:.2} {:.3} | {:.1e}",
                tuning.config,
                tuning.split_k,
                config.name(),
                grid,
                ours_ms * 1e3,
                cublas_ms * 1e3,
                cublas_ms / ours_ms,
                check.rel_error
            );
            if !check.passes(1e-2) {
                failures.push(format!("{tuning:?} {m}x{n}x{k}: {check:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "outputs differ from cuBLAS: {failures:#?}"
    );
}

/// A few launches of main's pick (128×64) and of swap-AB at small-M shapes
/// on fresh inputs, for a profiler (`ncu -k regex:baton_gemm`): what the
/// kernel time is without the launch. Checks each output against f64.
#[test]
#[ignore = "profiler target: run under ncu with --ignored"]
fn swap_ab_profile_targets() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    for (mnk, tunings) in [
        (
            (1, 4096, 4096),
            [(GemmConfig::T128x64, 1), (GemmConfig::SwapAb16, 4)],
        ),
        (
            (1, 1024, 4096),
            [(GemmConfig::T128x64, 4), (GemmConfig::SwapAb16, 8)],
        ),
    ] {
        for (config, splits) in tunings {
            let tuning = GemmTuning {
                config: Some(config),
                split_k: Some(splits),
                ..GemmTuning::default()
            };
            let cmp = gemm_check::check_vs_f64(&gpu, &kernels, tuning, mnk, 1.0, 0.0)
                .unwrap_or_else(|e| panic!("{config:?} {mnk:?}: {e}"));
            assert!(cmp.passes(1e-2), "{config:?} {mnk:?}: {cmp:?}");
        }
    }
}
