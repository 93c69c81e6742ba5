//! The BF16 GEMM on a real GPU: against an f64 CPU reference at small and
//! ragged shapes, and against cuBLAS at a large one; fresh random inputs,
//! poisoned outputs, NaN never passes. Without a CUDA GPU each test prints
//! `SKIPPED: no CUDA GPU (<reason>)` and returns.

use baton_reference::gemm_check;
#[cfg(feature = "cublas")]
use baton_reference::gemm_cublas::check_vs_cublas;
use baton_runtime::gemm::{GemmConfig, GemmPlan, GemmShapeError};
use baton_runtime::{Error, Gpu, Variant};

/// `BATON_SMALL=1` (the GPU suite's sanitizer mode, `tools/gpu-suite.sh
/// --sanitize`): sizes small enough to finish under compute-sanitizer.
#[cfg(feature = "cublas")]
fn small() -> bool {
    std::env::var("BATON_SMALL").as_deref() == Ok("1")
}

#[test]
fn gemm_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64(&gpu, &kernels, &GemmConfig::ALL);
}

#[cfg(feature = "cublas")]
#[test]
fn gemm_matches_cublas_at_2048() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    for (config, beta) in [
        (None, 0.0f32),
        (None, 0.5),
        (Some(GemmConfig::T128x256C2), 0.5),
        (Some(GemmConfig::T128x128C2), 0.0),
        (Some(GemmConfig::T128x128), 0.5),
        (Some(GemmConfig::T128x64), 1.0),
    ] {
        let size = if small() { 512 } else { 2048 };
        let cmp = check_vs_cublas(&gpu, &kernels, config, (size, size, size), 1.0, beta)
            .unwrap_or_else(|e| panic!("{e}"));
        println!("{size}^3 beta {beta} vs cuBLAS: rel {:.2e}", cmp.rel_error);
        assert!(cmp.passes(1e-2), "{cmp:?}");
    }
}

#[test]
fn bad_shapes_are_refused_before_launch() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    let a = s.alloc_zeros::<u16>(64 * 30).unwrap();
    let b = s.alloc_zeros::<u16>(64 * 30).unwrap();
    let mut d = s.alloc_zeros::<u16>(64 * 64).unwrap();
    match GemmPlan::new(&gpu, &kernels, &a, &b, None, &mut d, 64, 64, 30) {
        Err(Error::GemmShape(e)) => {
            assert_eq!(
                e,
                GemmShapeError::RowNotAligned {
                    dim: "K",
                    value: 30
                }
            );
            assert!(e.to_string().contains("multiple of 8"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("K = 30 accepted"),
    }
}

/// Stream-K with one-K-block segments: at these small shapes every unit is
/// split across several CTAs (up to 16 contributors for 256×256×1024), so
/// the fixup — partials through the workspace, flags, the finalizer's sum in
/// worker order, C read only by finalizers — is exercised on every config.
#[test]
fn stream_k_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64_with(&gpu, &kernels, &GemmConfig::ALL, Some(1));
}

/// Stream-K where a data-parallel wave comes first: 2304×4096 is 144 units
/// of 128×256 in 2-CTA clusters (or 288/576 tiles) on 66/132 workers, so
/// each worker computes whole units, then a contributor segment, then a
/// finalizer segment; checked against cuBLAS with beta 0.5.
#[cfg(feature = "cublas")]
#[test]
fn stream_k_matches_cublas_after_a_data_parallel_wave() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    for config in GemmConfig::ALL {
        for (min_segment, waves) in [(1, 1), (4, 1), (4, 0)] {
            let tuning = gemm_check::GemmTuning {
                config: Some(config),
                stream_k: Some(min_segment),
                stream_k_waves: Some(waves),
                ..Default::default()
            };
            let cmp = check_vs_cublas(&gpu, &kernels, tuning, (2304, 4096, 512), 1.0, 0.5)
                .unwrap_or_else(|e| panic!("{config:?}: {e}"));
            println!(
                "{config:?} sk{min_segment} w{waves} 2304x4096x512 vs cuBLAS: rel {:.2e}",
                cmp.rel_error
            );
            assert!(
                cmp.passes(1e-2),
                "{config:?} sk{min_segment} w{waves}: {cmp:?}"
            );
        }
    }
}

/// One stream-K plan launched three times, with new A data written into
/// the same buffer before each launch: every launch must use a new epoch,
/// or its finalizers would take the previous launch's flags as published
/// and could add stale partials.
#[test]
fn stream_k_plan_relaunch_uses_fresh_partials() {
    use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (m, n, k) = (300, 520, 1024);
    let mut rng = baton_reference::random::XorShift::new(7);
    let s = gpu.stream();
    let b = gemm_check::random_bf16(n * k, &mut rng);
    let b_d = s.clone_htod(&b).unwrap();
    let a_d = s.alloc_zeros::<u16>(m * k).unwrap();
    let mut d_d = s.alloc_zeros::<u16>(m * n).unwrap();
    let a_ptr = a_d.device_ptr(s).0;
    let d_ptr = d_d.device_ptr_mut(s).0;
    let mut plan = GemmPlan::with_config(
        &gpu,
        &kernels,
        GemmConfig::T128x128,
        &a_d,
        &b_d,
        None,
        &mut d_d,
        m,
        n,
        k,
    )
    .unwrap();
    plan.set_stream_k(&gpu, Some(1)).unwrap();
    for launch in 0..3 {
        let a = gemm_check::random_bf16(m * k, &mut rng);
        // SAFETY: a_ptr / d_ptr are A's and D's live buffers (m·k and m·n
        // u16), used only on this stream while the plan borrows them.
        let d = unsafe { run_with_new_input(&gpu, &plan, a_ptr, &a, d_ptr, m * n) };
        let reference = gemm_check::reference_f64(&a, &b, None, m, n, k, 1.0, 0.0);
        let cmp = gemm_check::Comparison::new(&d, &reference);
        println!("launch {launch}: rel {:.2e}", cmp.rel_error);
        assert!(cmp.passes(1e-2), "launch {launch}: {cmp:?}");
    }
}

/// Writes `input` into the device buffer at `input_ptr`, poisons the
/// `d_len` outputs at `d_ptr`, runs `plan` (alpha 1, beta 0), and returns
/// D read back after a synchronization.
///
/// # Safety
/// `input_ptr` must be a live device buffer of `input.len()` u16 and
/// `d_ptr` one of `d_len` u16, both used only on the GPU's stream.
unsafe fn run_with_new_input(
    gpu: &Gpu,
    plan: &GemmPlan<'_>,
    input_ptr: u64,
    input: &[u16],
    d_ptr: u64,
    d_len: usize,
) -> Vec<u16> {
    use baton_runtime::cudarc::driver::result;
    let s = gpu.stream();
    let poison = vec![gemm_check::POISON_BF16; d_len];
    let mut d = vec![0u16; d_len];
    // SAFETY: the caller's buffers; the copies are ordered around the
    // launch on the stream, and the host vectors outlive them
    // (synchronized before they are read or dropped).
    unsafe {
        result::memcpy_htod_async(input_ptr, input, s.cu_stream()).unwrap();
        result::memcpy_htod_async(d_ptr, &poison, s.cu_stream()).unwrap();
        plan.run(gpu, 1.0, 0.0).unwrap();
        result::memcpy_dtoh_async(&mut d, d_ptr, s.cu_stream()).unwrap();
    }
    gpu.synchronize().unwrap();
    d
}

/// A `Gpu` made from the caller's own context and (non-blocking) stream:
/// the GEMM runs there and its result, read back on that stream only,
/// matches the f64 reference; `with_stream` accepts a stream of the same
/// driver context.
#[test]
fn gemm_runs_on_the_callers_stream() {
    use baton_runtime::cudarc::driver::CudaContext;
    let Some(gpu) = Gpu::for_test() else { return };
    // The application's own handles: a context of device 0 and a new stream.
    let ctx = CudaContext::new(gpu.ordinal()).unwrap();
    let stream = ctx.new_stream().unwrap();
    let mine = Gpu::from_stream(stream.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert!(std::sync::Arc::ptr_eq(mine.stream(), &stream));
    assert_eq!(
        (mine.target(), mine.sm_count()),
        (gpu.target(), gpu.sm_count())
    );
    let kernels = mine
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    for (m, n, k) in [(129, 264, 72), (300, 520, 136)] {
        let cmp =
            gemm_check::check_vs_f64(&mine, &kernels, GemmConfig::T128x256, (m, n, k), 1.0, 0.5)
                .unwrap_or_else(|e| panic!("{m}x{n}x{k} on the caller's stream: {e}"));
        assert!(
            cmp.passes(1e-2),
            "{m}x{n}x{k} on the caller's stream: {cmp:?}"
        );
    }
    let side = gpu
        .with_stream(ctx.new_stream().unwrap())
        .unwrap_or_else(|e| panic!("a stream of the same context was refused: {e}"));
    let cmp = gemm_check::check_vs_f64(&side, &kernels, None, (77, 200, 8), 1.0, 0.0)
        .unwrap_or_else(|e| panic!("with_stream: {e}"));
    assert!(cmp.passes(1e-2), "with_stream: {cmp:?}");
}

/// The ping-pong configurations (each consumer warpgroup owns whole tiles,
/// in turns) against the f64 reference on the ragged shapes, beta 0, 0.5
/// and 1 (C through the warpgroup's own C pipeline) and alpha −1.5.
#[test]
fn pingpong_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64(&gpu, &kernels, &GemmConfig::PINGPONG);
}

/// Ping-pong against cuBLAS where every CTA runs many tiles in both
/// warpgroups (4096² is 1024 tiles on 132 CTAs: 7–8 each, so odd and even
/// counts), at a ragged shape (M, N multiples of 8 but of no tile: the
/// last tile row and column are partial, and the tile count per CTA
/// varies), with and without C.
#[cfg(feature = "cublas")]
#[test]
fn pingpong_matches_cublas_with_many_tiles_per_cta() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(520, 392, 256)]
    } else {
        &[(4096, 4096, 512), (3000, 2056, 1000)]
    };
    for config in GemmConfig::PINGPONG {
        for &(m, n, k) in shapes {
            for beta in [0.0f32, 0.5] {
                let cmp = check_vs_cublas(&gpu, &kernels, config, (m, n, k), 1.0, beta)
                    .unwrap_or_else(|e| panic!("{config:?} {m}x{n}x{k}: {e}"));
                println!(
                    "{config:?} {m}x{n}x{k} beta {beta} vs cuBLAS: rel {:.2e}",
                    cmp.rel_error
                );
                assert!(
                    cmp.passes(1e-2),
                    "{config:?} {m}x{n}x{k} beta {beta}: {cmp:?}"
                );
            }
        }
    }
}

/// Stream-K is the cooperative kernels' (the ping-pong ones compute every
/// unit whole): asking a ping-pong plan for it is a typed error naming the
/// rule.
#[test]
fn pingpong_refuses_stream_k() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    let a = s.alloc_zeros::<u16>(256 * 64).unwrap();
    let b = s.alloc_zeros::<u16>(256 * 64).unwrap();
    let mut d = s.alloc_zeros::<u16>(256 * 256).unwrap();
    let mut plan = GemmPlan::with_config(
        &gpu,
        &kernels,
        GemmConfig::T128x128PingPong,
        &a,
        &b,
        None,
        &mut d,
        256,
        256,
        64,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    match plan.set_stream_k(&gpu, Some(1)) {
        Err(e) => assert!(
            e.to_string().contains("no stream-K") && e.to_string().contains("cooperative"),
            "{e}"
        ),
        Ok(()) => panic!("stream-K accepted by a ping-pong plan"),
    }
}

/// The tall configurations (256-row tiles, each consumer warpgroup on 128
/// rows in two accumulators) against the f64 reference on the ragged
/// shapes — M = 1, 77 and 128 leave the second warpgroup's rows (and in
/// pairs the second CTA's tile row) wholly past M, 129 and 300 a partial
/// one, 513 a tail row of 1 — beta 0, 0.5 and 1 (C through the C-load
/// role's tall order) and alpha −1.5.
#[test]
fn tall_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64(&gpu, &kernels, &GemmConfig::TALL);
}

/// The tall configurations against cuBLAS with several tiles per CTA
/// (4096² × 512: 512 tiles of 256×128 on 132 CTAs) and at the ragged
/// shape they were added for (N = 4104, K = 2056: 33 tile columns, the
/// last one 8 wide; M = 1000: a partial last tile row), with and
/// without C.
#[cfg(feature = "cublas")]
#[test]
fn tall_matches_cublas_with_many_tiles_per_cta() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let shapes: &[(usize, usize, usize)] = if small() {
        &[(520, 392, 256)]
    } else {
        &[(4096, 4096, 512), (1000, 4104, 2056), (1024, 4104, 2056)]
    };
    for config in GemmConfig::TALL {
        for &(m, n, k) in shapes {
            for beta in [0.0f32, 0.5] {
                let cmp = check_vs_cublas(&gpu, &kernels, config, (m, n, k), 1.0, beta)
                    .unwrap_or_else(|e| panic!("{config:?} {m}x{n}x{k}: {e}"));
                println!(
                    "{config:?} {m}x{n}x{k} beta {beta} vs cuBLAS: rel {:.2e}",
                    cmp.rel_error
                );
                assert!(
                    cmp.passes(1e-2),
                    "{config:?} {m}x{n}x{k} beta {beta}: {cmp:?}"
                );
            }
        }
    }
}

/// The tall kernels compute every unit whole: stream-K and split-K on a
/// tall plan are typed errors naming the rule.
#[test]
fn tall_refuses_stream_k_and_split_k() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let s = gpu.stream();
    let a = s.alloc_zeros::<u16>(256 * 64).unwrap();
    let b = s.alloc_zeros::<u16>(256 * 64).unwrap();
    let mut d = s.alloc_zeros::<u16>(256 * 256).unwrap();
    for config in GemmConfig::TALL {
        let mut plan =
            GemmPlan::with_config(&gpu, &kernels, config, &a, &b, None, &mut d, 256, 256, 64)
                .unwrap_or_else(|e| panic!("{e}"));
        for e in [
            plan.set_stream_k(&gpu, Some(1)).unwrap_err(),
            plan.set_split_k(&gpu, 2).unwrap_err(),
        ] {
            assert!(
                e.to_string().contains("no stream-K") && e.to_string().contains("cooperative"),
                "{config:?}: {e}"
            );
        }
    }
}

/// A re-packed operand ([`Repack`]: A or B copied to rows 128 bytes apart
/// before each launch) against the f64 reference at ragged shapes whose
/// rows are not 128-byte multiples (K = 1032, 520, 72: rows of 2064, 1040
/// and 144 bytes), on cooperative, cluster, ping-pong and swap-AB tiles,
/// with C (beta 0.5) where the configuration takes it; the narrow
/// 128-row swap-AB tile too.
#[test]
fn repacked_operands_match_f64_reference() {
    use baton_runtime::gemm::Repack;
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        (GemmConfig::T128x256C2, (300, 520, 1032), 0.5),
        (GemmConfig::T256x128C2, (384, 264, 520), 0.5),
        (GemmConfig::T128x128, (129, 200, 72), 0.0),
        (GemmConfig::T128x128PingPong, (257, 392, 1032), 0.5),
        (GemmConfig::SwapAb32, (24, 264, 520), 0.0),
        // The heuristic's pick at 128×4104×2056 (one tile row, A re-packed).
        (GemmConfig::SwapAbNarrow128, (120, 264, 1032), 0.0),
    ];
    for (config, mnk, beta) in cases {
        for repack in [Repack::A, Repack::B] {
            let tuning = gemm_check::GemmTuning {
                config: Some(config),
                repack: Some(repack),
                ..Default::default()
            };
            let cmp = gemm_check::check_vs_f64(&gpu, &kernels, tuning, mnk, 1.0, beta)
                .unwrap_or_else(|e| panic!("{config:?} {repack:?} {mnk:?}: {e}"));
            println!(
                "{config:?} repack {repack:?} {mnk:?} beta {beta}: rel {:.2e}",
                cmp.rel_error
            );
            assert!(cmp.passes(1e-2), "{config:?} {repack:?} {mnk:?}: {cmp:?}");
        }
    }
}

/// One re-packing plan launched three times with new data written into
/// the re-packed operand's own buffer before each launch: every launch
/// must copy it again (a plan that copied once would multiply stale B).
#[test]
fn repacked_plan_relaunch_copies_fresh_data() {
    use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
    use baton_runtime::gemm::Repack;
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (m, n, k) = (300, 520, 1032);
    let mut rng = baton_reference::random::XorShift::new(11);
    let s = gpu.stream();
    let a = gemm_check::random_bf16(m * k, &mut rng);
    let a_d = s.clone_htod(&a).unwrap();
    let b_d = s.alloc_zeros::<u16>(n * k).unwrap();
    let mut d_d = s.alloc_zeros::<u16>(m * n).unwrap();
    let b_ptr = b_d.device_ptr(s).0;
    let d_ptr = d_d.device_ptr_mut(s).0;
    let plan = GemmPlan::with_config_repacked(
        &gpu,
        &kernels,
        GemmConfig::T128x256C2,
        Some(Repack::B),
        &a_d,
        &b_d,
        None,
        &mut d_d,
        m,
        n,
        k,
    )
    .unwrap();
    assert_eq!(plan.repack(), Some(Repack::B));
    for launch in 0..3 {
        let b = gemm_check::random_bf16(n * k, &mut rng);
        // SAFETY: b_ptr / d_ptr are B's and D's live buffers (n·k and m·n
        // u16), used only on this stream while the plan borrows them.
        let d = unsafe { run_with_new_input(&gpu, &plan, b_ptr, &b, d_ptr, m * n) };
        let reference = gemm_check::reference_f64(&a, &b, None, m, n, k, 1.0, 0.0);
        let cmp = gemm_check::Comparison::new(&d, &reference);
        println!("launch {launch}: rel {:.2e}", cmp.rel_error);
        assert!(cmp.passes(1e-2), "launch {launch}: {cmp:?}");
    }
}

/// The heuristic re-packs where the cost model says the copy pays (rows of
/// 4112 bytes at M = 2048: one operand copied), and that plan matches
/// cuBLAS on every element; at aligned K it never re-packs.
#[cfg(feature = "cublas")]
#[test]
fn heuristic_repack_matches_cublas() {
    use baton_runtime::gemm::{GemmConfig as C, OnGpu, plan_with_repack};
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    // As `GemmPlan::new` plans: this device's DRAM rate.
    let slots = OnGpu {
        slots_of: |c: C| gpu.sm_count() / c.cluster_m(),
        dram_bytes_per_s: gpu.dram_bytes_per_s(),
    };
    let (m, n, k) = if small() {
        (1024, 4104, 2056)
    } else {
        (2048, 4104, 2056)
    };
    let chosen = plan_with_repack(m, n, k, (k, k), false, slots);
    assert!(chosen.repack.is_some(), "{m}x{n}x{k}: {chosen:?}");
    assert!(
        plan_with_repack(m, n, 2048, (2048, 2048), false, slots)
            .repack
            .is_none()
    );
    let cmp = check_vs_cublas(&gpu, &kernels, None, (m, n, k), 1.0, 0.0)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{m}x{n}x{k} ({:?}, repack {:?}) vs cuBLAS: rel {:.2e}",
        chosen.config, chosen.repack, cmp.rel_error
    );
    assert!(cmp.passes(1e-2), "{cmp:?}");
}

/// baton's pitched copy (`baton_pitched_copy`, what re-packs an operand)
/// at GEMM and ragged geometries: 16-byte vectors (the K = 2056 case, and
/// rows with a tail of bytes), 8-, 4-, 2- and 1-byte chunks where a base or
/// a pitch is less aligned (odd pitches, odd row lengths, offset bases).
/// Each case copies fresh random bytes into a destination pre-filled with
/// a sentinel, then checks every payload byte against the source and that
/// every other destination byte (row padding, the bytes after the last
/// row, the bytes before an offset base) still holds the sentinel.
#[test]
fn pitched_copy_matches_source_byte_for_byte() {
    use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
    use baton_runtime::pitched_copy::{CopyKernel, PitchedCopy};
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let copier = CopyKernel::new(&gpu, &kernels).unwrap_or_else(|e| panic!("{e}"));
    const SENTINEL: u8 = 0xA5;
    // (rows, row_bytes, src_pitch, dst_pitch, src_offset, dst_offset, width)
    let cases: [(usize, usize, usize, usize, usize, usize, u32); 11] = [
        (4104, 4112, 4112, 4224, 0, 0, 16), // K = 2056 bf16: the GEMM's case
        (300, 2064, 2064, 2176, 0, 0, 16),  // K = 1032
        (1000, 40, 48, 128, 0, 0, 16),      // 2 vectors + 8 tail bytes a row
        (257, 100, 100, 128, 0, 0, 4),      // pitch 4-aligned, 25 words a row
        (33, 4000, 4104, 4096, 8, 0, 8),    // base and pitch 8-aligned
        (64, 4114, 4114, 4224, 2, 0, 2),    // bf16 rows of 2057: 2-aligned
        (129, 77, 77, 128, 0, 0, 1),        // odd pitch and row length
        (3, 4097, 4099, 4224, 1, 0, 1),     // odd base too
        (5, 3, 7, 3, 0, 5, 1),              // odd destination pitch and base
        (1, 5, 5, 128, 3, 0, 1),            // one tiny row
        (2, 15, 16, 128, 0, 0, 16),         // rows shorter than a vector
    ];
    let seed = baton_reference::random::XorShift::seed_from_time();
    println!("seed {seed}");
    let mut rng = baton_reference::random::XorShift::new(seed);
    let s = gpu.stream();
    for (rows, row_bytes, src_pitch, dst_pitch, src_off, dst_off, width) in cases {
        let case = format!(
            "{rows} rows of {row_bytes} B, pitch {src_pitch} -> {dst_pitch}, offsets {src_off}/{dst_off}"
        );
        let src_len = src_off + rows * src_pitch + 64;
        let dst_len = dst_off + (rows - 1) * dst_pitch + row_bytes + 256;
        let src_host: Vec<u8> = (0..src_len).map(|_| rng.next_u32() as u8).collect();
        let src = s.clone_htod(&src_host).unwrap();
        let mut dst = s.clone_htod(&vec![SENTINEL; dst_len]).unwrap();
        let copy = PitchedCopy {
            dst: dst.device_ptr_mut(s).0 + dst_off as u64,
            dst_pitch: dst_pitch as u64,
            src: src.device_ptr(s).0 + src_off as u64,
            src_pitch: src_pitch as u64,
            row_bytes: row_bytes as u64,
            rows: rows as u64,
        };
        assert_eq!(copy.vector_bytes(), width, "{case}");
        // SAFETY: src holds src_off + rows·src_pitch bytes, dst dst_off +
        // (rows − 1)·dst_pitch + row_bytes; separate allocations, used on
        // this stream only.
        unsafe { copier.enqueue(s, &copy) }.unwrap_or_else(|e| panic!("{case}: {e}"));
        let out = s.clone_dtoh(&dst).unwrap_or_else(|e| panic!("{case}: {e}"));
        let mut expect = vec![SENTINEL; dst_len];
        for r in 0..rows {
            let (d, sr) = (dst_off + r * dst_pitch, src_off + r * src_pitch);
            expect[d..d + row_bytes].copy_from_slice(&src_host[sr..sr + row_bytes]);
        }
        if let Some(i) = (0..dst_len).find(|&i| out[i] != expect[i]) {
            let rel = i.saturating_sub(dst_off);
            panic!(
                "{case}: first wrong byte at {i} (row {}, byte {}): {:#04x}, want {:#04x}",
                rel / dst_pitch,
                rel % dst_pitch,
                out[i],
                expect[i]
            );
        }
        println!(
            "{case}: {width}-byte chunks, grid {}, ok",
            copier.grid(&copy)
        );
    }
}
