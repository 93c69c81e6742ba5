//! The blockwise-scaled FP8 GEMM on a real GPU: against an f64 CPU reference
//! of the dequantized inputs at small and ragged shapes; fresh random e4m3
//! data and random (unequal) scales, poisoned outputs, NaN never passes.
//! Without a CUDA GPU each test prints `SKIPPED: no CUDA GPU (<reason>)`.

use baton_reference::gemm_fp8_check;
use baton_runtime::gemm::Fp8ShapeError;
use baton_runtime::gemm::fp8::{self as gemm_fp8, Fp8GemmPlan};
use baton_runtime::{Error, Gpu, Kernels, Variant};

/// `BATON_SMALL=1` (the GPU suite's sanitizer mode, `tools/gpu-suite.sh
/// --sanitize`): sizes small enough to finish under compute-sanitizer.
fn small() -> bool {
    std::env::var("BATON_SMALL").as_deref() == Ok("1")
}

/// Runs `kernel` at `(m, n, k)` with its K on `splits` CTAs per tile (1:
/// whole tiles, through the plan's default), checks every output element
/// against f64 (relative error ≤ 2e-2, no non-finite value) and prints the
/// errors; `what` names the row in messages.
fn assert_split_matches_f64(
    gpu: &Gpu,
    kernels: &Kernels,
    what: &str,
    kernel: &str,
    (m, n, k): (usize, usize, usize),
    splits: u32,
) {
    let cmp = if splits == 1 {
        gemm_fp8_check::check_vs_f64(gpu, kernels, kernel, (m, n, k))
    } else {
        gemm_fp8_check::check_vs_f64_split_k(gpu, kernels, kernel, (m, n, k), splits)
    }
    .unwrap_or_else(|e| panic!("{what} {kernel} {m}x{n}x{k} split {splits}: {e}"));
    println!(
        "{what} {kernel} {m}x{n}x{k} split {splits}: rel {:.2e} max abs {:.2e} non-finite {}",
        cmp.rel_error, cmp.max_abs_error, cmp.non_finite
    );
    assert!(
        cmp.passes(2e-2),
        "{what} {kernel} {m}x{n}x{k} split {splits}: {cmp:?}"
    );
}

/// [`assert_split_matches_f64`] with whole tiles for each of `forced` at
/// each of `shapes`.
fn assert_whole_tiles_match_f64(
    gpu: &Gpu,
    kernels: &Kernels,
    what: &str,
    forced: &[&str],
    shapes: &[(usize, usize, usize)],
) {
    for kernel in forced {
        for &mnk in shapes {
            assert_split_matches_f64(gpu, kernels, what, kernel, mnk, 1);
        }
    }
}

#[test]
fn fp8_gemm_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes = [
        (1, 8, 128),
        (128, 128, 128),
        (128, 256, 512),
        (129, 264, 256),
        (77, 200, 384),
        (300, 520, 640),
        (1, 1024, 1024),
        (513, 8, 128),
        (256, 384, 2048),
        (3, 136, 256),
    ];
    assert_whole_tiles_match_f64(&gpu, &kernels, "forced", &gemm_fp8::VARIANTS, &shapes);
}

/// The tiles whose width is not a power of two or below 64 (128×96,
/// 128×32, 256×96, 256×88), where their tiles straddle two B-scale blocks: at
/// N = 392 the 96-wide tiles sit at offsets 0, 96, 64, 32 and 0 of the
/// 128-wide blocks (promotion split after 32 and 64 columns; the last tile
/// clipped at N), at N = 520 the same with a ragged fifth block; ragged M
/// around both tile heights (1, 77, 129, 257, 300); whole tiles, then
/// stream-K with one-K-block segments (both waves of a 256-row tile handed
/// over; 256×96 has no stream-K). 256×88 also at N = 1448 and 1480: its
/// tiles at all 16 offsets of a 128-wide block (every run-time promotion
/// split, 1–10 groups), and a last tile clipped at N before (1448) and
/// inside (1480) the 24 columns it stores from registers. Fresh random inputs and unequal scales
/// per block: a promotion
/// that used the wrong block's scale fails. Small enough for
/// compute-sanitizer.
#[test]
fn fp8_widths_not_powers_of_two_match_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes = [
        (1, 392, 256),
        (77, 392, 384),
        (129, 96, 128),
        (257, 392, 384),
        (300, 520, 640),
    ];
    let shapes_88 = [(257, 1448, 256), (300, 1480, 384)];
    for kernel in [
        gemm_fp8::KERNEL_128X96,
        gemm_fp8::KERNEL_128X32,
        gemm_fp8::KERNEL_256X96,
        gemm_fp8::KERNEL_256X88,
    ] {
        let extra: &[(usize, usize, usize)] = if kernel == gemm_fp8::KERNEL_256X88 {
            &shapes_88
        } else {
            &[]
        };
        for &(m, n, k) in shapes.iter().chain(extra) {
            let stream_k_runs: &[Option<u32>] = if gemm_fp8::has_stream_k(kernel) {
                &[None, Some(1)]
            } else {
                &[None]
            };
            for &stream_k in stream_k_runs {
                let cmp =
                    gemm_fp8_check::check_vs_f64_with(&gpu, &kernels, kernel, (m, n, k), stream_k)
                        .unwrap_or_else(|e| panic!("{kernel} {m}x{n}x{k} {stream_k:?}: {e}"));
                println!(
                    "{kernel} {m}x{n}x{k} stream-K {stream_k:?}: rel {:.2e} max abs {:.2e} non-finite {}",
                    cmp.rel_error, cmp.max_abs_error, cmp.non_finite
                );
                assert!(
                    cmp.passes(2e-2),
                    "{kernel} {m}x{n}x{k} {stream_k:?}: {cmp:?}"
                );
            }
        }
    }
}

/// The 256×128 tiles sharing A over 2-CTA clusters along N
/// (`KERNEL_256X128_MCA`): more units than resident clusters (each
/// cluster walks several, its two CTAs multicasting into each other's
/// stages across unit boundaries), an odd count of tile columns (the last
/// cluster's second CTA past N: no B load, clamped B-scale row, clipped
/// store) and ragged last tile rows (loaded without multicast) — vs f64.
/// 1024×4352×128 runs two units per cluster (68 units of 256×128, 100 of
/// 256×88, in two equal waves), so each CTA's second tile reuses D
/// buffers its first tile's stores may still read (the 3-stage kernel's
/// whole-tile ring waits only for those: `store_pipelined`).
/// `BATON_SMALL=1`: the first two shapes (compute-sanitizer).
#[test]
fn fp8_a_multicast_clusters_match_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(300, 392, 256), (1024, 4352, 128)]
    } else {
        &[
            (300, 392, 256),
            (1024, 4352, 128),
            (2176, 2432, 256),
            (1600, 2304, 384),
            (2048, 1024, 1024),
        ]
    };
    let forced = [
        gemm_fp8::KERNEL_256X128_MCA,
        gemm_fp8::KERNEL_256X88_MCA,
        gemm_fp8::KERNEL_256X128_MCA_3STAGE,
    ];
    assert_whole_tiles_match_f64(&gpu, &kernels, "forced", &forced, shapes);
}

/// Session 11's two changes, vs f64: (1) in a 128-row tile whose last
/// rows hold ≤ 64 rows of A the second consumer warpgroup computes nothing
/// (`pass_segment`: its stages go back unread, no fixup, no epilogue), and
/// (2) a data-parallel launch with more units than SMs runs the fewest CTAs
/// that take the same waves (`equal_waves_workers`: 2100×2104 is 289 tiles
/// of 128×128, 3 waves on 97 CTAs, so CTAs walk 2–3 tiles each, the last
/// tile row 52 rows). Every 128-row kernel with stream-K, whole tiles and
/// split-K 3 (the half-empty tiles' contributors and finalizers both skip
/// the warpgroup's hand-over), at M = 64 (the issue-#19 small-M row
/// count), M = 192 and 2100; and the library's plans at the M = 64
/// shapes, scaled down in K. `BATON_SMALL=1`: the first shape, whole tiles
/// and split-K 3 on 128×64 (compute-sanitizer).
#[test]
fn fp8_half_empty_tiles_and_equal_wave_grids_match_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(64, 392, 512)]
    } else {
        &[(64, 392, 512), (192, 520, 768), (2100, 2104, 256)]
    };
    let kernels_128: Vec<&str> = if small() {
        vec![gemm_fp8::KERNEL_128X64]
    } else {
        gemm_fp8::VARIANTS
            .into_iter()
            .filter(|k| gemm_fp8::has_stream_k(k))
            .filter(|k| gemm_fp8::tile_of(k).is_some_and(|(bm, _, _)| bm == 128))
            .collect()
    };
    for kernel in kernels_128 {
        for &(m, n, k) in shapes {
            // Split-K 3 where it fits (3 workers per unit on the SMs, 3 K
            // blocks); 2100×2104 runs whole tiles.
            let splits: &[u32] = if m < 1024 { &[1, 3] } else { &[1] };
            for &splits in splits {
                // Whole tiles through the plan's default (before session 11
                // `set_split_k(1)` was refused past the resident workers).
                assert_split_matches_f64(&gpu, &kernels, "forced", kernel, (m, n, k), splits);
            }
        }
    }
    if small() {
        return;
    }
    // The library's plans (kernel and split-K by the cost model) at M = 64.
    for (m, n, k) in [
        (64, 2112, 1024),
        (64, 4096, 1024),
        (64, 7168, 512),
        (64, 24576, 256),
    ] {
        let (kernel, cost) = gemm_fp8::plan_for_gpu(&gpu, m, n, k);
        let splits = cost.splits as u32;
        assert_split_matches_f64(&gpu, &kernels, "plan", kernel, (m, n, k), splits);
    }
}

/// The 128×32 tiles' 10-stage ring (session 11, round 2) wrapping many
/// times within a tile (K of 14–24 blocks), whole and split 2 ways, at
/// M = 64 (the half-empty skip), ragged rows (77: the second warpgroup
/// computes 13 rows) and more tiles than CTAs (130×4160: 260 tiles on 130
/// CTAs, two each, the ring's phase carried across tiles) — vs f64.
/// `BATON_SMALL=1`: the first shape only (compute-sanitizer).
#[test]
fn fp8_narrow_tiles_deep_ring_match_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(64, 392, 3072)]
    } else {
        &[(64, 392, 3072), (77, 200, 2816), (130, 4160, 1792)]
    };
    let kernel = gemm_fp8::KERNEL_128X32;
    for &(m, n, k) in shapes {
        // Split 2 only where every worker is resident (the plan's rule).
        let units = m.div_ceil(128) * n.div_ceil(32);
        let splits: &[u32] = if 2 * units <= gpu.sm_count() as usize {
            &[1, 2]
        } else {
            &[1]
        };
        for &splits in splits {
            assert_split_matches_f64(&gpu, &kernels, "narrow", kernel, (m, n, k), splits);
        }
    }
}

/// The 64-row tiles of one consumer warpgroup (64×128, 64×64, 64×56,
/// 64×32; 256 threads, 8–12 stages, the whole box of A scales 68 floats;
/// 64×56 at N = 392 has tiles at offsets 112, 96 and 80 of a B-scale block,
/// straddling two, and at N = 264 its last tile ends inside the 24 columns
/// it stores from registers): their ring
/// wrapping many times within a tile (K of 22–24 blocks), ragged rows (77:
/// a second tile row of 13 rows, loaded through the tail maps; 130: three
/// tile rows, the last of 2), K-block strides of the A scales that are not
/// multiples of 4 (M = 77, 130), and more tiles than CTAs (130×4160: up to
/// 390 tiles, three per CTA, so the ring's phase and the D staging ring
/// carry across tiles) — vs f64. `BATON_SMALL=1`: the first shape
/// (compute-sanitizer).
#[test]
fn fp8_64_row_tiles_match_f64() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(64, 392, 3072)]
    } else {
        &[
            (64, 392, 3072),
            (77, 200, 2816),
            (130, 4160, 1792),
            (1, 264, 384),
        ]
    };
    let forced = [
        gemm_fp8::KERNEL_64X128,
        gemm_fp8::KERNEL_64X64,
        gemm_fp8::KERNEL_64X56,
        gemm_fp8::KERNEL_64X32,
    ];
    assert_whole_tiles_match_f64(&gpu, &kernels, "64-row", &forced, shapes);
}

/// Stream-K with one-K-block segments on every variant that has it
/// (`has_stream_k`; the data-parallel 256x128 and 256x96 are refused, see
/// `fp8_stream_k_is_refused_by_data_parallel_kernels`): small shapes
/// split each unit across several CTAs (up to 16 for K = 2048), and
/// 1280×4096×512 (160 or more units on 66/132 workers) has a
/// data-parallel wave before the stream-K region.
#[test]
fn fp8_stream_k_matches_f64_reference() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes = [
        (129, 264, 256),
        (300, 520, 640),
        (256, 384, 2048),
        (1280, 4096, 512),
    ];
    for kernel in gemm_fp8::VARIANTS
        .into_iter()
        .filter(|k| gemm_fp8::has_stream_k(k))
    {
        for &(m, n, k) in &shapes {
            let cmp = gemm_fp8_check::check_vs_f64_with(&gpu, &kernels, kernel, (m, n, k), Some(1))
                .unwrap_or_else(|e| panic!("{kernel} {m}x{n}x{k}: {e}"));
            println!("{kernel} sk1 {m}x{n}x{k}: rel {:.2e}", cmp.rel_error);
            assert!(cmp.passes(2e-2), "{kernel} sk1 {m}x{n}x{k}: {cmp:?}");
        }
    }
}

/// The data-parallel kernels (two-wave, 64-row) have no stream-K: asking for it (or
/// for split-K) is a typed error naming the kernel, before any launch;
/// the heuristic's split plans of 256×128 tiles run its stream-K twin.
#[test]
fn fp8_stream_k_is_refused_by_data_parallel_kernels() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (m, n, k) = (256, 256, 512);
    let stream = gpu.stream();
    let a = stream.alloc_zeros::<u8>(m * k).unwrap();
    let b = stream.alloc_zeros::<u8>(n * k).unwrap();
    let (sa_len, sb_len) = gemm_fp8::scale_lens(m, n, k);
    let sa = stream.alloc_zeros::<f32>(sa_len).unwrap();
    let sb = stream.alloc_zeros::<f32>(sb_len).unwrap();
    for kernel in [
        gemm_fp8::KERNEL_256X128,
        gemm_fp8::KERNEL_256X96,
        gemm_fp8::KERNEL_256X128_MCA,
        gemm_fp8::KERNEL_256X128_MCA_3STAGE,
        gemm_fp8::KERNEL_64X32,
    ] {
        let mut d = stream.alloc_zeros::<u16>(m * n).unwrap();
        let mut plan =
            Fp8GemmPlan::with_kernel(&gpu, &kernels, kernel, &a, &b, &sa, &sb, &mut d, (m, n, k))
                .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        for err in [
            plan.set_stream_k(&gpu, Some(1)).unwrap_err(),
            plan.set_split_k(&gpu, 2).unwrap_err(),
        ] {
            assert!(
                matches!(&err, Error::Gemm(baton_runtime::gemm::GemmError::NoStreamK { kernel: k, .. }) if k == kernel),
                "{kernel}: {err}"
            );
        }
        plan.set_split_k(&gpu, 1)
            .unwrap_or_else(|e| panic!("{kernel}: split 1 is whole tiles: {e}"));
        assert_eq!(plan.stream_k(), None);
    }
}

#[test]
fn fp8_bad_shapes_are_refused_before_launch() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    let a = s.alloc_zeros::<u8>(64 * 200).unwrap();
    let b = s.alloc_zeros::<u8>(64 * 200).unwrap();
    let sa = s.alloc_zeros::<f32>(64).unwrap();
    let sb = s.alloc_zeros::<f32>(1).unwrap();
    let mut d = s.alloc_zeros::<u16>(64 * 64).unwrap();
    match Fp8GemmPlan::new(&gpu, &kernels, &a, &b, &sa, &sb, &mut d, (64, 64, 200)) {
        Err(Error::Fp8Shape(e)) => {
            assert_eq!(e, Fp8ShapeError::KNotMultipleOf128 { k: 200 });
            assert!(e.to_string().contains("multiple of 128"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("K = 200 accepted"),
    }
}

/// The shape set, timed (ours only; `--ignored`, prints TFLOP/s).
#[test]
#[ignore = "benchmark: run with --ignored on a GPU"]
fn fp8_gemm_timing() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes = [
        (4096, 4096, 4096),
        (8192, 8192, 8192),
        (128, 24576, 1536),
        (128, 7168, 16384),
        (4096, 24576, 1536),
        (4096, 32768, 512),
        (4096, 7168, 16384),
        (4096, 4096, 7168),
        (4096, 7168, 2048),
    ];
    println!("| kernel | M×N×K | ours ms | ours TFLOP/s |");
    for kernel in gemm_fp8::VARIANTS {
        for (m, n, k) in shapes {
            let ms = gemm_fp8_check::time_ours(&gpu, &kernels, kernel, (m, n, k), 20).unwrap();
            let tflops = 2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12;
            println!("| {kernel} | {m}x{n}x{k} | {ms:.3} | {tflops:.1} |");
        }
    }
}

#[cfg(feature = "cublas")]
#[test]
fn fp8_gemm_matches_cublaslt_blockwise_at_2048() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let big = if small() {
        (512, 512, 512)
    } else {
        (2048, 2048, 2048)
    };
    for mnk in [big, (256, 7168, 1536)] {
        let cmp = baton_reference::gemm_fp8_ref::check_vs_cublaslt(&gpu, &kernels, mnk)
            .unwrap_or_else(|e| panic!("{mnk:?}: {e}"));
        println!("{mnk:?} vs cuBLASLt blockwise: rel {:.2e}", cmp.rel_error);
        assert!(cmp.passes(2e-2), "{mnk:?}: {cmp:?}");
    }
}
