//! The typed GEMM API over matrix views on a real GPU: `half::bf16` and
//! `float8` E4M3 operands with leading dimensions above their widths,
//! batches (with a broadcast B), a column-major D, C in place, raw-pointer
//! views; and CUDA-graph capture of a BF16 and an FP8 GEMM replayed on
//! fresh inputs. Every element of every view is checked against an f64 CPU
//! reference, and every element of D's buffer outside the view must still
//! hold the poison it was given (the kernels write nothing else). Fresh
//! random inputs per run (the seed is printed). Without a Hopper GPU each
//! test prints `SKIPPED: …` and returns.

use baton_reference::gemm_check::Comparison;
use baton_reference::gemm_fp8_check::{random_e4m3, random_scales, reference_f64 as fp8_ref};
use baton_reference::random::XorShift;
use baton_runtime::gemm::element::{E4M3, bf16};
use baton_runtime::gemm::fp8::{Fp8GemmPlan, scale_lens};
use baton_runtime::gemm::matrix::{Layout, Matrix, MatrixDesc, MatrixMut};
use baton_runtime::gemm::{GemmError, GemmPlan, Scales};
use baton_runtime::{Error, Gpu, Kernels, Variant};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaSlice, DevicePtr};

/// bf16 quiet NaN: D's buffer before every run.
const POISON: u16 = 0x7FC1;

fn setup() -> Option<(Gpu, Kernels)> {
    let gpu = Gpu::for_test()?;
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    Some((gpu, kernels))
}

/// As [`setup`], on a stream of our own (`Gpu::from_stream`): the
/// context's default stream (legacy) cannot be captured in a graph.
fn setup_own_stream() -> Option<(Gpu, Kernels)> {
    let gpu = Gpu::for_test()?;
    let stream = gpu.context().new_stream().unwrap();
    let gpu = Gpu::from_stream(stream).unwrap_or_else(|e| panic!("{e}"));
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    Some((gpu, kernels))
}

fn rng() -> XorShift {
    let seed = XorShift::seed_from_time();
    println!("seed {seed}");
    XorShift::new(seed)
}

fn random_bf16(n: usize, rng: &mut XorShift) -> Vec<bf16> {
    (0..n)
        .map(|_| bf16::from_f32((rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0))
        .collect()
}

/// Element offset of (b, r, c) in a view.
fn at(d: &MatrixDesc, b: usize, r: usize, c: usize) -> usize {
    b * d.batch_stride
        + match d.layout {
            Layout::RowMajor => r * d.ld + c,
            Layout::ColMajor => c * d.ld + r,
        }
}

/// Checks D's buffer: the view's elements against `reference` (indexed
/// (b, i, j) → `(b·M + i)·N + j`), everything else still poison.
fn check_output(out: &[bf16], d: &MatrixDesc, reference: &[f64], tol: f64, what: &str) {
    let (m, n) = (d.rows, d.cols);
    let mut in_view = vec![false; out.len()];
    let mut got = Vec::with_capacity(reference.len());
    for b in 0..d.batch {
        for i in 0..m {
            for j in 0..n {
                let o = at(d, b, i, j);
                in_view[o] = true;
                got.push(out[o].to_bits());
            }
        }
    }
    let cmp = Comparison::new(&got, reference);
    println!(
        "{what}: rel {:.2e}, max abs {:.2e}",
        cmp.rel_error, cmp.max_abs_error
    );
    assert!(cmp.passes(tol), "{what}: {cmp:?}");
    let touched = out
        .iter()
        .zip(&in_view)
        .filter(|(v, inside)| !**inside && v.to_bits() != POISON)
        .count();
    assert_eq!(
        touched, 0,
        "{what}: {touched} elements outside D's view were written"
    );
}

/// One BF16 case: A M×K row-major, B K×N column-major, C/D M×N in `d`'s
/// layout; leading dimensions and batch strides as given.
struct Bf16Case {
    a: MatrixDesc,
    b: MatrixDesc,
    d: MatrixDesc,
    /// beta ≠ 0: C separate (same description as D), or D itself.
    c: Option<bool>,
    /// Make the views from raw device pointers (the FFI path).
    raw: bool,
}

fn bf16_reference(
    case: &Bf16Case,
    a: &[bf16],
    b: &[bf16],
    c: Option<&[bf16]>,
    alpha: f32,
    beta: f32,
) -> Vec<f64> {
    let (m, n, k) = (case.d.rows, case.d.cols, case.a.cols);
    let mut out = Vec::with_capacity(case.d.batch * m * n);
    for bt in 0..case.d.batch {
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|kk| {
                        a[at(&case.a, bt, i, kk)].to_f64() * b[at(&case.b, bt, kk, j)].to_f64()
                    })
                    .sum();
                let cv = c.map_or(0.0, |c| c[at(&case.d, bt, i, j)].to_f64());
                out.push(alpha as f64 * dot + beta as f64 * cv);
            }
        }
    }
    out
}

fn run_bf16_case(gpu: &Gpu, kernels: &Kernels, case: &Bf16Case, rng: &mut XorShift) {
    let s = gpu.stream();
    let span = |d: &MatrixDesc| d.span().unwrap() + 8; // a little slack past the view
    let a = random_bf16(span(&case.a), rng);
    let b = random_bf16(span(&case.b), rng);
    let (alpha, beta) = match case.c {
        None => (1.0, 0.0),
        Some(_) => (0.75, 0.5),
    };
    let c = random_bf16(span(&case.d), rng);
    let (a_d, b_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let c_d = s.clone_htod(&c).unwrap();
    let poison = vec![bf16::from_bits(POISON); span(&case.d)];
    // In place (C is D): D starts as C.
    let in_place = case.c == Some(false);
    let mut d_d = s.clone_htod(if in_place { &c } else { &poison }).unwrap();
    let d_addr = {
        let (p, _sync) = d_d.device_ptr(s);
        p
    };
    let (a_view, b_view, c_view, d_view) = if case.raw {
        let addr = |x: &CudaSlice<bf16>| {
            let (p, _sync) = x.device_ptr(s);
            p
        };
        // SAFETY: the buffers outlive the plan (dropped below, after the
        // synchronize), and nothing else touches them meanwhile.
        unsafe {
            (
                Matrix::<bf16>::from_raw(addr(&a_d), a_d.len(), case.a).unwrap(),
                Matrix::<bf16>::from_raw(addr(&b_d), b_d.len(), case.b).unwrap(),
                Matrix::<bf16>::from_raw(addr(&c_d), c_d.len(), case.d).unwrap(),
                MatrixMut::<bf16>::from_raw(d_addr, d_d.len(), case.d).unwrap(),
            )
        }
    } else {
        (
            Matrix::new(&a_d, case.a).unwrap(),
            Matrix::new(&b_d, case.b).unwrap(),
            Matrix::new(&c_d, case.d).unwrap(),
            MatrixMut::new(&mut d_d, case.d).unwrap(),
        )
    };
    let c_arg = match case.c {
        None => None,
        Some(true) => Some(c_view),
        // SAFETY: D's own buffer as C (in-place residual), alive as above.
        Some(false) => Some(unsafe { Matrix::from_raw(d_addr, span(&case.d), case.d) }.unwrap()),
    };
    let plan = GemmPlan::from_views(gpu, kernels, a_view, b_view, c_arg, d_view)
        .unwrap_or_else(|e| panic!("{e}"));
    let config = plan.config().name();
    plan.run(gpu, alpha, beta).unwrap();
    gpu.synchronize().unwrap();
    drop(plan);
    let out = s.clone_dtoh(&d_d).unwrap();
    let reference = bf16_reference(case, &a, &b, case.c.map(|_| c.as_slice()), alpha, beta);
    if in_place {
        // Outside the view D still holds C there, not poison: compare it
        // with C and then treat it as poison for the check.
        let mut out = out;
        let mut inside = vec![false; out.len()];
        for bt in 0..case.d.batch {
            for i in 0..case.d.rows {
                for j in 0..case.d.cols {
                    inside[at(&case.d, bt, i, j)] = true;
                }
            }
        }
        for (idx, v) in out.iter_mut().enumerate() {
            if !inside[idx] {
                assert_eq!(
                    v.to_bits(),
                    c[idx].to_bits(),
                    "in place: element {idx} outside the view changed"
                );
                *v = bf16::from_bits(POISON);
            }
        }
        check_output(
            &out,
            &case.d,
            &reference,
            5e-3,
            &format!("{config} in place {:?}", case.d),
        );
    } else {
        check_output(
            &out,
            &case.d,
            &reference,
            5e-3,
            &format!("{config} {:?}", case.d),
        );
    }
}

#[test]
fn bf16_views_match_f64_reference() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    let mut rng = rng();
    let cases = [
        // Ragged M, N, K; every leading dimension above its width; 3
        // batches with B shared (batch stride 0).
        Bf16Case {
            a: MatrixDesc::row_major(200, 72)
                .with_ld(88)
                .with_batch(3, 200 * 88 + 16),
            b: MatrixDesc::col_major(72, 136).with_ld(80).with_batch(3, 0),
            d: MatrixDesc::row_major(200, 136)
                .with_ld(152)
                .with_batch(3, 200 * 152 + 64),
            c: None,
            raw: false,
        },
        // Column-major C and D (computed as Dᵀ = Bᵀ·Aᵀ), beta ≠ 0, 2 batches.
        Bf16Case {
            a: MatrixDesc::row_major(136, 128)
                .with_ld(136)
                .with_batch(2, 136 * 136),
            b: MatrixDesc::col_major(128, 264)
                .with_ld(144)
                .with_batch(2, 264 * 144),
            d: MatrixDesc::col_major(136, 264)
                .with_ld(144)
                .with_batch(2, 264 * 144),
            c: Some(true),
            raw: false,
        },
        // In-place residual (C is D), from raw device pointers.
        Bf16Case {
            a: MatrixDesc::row_major(72, 200).with_ld(208),
            b: MatrixDesc::col_major(200, 64).with_ld(200),
            d: MatrixDesc::row_major(72, 64).with_ld(80),
            c: Some(false),
            raw: true,
        },
        // Large enough for the clustered configurations.
        Bf16Case {
            a: MatrixDesc::row_major(1000, 512).with_ld(520),
            b: MatrixDesc::col_major(512, 1032).with_ld(512),
            d: MatrixDesc::row_major(1000, 1032).with_ld(1040),
            c: None,
            raw: false,
        },
    ];
    for case in &cases {
        run_bf16_case(&gpu, &kernels, case, &mut rng);
    }
}

/// FP8 inputs: A (M×K row-major, ld `lda`), B (K×N column-major, ld
/// `ldb`), packed scales; returns the host copies and the packed
/// equivalents for the reference.
struct Fp8Inputs {
    a: Vec<E4M3>,
    b: Vec<E4M3>,
    sa: Vec<f32>,
    sb: Vec<f32>,
}

fn fp8_inputs(
    (m, n, k): (usize, usize, usize),
    lda: usize,
    ldb: usize,
    rng: &mut XorShift,
) -> Fp8Inputs {
    let mut bits = |n| {
        random_e4m3(n, 448.0, rng)
            .into_iter()
            .map(E4M3::from_bits)
            .collect::<Vec<_>>()
    };
    let a = bits(m * lda);
    let b = bits(n * ldb);
    let (sa_len, sb_len) = scale_lens(m, n, k);
    let sa = random_scales(sa_len, rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    let sb = random_scales(sb_len, rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    Fp8Inputs { a, b, sa, sb }
}

fn fp8_reference(
    x: &Fp8Inputs,
    (m, n, k): (usize, usize, usize),
    lda: usize,
    ldb: usize,
) -> Vec<f64> {
    let pack = |v: &[E4M3], rows: usize, ld: usize| -> Vec<u8> {
        (0..rows)
            .flat_map(|r| v[r * ld..r * ld + k].iter().map(|e| e.to_bits()))
            .collect()
    };
    fp8_ref(
        &pack(&x.a, m, lda),
        &pack(&x.b, n, ldb),
        &x.sa,
        &x.sb,
        m,
        n,
        k,
    )
}

#[test]
fn fp8_views_match_f64_reference() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    let mut rng = rng();
    let s = gpu.stream();
    // Ragged M (not a multiple of 4: the padded A-scale path), ld > K.
    for (m, n, k, lda, ldb, ldd) in [
        (203, 264, 384, 400, 416, 272),
        (64, 136, 256, 256, 272, 144),
    ] {
        let x = fp8_inputs((m, n, k), lda, ldb, &mut rng);
        let (a_d, b_d) = (s.clone_htod(&x.a).unwrap(), s.clone_htod(&x.b).unwrap());
        let (sa_d, sb_d) = (s.clone_htod(&x.sa).unwrap(), s.clone_htod(&x.sb).unwrap());
        let d_desc = MatrixDesc::row_major(m, n).with_ld(ldd);
        let mut d_d = s
            .clone_htod(&vec![bf16::from_bits(POISON); d_desc.span().unwrap()])
            .unwrap();
        let plan = Fp8GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a_d, MatrixDesc::row_major(m, k).with_ld(lda)).unwrap(),
            Matrix::new(&b_d, MatrixDesc::col_major(k, n).with_ld(ldb)).unwrap(),
            Scales::new(&sa_d),
            Scales::new(&sb_d),
            MatrixMut::new(&mut d_d, d_desc).unwrap(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let kernel = plan.kernel_name();
        plan.run(&gpu).unwrap();
        gpu.synchronize().unwrap();
        drop(plan);
        let out = s.clone_dtoh(&d_d).unwrap();
        let reference = fp8_reference(&x, (m, n, k), lda, ldb);
        check_output(
            &out,
            &d_desc,
            &reference,
            2e-2,
            &format!("{kernel} {m}x{n}x{k}"),
        );
    }
}

/// A scales with a row stride (`Scales::with_ld`): DeepGEMM's TMA-aligned
/// layout (ld = M rounded up to 4, read in place by TMA) and an odd stride
/// (read through the plan's padded copy), with NaN in every float between
/// the rows, which no valid output may pick up; at shapes where the plan
/// splits K (`fp8::plan`), so the view API runs the same split-K plan as
/// `Fp8GemmPlan::new` (workers fixing up each other's promoted partials).
#[test]
fn fp8_strided_a_scales_and_split_k_match_f64_reference() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    let mut rng = rng();
    let s = gpu.stream();
    let mut splits_seen = 0;
    for (m, n, k, ld_sa) in [
        (66, 512, 8192, 68),
        (66, 1024, 4096, 67),
        (200, 264, 1024, 203),
        // 64 < M ≤ 128, whole tiles: the plan's 128×64 runs as 64×128
        // tiles (`fp8::for_m`), two tile rows, the second ragged.
        (100, 7168, 2048, 103),
        // PyTorch's M-major layout with M not a multiple of 4 (packed).
        (130, 1024, 8192, 130),
        (3, 2048, 4096, 3),
        // Tall: 256-row tiles with a 131-row tail (a full and a partial
        // A-scale box), ld ≡ 1 mod 4.
        (387, 4096, 2048, 389),
    ] {
        let x = fp8_inputs((m, n, k), k, k, &mut rng);
        let kb = k / 128;
        let mut sa_strided = vec![f32::NAN; (kb - 1) * ld_sa + m];
        for b in 0..kb {
            sa_strided[b * ld_sa..b * ld_sa + m].copy_from_slice(&x.sa[b * m..(b + 1) * m]);
        }
        let (a_d, b_d) = (s.clone_htod(&x.a).unwrap(), s.clone_htod(&x.b).unwrap());
        let sa_d = s.clone_htod(&sa_strided).unwrap();
        let sb_d = s.clone_htod(&x.sb).unwrap();
        let d_desc = MatrixDesc::row_major(m, n);
        let mut d_d = s.clone_htod(&vec![bf16::from_bits(POISON); m * n]).unwrap();
        let plan = Fp8GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a_d, MatrixDesc::row_major(m, k)).unwrap(),
            Matrix::new(&b_d, MatrixDesc::col_major(k, n)).unwrap(),
            Scales::new(&sa_d).with_ld(ld_sa),
            Scales::new(&sb_d),
            MatrixMut::new(&mut d_d, d_desc).unwrap(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !plan.copies_a_scales(),
            "{m}x{n}x{k} A-scale ld {ld_sa}: read in place (an aligned base), no copy"
        );
        let (kernel, split) = (plan.kernel_name(), plan.split_k());
        let planned = baton_runtime::gemm::fp8::plan_for_gpu(&gpu, m, n, k)
            .1
            .splits;
        assert_eq!(
            split.unwrap_or(1) as usize,
            planned,
            "{m}x{n}x{k}: the view API runs the planned split"
        );
        println!("{kernel} {m}x{n}x{k} A-scale ld {ld_sa}: split-K {split:?}");
        splits_seen += split.is_some() as usize;
        plan.run(&gpu).unwrap();
        gpu.synchronize().unwrap();
        drop(plan);
        let out = s.clone_dtoh(&d_d).unwrap();
        let reference = fp8_reference(&x, (m, n, k), k, k);
        check_output(
            &out,
            &d_desc,
            &reference,
            2e-2,
            &format!("{kernel} {m}x{n}x{k} A-scale ld {ld_sa}"),
        );
    }
    assert!(
        splits_seen > 0,
        "no case ran split-K: pick shapes that fp8::plan splits"
    );
}

/// Captures `run` on the GPU's stream into a graph (thread-local mode).
fn capture(
    gpu: &Gpu,
    run: impl FnOnce() -> baton_runtime::Result<()>,
) -> cudarc::driver::CudaGraph {
    let s = gpu.stream();
    s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .unwrap();
    let ran = run();
    let graph = s.end_capture(CUgraphInstantiate_flags(0)).unwrap();
    ran.unwrap_or_else(|e| panic!("{e}"));
    graph.expect("the capture recorded the launches")
}

#[test]
fn bf16_gemm_captured_in_a_graph_replays_on_fresh_inputs() {
    let Some((gpu, kernels)) = setup_own_stream() else {
        return;
    };
    let mut rng = rng();
    let s = gpu.stream();
    let case = Bf16Case {
        a: MatrixDesc::row_major(264, 192)
            .with_ld(200)
            .with_batch(2, 264 * 200),
        b: MatrixDesc::col_major(192, 392)
            .with_ld(208)
            .with_batch(2, 392 * 208),
        d: MatrixDesc::row_major(264, 392)
            .with_ld(400)
            .with_batch(2, 264 * 400),
        c: Some(true),
        raw: false,
    };
    let span = |d: &MatrixDesc| d.span().unwrap();
    let mut a_d = s.alloc_zeros::<bf16>(span(&case.a)).unwrap();
    let mut b_d = s.alloc_zeros::<bf16>(span(&case.b)).unwrap();
    let mut c_d = s.alloc_zeros::<bf16>(span(&case.d)).unwrap();
    let mut d_d = s.alloc_zeros::<bf16>(span(&case.d)).unwrap();
    let (alpha, beta) = (1.25, -0.5);
    let graph = {
        let mut plan = GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a_d, case.a).unwrap(),
            Matrix::new(&b_d, case.b).unwrap(),
            Some(Matrix::new(&c_d, case.d).unwrap()),
            MatrixMut::new(&mut d_d, case.d).unwrap(),
        )
        .unwrap();
        plan.set_stream_k(&gpu, None).unwrap();
        capture(&gpu, || plan.run(&gpu, alpha, beta))
        // The plan goes; the graph keeps its launches, maps included.
    };
    for round in 0..3 {
        let a = random_bf16(span(&case.a), &mut rng);
        let b = random_bf16(span(&case.b), &mut rng);
        let c = random_bf16(span(&case.d), &mut rng);
        s.memcpy_htod(&a, &mut a_d).unwrap();
        s.memcpy_htod(&b, &mut b_d).unwrap();
        s.memcpy_htod(&c, &mut c_d).unwrap();
        s.memcpy_htod(&vec![bf16::from_bits(POISON); span(&case.d)], &mut d_d)
            .unwrap();
        graph.launch().unwrap();
        gpu.synchronize().unwrap();
        let out = s.clone_dtoh(&d_d).unwrap();
        let reference = bf16_reference(&case, &a, &b, Some(&c), alpha, beta);
        check_output(
            &out,
            &case.d,
            &reference,
            5e-3,
            &format!("graph replay {round}"),
        );
    }
}

#[test]
fn fp8_gemm_captured_in_a_graph_replays_on_fresh_inputs() {
    let Some((gpu, kernels)) = setup_own_stream() else {
        return;
    };
    let mut rng = rng();
    let s = gpu.stream();
    // M not a multiple of 4: the A-scale padding copy is captured too.
    let (m, n, k, lda, ldb, ldd) = (131, 392, 512, 528, 512, 400);
    let (sa_len, sb_len) = scale_lens(m, n, k);
    let mut a_d = s.alloc_zeros::<E4M3>(m * lda).unwrap();
    let mut b_d = s.alloc_zeros::<E4M3>(n * ldb).unwrap();
    let mut sa_d = s.alloc_zeros::<f32>(sa_len).unwrap();
    let mut sb_d = s.alloc_zeros::<f32>(sb_len).unwrap();
    let d_desc = MatrixDesc::row_major(m, n).with_ld(ldd);
    let mut d_d = s.alloc_zeros::<bf16>(d_desc.span().unwrap()).unwrap();
    let graph = {
        let mut plan = Fp8GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a_d, MatrixDesc::row_major(m, k).with_ld(lda)).unwrap(),
            Matrix::new(&b_d, MatrixDesc::col_major(k, n).with_ld(ldb)).unwrap(),
            Scales::new(&sa_d),
            Scales::new(&sb_d),
            MatrixMut::new(&mut d_d, d_desc).unwrap(),
        )
        .unwrap();
        plan.set_stream_k(&gpu, None).unwrap();
        capture(&gpu, || plan.run(&gpu))
    };
    for round in 0..3 {
        let x = fp8_inputs((m, n, k), lda, ldb, &mut rng);
        s.memcpy_htod(&x.a, &mut a_d).unwrap();
        s.memcpy_htod(&x.b, &mut b_d).unwrap();
        s.memcpy_htod(&x.sa, &mut sa_d).unwrap();
        s.memcpy_htod(&x.sb, &mut sb_d).unwrap();
        s.memcpy_htod(
            &vec![bf16::from_bits(POISON); d_desc.span().unwrap()],
            &mut d_d,
        )
        .unwrap();
        graph.launch().unwrap();
        gpu.synchronize().unwrap();
        let out = s.clone_dtoh(&d_d).unwrap();
        let reference = fp8_reference(&x, (m, n, k), lda, ldb);
        check_output(
            &out,
            &d_desc,
            &reference,
            2e-2,
            &format!("fp8 graph replay {round}"),
        );
    }
}

#[test]
fn stream_k_refuses_graph_capture() {
    let Some((gpu, kernels)) = setup_own_stream() else {
        return;
    };
    let s = gpu.stream();
    let a_d = s.alloc_zeros::<bf16>(256 * 256).unwrap();
    let b_d = s.alloc_zeros::<bf16>(256 * 256).unwrap();
    let mut d_d = s.alloc_zeros::<bf16>(256 * 256).unwrap();
    let mut plan = GemmPlan::from_views(
        &gpu,
        &kernels,
        Matrix::new(&a_d, MatrixDesc::row_major(256, 256)).unwrap(),
        Matrix::new(&b_d, MatrixDesc::col_major(256, 256)).unwrap(),
        None,
        MatrixMut::new(&mut d_d, MatrixDesc::row_major(256, 256)).unwrap(),
    )
    .unwrap();
    plan.set_stream_k(&gpu, Some(1)).unwrap();
    s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .unwrap();
    let ran = plan.run(&gpu, 1.0, 0.0);
    let _ = s.end_capture(CUgraphInstantiate_flags(0)).unwrap();
    match ran {
        Err(Error::Gemm(GemmError::StreamKInGraph)) => {}
        other => panic!("stream-K under capture: {other:?}"),
    }
    // Outside a capture the same plan runs.
    plan.run(&gpu, 1.0, 0.0).unwrap();
    gpu.synchronize().unwrap();
}

/// Host time per call (measured, never asserted): `GemmPlan::run` and
/// `Fp8GemmPlan::run` (launch only: maps by value) against the one-shot
/// calls over views (views checked, configuration chosen, maps encoded,
/// launch), at a small shape where the host is the limit. The baseline the
/// Python package's per-call overhead is compared with.
#[test]
#[ignore = "benchmark: run with --ignored on a GPU"]
fn host_time_per_call() {
    use baton_runtime::gemm::{matmul_bf16, matmul_fp8_blockwise};
    use std::time::Instant;
    let Some((gpu, kernels)) = setup_own_stream() else {
        return;
    };
    let s = gpu.stream();
    let (m, n, k) = (256, 256, 256);
    let calls = 500;
    let a = s.alloc_zeros::<bf16>(m * k).unwrap();
    let b = s.alloc_zeros::<bf16>(n * k).unwrap();
    let mut d = s.alloc_zeros::<bf16>(m * n).unwrap();
    let (ad, bd, dd) = (
        MatrixDesc::row_major(m, k),
        MatrixDesc::col_major(k, n),
        MatrixDesc::row_major(m, n),
    );
    let per_call = |f: &mut dyn FnMut()| {
        for _ in 0..20 {
            f();
        }
        gpu.synchronize().unwrap();
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        let host = t.elapsed().as_secs_f64() * 1e6 / calls as f64;
        gpu.synchronize().unwrap();
        let total = t.elapsed().as_secs_f64() * 1e6 / calls as f64;
        (host, total)
    };
    {
        let plan = GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a, ad).unwrap(),
            Matrix::new(&b, bd).unwrap(),
            None,
            MatrixMut::new(&mut d, dd).unwrap(),
        )
        .unwrap();
        let (host, total) = per_call(&mut || plan.run(&gpu, 1.0, 0.0).unwrap());
        println!(
            "bf16 {m}x{n}x{k} GemmPlan::run: host {host:.2} us/call, with the GPU {total:.2} us/call"
        );
    }
    let (host, total) = per_call(&mut || {
        matmul_bf16(
            &gpu,
            &kernels,
            Matrix::new(&a, ad).unwrap(),
            Matrix::new(&b, bd).unwrap(),
            None,
            MatrixMut::new(&mut d, dd).unwrap(),
            1.0,
            0.0,
        )
        .unwrap()
    });
    println!(
        "bf16 {m}x{n}x{k} matmul_bf16 (one-shot): host {host:.2} us/call, with the GPU {total:.2} us/call"
    );
    let (sa_len, sb_len) = scale_lens(m, n, k);
    let a8 = s.alloc_zeros::<E4M3>(m * k).unwrap();
    let b8 = s.alloc_zeros::<E4M3>(n * k).unwrap();
    let sa = s.alloc_zeros::<f32>(sa_len).unwrap();
    let sb = s.alloc_zeros::<f32>(sb_len).unwrap();
    {
        let plan = Fp8GemmPlan::from_views(
            &gpu,
            &kernels,
            Matrix::new(&a8, ad).unwrap(),
            Matrix::new(&b8, bd).unwrap(),
            Scales::new(&sa),
            Scales::new(&sb),
            MatrixMut::new(&mut d, dd).unwrap(),
        )
        .unwrap();
        let (host, total) = per_call(&mut || plan.run(&gpu).unwrap());
        println!(
            "fp8 {m}x{n}x{k} Fp8GemmPlan::run: host {host:.2} us/call, with the GPU {total:.2} us/call"
        );
    }
    let (host, total) = per_call(&mut || {
        matmul_fp8_blockwise(
            &gpu,
            &kernels,
            Matrix::new(&a8, ad).unwrap(),
            Matrix::new(&b8, bd).unwrap(),
            Scales::new(&sa),
            Scales::new(&sb),
            MatrixMut::new(&mut d, dd).unwrap(),
        )
        .unwrap()
    });
    println!(
        "fp8 {m}x{n}x{k} matmul_fp8_blockwise (one-shot): host {host:.2} us/call, with the GPU {total:.2} us/call"
    );
}

/// Where a one-shot call's host time goes (measured, never asserted): a
/// view, a kernel lookup, a tensor-map encode, a plan with a fixed
/// configuration, a plan through the heuristic, and a fixed plan plus its
/// first launch.
#[test]
#[ignore = "benchmark: run with --ignored on a GPU"]
fn host_time_breakdown() {
    use baton::tensor_map::{ElemType, Swizzle};
    use baton_runtime::gemm::GemmConfig;
    use baton_runtime::tensor_map::encode_strided_matrix;
    use std::time::Instant;
    let Some((gpu, kernels)) = setup_own_stream() else {
        return;
    };
    let s = gpu.stream();
    let (m, n, k) = (256, 256, 256);
    let a = s.alloc_zeros::<u16>(m * k).unwrap();
    let b = s.alloc_zeros::<u16>(n * k).unwrap();
    let mut d = s.alloc_zeros::<u16>(m * n).unwrap();
    let a_addr = {
        let (p, _sync) = a.device_ptr(s);
        p
    };
    let time = |what: &str, f: &mut dyn FnMut()| {
        for _ in 0..20 {
            f();
        }
        gpu.synchronize().unwrap();
        let t = Instant::now();
        for _ in 0..300 {
            f();
        }
        println!("{what}: {:.2} us", t.elapsed().as_secs_f64() * 1e6 / 300.0);
        gpu.synchronize().unwrap();
    };
    let spec = GemmConfig::T128x128.spec().unwrap();
    time("Matrix::new (cudarc view)", &mut || {
        Matrix::new(&a, MatrixDesc::row_major(m, k)).unwrap();
    });
    time("Kernels::kernel(spec)", &mut || {
        kernels.kernel(spec).unwrap();
    });
    time("encode_strided_matrix", &mut || {
        encode_strided_matrix(
            a_addr,
            ElemType::BF16,
            m as u64,
            k as u64,
            k as u64,
            128,
            64,
            Swizzle::B128,
        )
        .unwrap();
    });
    time("GemmPlan::with_config (128x128)", &mut || {
        GemmPlan::with_config(
            &gpu,
            &kernels,
            GemmConfig::T128x128,
            &a,
            &b,
            None,
            &mut d,
            m,
            n,
            k,
        )
        .unwrap();
    });
    time("GemmPlan::new (heuristic)", &mut || {
        GemmPlan::new(&gpu, &kernels, &a, &b, None, &mut d, m, n, k).unwrap();
    });
    time("GemmPlan::with_config + first run", &mut || {
        GemmPlan::with_config(
            &gpu,
            &kernels,
            GemmConfig::T128x128,
            &a,
            &b,
            None,
            &mut d,
            m,
            n,
            k,
        )
        .unwrap()
        .run(&gpu, 1.0, 0.0)
        .unwrap();
    });
}
