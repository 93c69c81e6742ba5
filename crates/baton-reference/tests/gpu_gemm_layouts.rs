//! The BF16 view GEMM's kernel paths on a real GPU: strided batches in
//! one launch, and MN-major operands. Batches: distinct batch strides per
//! operand, shared inputs (batch stride 0), overlapping inputs (one launch
//! per matrix), every configuration kind (clusters, ping-pong, stream-K,
//! split-K). MN-major: every (A, B) layout pair —
//! A row- or column-major, B row-major (K×N, N contiguous: `torch.mm`'s
//! `[in, out]` weight) or column-major — at ragged shapes with leading
//! dimensions above their widths, batches, beta ≠ 0, a column-major D,
//! stream-K and split-K, each entry the plan picks (128x256, 128x128);
//! every element vs an f64 CPU reference and D's buffer outside the view
//! still poison. Then ours vs cuBLAS (`cublasGemmEx` with the matching
//! op flags) on the same inputs, and (ignored: a benchmark) the timing
//! side by side. Fresh random inputs per run (seed printed). Without a
//! Hopper GPU each test prints `SKIPPED: …` and returns.

use baton_reference::gemm_check::Comparison;
use baton_reference::random::XorShift;
#[cfg(feature = "cublas")]
use baton_reference::timing::{QueuedTimer, median};
use baton_runtime::gemm::element::bf16;
use baton_runtime::gemm::matrix::{Layout, Matrix, MatrixDesc, MatrixMut};
use baton_runtime::gemm::mn_major::Bf16Layouts;
use baton_runtime::gemm::{GemmConfig, GemmPlan};
use baton_runtime::{Gpu, Kernels, Variant};
#[cfg(feature = "cublas")]
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// bf16 quiet NaN: D's buffer before every run.
const POISON: u16 = 0x7FC1;

fn setup() -> Option<(Gpu, Kernels)> {
    let gpu = Gpu::for_test()?;
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

/// A view of `rows × cols` in `layout`, leading dimension `pad` above its
/// contiguous dimension rounded up to 8, `batch` matrices `gap` elements
/// apart beyond one matrix's span.
fn desc(layout: Layout, rows: usize, cols: usize, pad: usize, batch: usize) -> MatrixDesc {
    let d = match layout {
        Layout::RowMajor => MatrixDesc::row_major(rows, cols),
        Layout::ColMajor => MatrixDesc::col_major(rows, cols),
    };
    let ld = d.inner().next_multiple_of(8) + pad;
    let d = d.with_ld(ld);
    let span = d.outer() * ld + 24;
    d.with_batch(batch, if batch > 1 { span } else { 0 })
}

/// What a case asks of the plan besides the heuristic's choice.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Schedule {
    Heuristic,
    StreamK,
    SplitK(u32),
}

struct Case {
    a: MatrixDesc,
    b: MatrixDesc,
    d: MatrixDesc,
    beta: f32,
    schedule: Schedule,
    /// `None`: the heuristic's choice (mapped onto an MN-major entry).
    config: Option<GemmConfig>,
    /// Kernel launches the plan must make (`GemmPlan::launches`).
    launches: usize,
}

/// Runs one case (D poisoned; C separate, D's description) and checks
/// every element of D's buffer. Returns the plan's (config, layouts).
fn run_case(gpu: &Gpu, kernels: &Kernels, case: &Case, rng: &mut XorShift) -> String {
    let s = gpu.stream();
    let span = |d: &MatrixDesc| d.span().unwrap() + 8;
    let (a, b, c) = (
        random_bf16(span(&case.a), rng),
        random_bf16(span(&case.b), rng),
        random_bf16(span(&case.d), rng),
    );
    let (a_d, b_d, c_d) = (
        s.clone_htod(&a).unwrap(),
        s.clone_htod(&b).unwrap(),
        s.clone_htod(&c).unwrap(),
    );
    let mut d_d = s
        .clone_htod(&vec![bf16::from_bits(POISON); span(&case.d)])
        .unwrap();
    let alpha = 0.75;
    let (av, bv, dv) = (
        Matrix::new(&a_d, case.a).unwrap(),
        Matrix::new(&b_d, case.b).unwrap(),
        MatrixMut::new(&mut d_d, case.d).unwrap(),
    );
    let cv = (case.beta != 0.0).then(|| Matrix::new(&c_d, case.d).unwrap());
    let mut plan = match case.config {
        None => GemmPlan::from_views(gpu, kernels, av, bv, cv, dv),
        Some(config) => GemmPlan::from_views_with_config(gpu, kernels, config, av, bv, cv, dv),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    match case.schedule {
        Schedule::Heuristic => {}
        Schedule::StreamK => plan.set_stream_k(gpu, Some(1)).unwrap(),
        Schedule::SplitK(n) => plan.set_split_k(gpu, n).unwrap(),
    }
    assert_eq!(plan.batch(), case.d.batch);
    assert_eq!(plan.launches(), case.launches, "launches");
    let what = format!(
        "{} {:?} {:?} A {:?} B {:?} D {:?} beta {}",
        plan.config().name(),
        plan.layouts(),
        case.schedule,
        case.a.layout,
        case.b.layout,
        case.d.layout,
        case.beta
    );
    plan.run(gpu, alpha, case.beta).unwrap();
    gpu.synchronize().unwrap();
    drop(plan);
    let out = s.clone_dtoh(&d_d).unwrap();
    let (m, n, k) = (case.d.rows, case.d.cols, case.a.cols);
    let mut in_view = vec![false; out.len()];
    let (mut got, mut reference) = (Vec::new(), Vec::new());
    for bt in 0..case.d.batch {
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|kk| {
                        a[at(&case.a, bt, i, kk)].to_f64() * b[at(&case.b, bt, kk, j)].to_f64()
                    })
                    .sum();
                let o = at(&case.d, bt, i, j);
                reference.push(alpha as f64 * dot + case.beta as f64 * c[o].to_f64());
                in_view[o] = true;
                got.push(out[o].to_bits());
            }
        }
    }
    let cmp = Comparison::new(&got, &reference);
    println!(
        "{what} {m}x{n}x{k} batch {}: rel {:.2e}, max abs {:.2e}",
        case.d.batch, cmp.rel_error, cmp.max_abs_error
    );
    assert!(cmp.passes(5e-3), "{what}: {cmp:?}");
    let touched = out
        .iter()
        .zip(&in_view)
        .filter(|(v, inside)| !**inside && v.to_bits() != POISON)
        .count();
    assert_eq!(
        touched, 0,
        "{what}: {touched} elements outside D's view were written"
    );
    what
}

const LAYOUTS: [Layout; 2] = [Layout::RowMajor, Layout::ColMajor];

#[test]
fn every_layout_pair_matches_f64_reference() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    let mut rng = rng();
    let mut ran = Vec::new();
    for a_layout in LAYOUTS {
        for b_layout in LAYOUTS {
            let case = |a: MatrixDesc, b: MatrixDesc, d: MatrixDesc, beta, schedule, config| Case {
                a,
                b,
                d,
                beta,
                schedule,
                config,
                launches: 1,
            };
            let cases = [
                // Ragged M, N, K (none a multiple of its tile), ld above
                // the contiguous dimension, 2 batches, beta ≠ 0.
                case(
                    desc(a_layout, 200, 200, 16, 2),
                    desc(b_layout, 200, 136, 8, 2),
                    desc(Layout::RowMajor, 200, 136, 24, 2),
                    0.5,
                    Schedule::Heuristic,
                    None,
                ),
                // Column-major D (Dᵀ = Bᵀ·Aᵀ: the operands swap roles), a
                // single 72-row tile row.
                case(
                    desc(a_layout, 72, 328, 8, 1),
                    desc(b_layout, 328, 264, 0, 1),
                    desc(Layout::ColMajor, 72, 264, 8, 1),
                    0.0,
                    Schedule::Heuristic,
                    None,
                ),
                // Each MN-major configuration: M tail of 104 rows (two A
                // boxes, the second partly past M), N tail, K = 8 · 65.
                case(
                    desc(a_layout, 1000, 520, 8, 1),
                    desc(b_layout, 520, 1032, 8, 1),
                    desc(Layout::RowMajor, 1000, 1032, 8, 1),
                    0.0,
                    Schedule::Heuristic,
                    Some(GemmConfig::T128x256),
                ),
                case(
                    desc(a_layout, 1000, 520, 8, 1),
                    desc(b_layout, 520, 1032, 8, 1),
                    desc(Layout::RowMajor, 1000, 1032, 8, 1),
                    1.0,
                    Schedule::StreamK,
                    Some(GemmConfig::T128x128),
                ),
                // Small M (a tail of 40 rows: one A box), split-K.
                case(
                    desc(a_layout, 40, 1032, 0, 1),
                    desc(b_layout, 1032, 256, 0, 1),
                    desc(Layout::RowMajor, 40, 256, 0, 1),
                    -1.0,
                    Schedule::SplitK(4),
                    Some(GemmConfig::T128x128),
                ),
            ];
            for c in &cases {
                ran.push(run_case(&gpu, &kernels, c, &mut rng));
            }
        }
    }
    // Each MN-major entry ran at least once.
    for name in ["128x256", "128x128"] {
        for l in [
            Bf16Layouts {
                a_m_major: true,
                b_n_major: false,
            },
            Bf16Layouts {
                a_m_major: false,
                b_n_major: true,
            },
            Bf16Layouts {
                a_m_major: true,
                b_n_major: true,
            },
        ] {
            let tag = format!("{name} {l:?}");
            assert!(
                ran.iter().any(|r| r.starts_with(&tag)),
                "no case ran {tag}: {ran:#?}"
            );
        }
    }
}

/// `d` with batch stride `stride` (elements).
fn strided(d: MatrixDesc, stride: usize) -> MatrixDesc {
    d.with_batch(d.batch, stride)
}

#[test]
fn batches_in_one_launch_match_f64_reference() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    let mut rng = rng();
    let (row, col) = (Layout::RowMajor, Layout::ColMajor);
    // Ragged M, N, K; 3 matrices; every operand its own batch stride (a
    // whole matrix plus a different gap each).
    let (m, n, k) = (200, 136, 200);
    let a = desc(row, m, k, 16, 3);
    let b = desc(col, k, n, 8, 3);
    let d = desc(row, m, n, 24, 3);
    let (a, b, d) = (
        strided(a, a.batch_stride + 40),
        strided(b, b.batch_stride + 8),
        strided(d, d.batch_stride + 96),
    );
    let cases = [
        // K-major, beta ≠ 0 (C with D's strides), the heuristic's choice.
        Case {
            a,
            b,
            d,
            beta: 0.5,
            schedule: Schedule::Heuristic,
            config: None,
            launches: 1,
        },
        // Clusters of 2 (a cluster never straddles two matrices: 2 tile
        // rows per matrix), B shared by the batch (stride 0), stream-K.
        Case {
            a,
            b: strided(b, 0),
            d,
            beta: 0.0,
            schedule: Schedule::StreamK,
            config: Some(GemmConfig::T128x256C2),
            launches: 1,
        },
        // Ping-pong with clusters, A shared, C ≠ D.
        Case {
            a: strided(a, 0),
            b,
            d,
            beta: -0.5,
            schedule: Schedule::Heuristic,
            config: Some(GemmConfig::T128x128PingPongC2),
            launches: 1,
        },
        // MN-major A and B, split-K over the batch's units.
        Case {
            a: strided(desc(col, m, k, 8, 3), (m + 8).next_multiple_of(8) * k + 64),
            b: strided(desc(row, k, n, 0, 3), k * n + 8),
            d,
            beta: 1.0,
            schedule: Schedule::SplitK(2),
            config: Some(GemmConfig::T128x128),
            launches: 1,
        },
        // Column-major D (the operands swap), small tiles.
        Case {
            a,
            b,
            d: strided(desc(col, m, n, 8, 3), 40_000),
            beta: 0.0,
            schedule: Schedule::Heuristic,
            config: Some(GemmConfig::T128x64),
            launches: 1,
        },
        // A's matrices overlap (stride below rows · ld): one launch per
        // matrix, still every element right.
        Case {
            a: strided(a, a.ld * (m - 1)),
            b,
            d,
            beta: 0.0,
            schedule: Schedule::Heuristic,
            config: None,
            launches: 3,
        },
    ];
    for c in &cases {
        run_case(&gpu, &kernels, c, &mut rng);
    }
}

#[cfg(feature = "cublas")]
/// cuBLAS's `D = A·B` for row-major D of the views' layouts: column-major
/// `Dᵀ = Bᵀ·Aᵀ`, each operand transposed or not by its layout.
fn cublas_views(
    blas: &cudarc::cublas::CudaBlas,
    gpu: &Gpu,
    (a, ad): (&CudaSlice<bf16>, &MatrixDesc),
    (b, bd): (&CudaSlice<bf16>, &MatrixDesc),
    (d, dd): (&mut CudaSlice<bf16>, &MatrixDesc),
) {
    use cudarc::cublas::sys as bs;
    assert_eq!(dd.layout, Layout::RowMajor);
    let s = gpu.stream();
    let (a_ptr, _s0) = a.device_ptr(s);
    let (b_ptr, _s1) = b.device_ptr(s);
    let (d_ptr, _s2) = d.device_ptr_mut(s);
    let op = |transposed: bool| {
        if transposed {
            bs::cublasOperation_t::CUBLAS_OP_T
        } else {
            bs::cublasOperation_t::CUBLAS_OP_N
        }
    };
    let (m, n, k) = (dd.rows, dd.cols, ad.cols);
    let (alpha, beta) = (1.0f32, 0.0f32);
    // SAFETY: live device buffers holding the views (checked by Matrix::new).
    unsafe {
        cudarc::cublas::result::gemm_ex(
            *blas.handle(),
            op(bd.layout == Layout::ColMajor),
            op(ad.layout == Layout::ColMajor),
            n as i32,
            m as i32,
            k as i32,
            &alpha as *const f32 as *const _,
            b_ptr as *const _,
            bs::cudaDataType::CUDA_R_16BF,
            bd.ld as i32,
            a_ptr as *const _,
            bs::cudaDataType::CUDA_R_16BF,
            ad.ld as i32,
            &beta as *const f32 as *const _,
            d_ptr as *mut _,
            bs::cudaDataType::CUDA_R_16BF,
            dd.ld as i32,
            bs::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            bs::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }
    .unwrap();
}

/// The heuristic's plan of `D = A·B` over the views.
#[cfg(feature = "cublas")]
fn plan_of<'a>(
    gpu: &Gpu,
    kernels: &Kernels,
    (a, ad): (&'a CudaSlice<bf16>, &MatrixDesc),
    (b, bd): (&'a CudaSlice<bf16>, &MatrixDesc),
    (d, dd): (&'a mut CudaSlice<bf16>, &MatrixDesc),
) -> GemmPlan<'a> {
    GemmPlan::from_views(
        gpu,
        kernels,
        Matrix::new(a, *ad).unwrap(),
        Matrix::new(b, *bd).unwrap(),
        None,
        MatrixMut::new(d, *dd).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(feature = "cublas")]
/// Ours vs cuBLAS on the same inputs for every layout pair at `mnk`:
/// the outputs compared, then (with `reps > 0`) both timed interleaved.
fn versus_cublas(gpu: &Gpu, kernels: &Kernels, (m, n, k): (usize, usize, usize), reps: usize) {
    let s = gpu.stream();
    let blas = cudarc::cublas::CudaBlas::new(s.clone()).unwrap();
    let mut rng = rng();
    for a_layout in LAYOUTS {
        for b_layout in LAYOUTS {
            let (ad, bd, dd) = (
                desc(a_layout, m, k, 0, 1),
                desc(b_layout, k, n, 0, 1),
                desc(Layout::RowMajor, m, n, 0, 1),
            );
            let a = s
                .clone_htod(&random_bf16(ad.span().unwrap(), &mut rng))
                .unwrap();
            let b = s
                .clone_htod(&random_bf16(bd.span().unwrap(), &mut rng))
                .unwrap();
            let poison = vec![bf16::from_bits(POISON); dd.span().unwrap()];
            let mut ours = s.clone_htod(&poison).unwrap();
            let mut theirs = s.clone_htod(&poison).unwrap();
            let what = {
                let plan = plan_of(gpu, kernels, (&a, &ad), (&b, &bd), (&mut ours, &dd));
                plan.run(gpu, 1.0, 0.0).unwrap();
                format!(
                    "{m}x{n}x{k} A {:?} B {:?}: {} {:?}",
                    a_layout,
                    b_layout,
                    plan.config().name(),
                    plan.layouts()
                )
            };
            cublas_views(&blas, gpu, (&a, &ad), (&b, &bd), (&mut theirs, &dd));
            gpu.synchronize().unwrap();
            let t: Vec<f64> = s
                .clone_dtoh(&theirs)
                .unwrap()
                .iter()
                .map(|x| x.to_f64())
                .collect();
            let o: Vec<u16> = s
                .clone_dtoh(&ours)
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            let cmp = Comparison::new(&o, &t);
            println!("{what}: vs cuBLAS rel {:.2e}", cmp.rel_error);
            assert!(cmp.passes(1e-2), "{what}: {cmp:?}");
            if reps == 0 {
                continue;
            }
            let plan = plan_of(gpu, kernels, (&a, &ad), (&b, &bd), (&mut ours, &dd));
            let mut timer = QueuedTimer::<2>::new();
            for _ in 0..reps + 3 {
                timer.time(gpu, 0, || plan.run(gpu, 1.0, 0.0)).unwrap();
                timer
                    .time(gpu, 1, || {
                        cublas_views(&blas, gpu, (&a, &ad), (&b, &bd), (&mut theirs, &dd));
                        Ok::<(), baton_reference::Error>(())
                    })
                    .unwrap();
            }
            let [ours_t, theirs_t] = timer.finish(gpu, 3).unwrap();
            let (o_ms, t_ms) = (median(ours_t), median(theirs_t));
            let tflops = |ms: f64| 2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12;
            println!(
                "BENCH {what}: ours {o_ms:.4} ms {:.1} TFLOP/s, cuBLAS {t_ms:.4} ms {:.1} TFLOP/s, ratio {:.3}",
                tflops(o_ms),
                tflops(t_ms),
                t_ms / o_ms
            );
        }
    }
}

#[cfg(feature = "cublas")]
#[test]
fn every_layout_pair_matches_cublas() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    versus_cublas(&gpu, &kernels, (1000, 1032, 520), 0);
}

/// Measured, never asserted: every layout pair vs cuBLAS (its op flags)
/// at three shapes, median of 30 interleaved event-timed runs.
#[cfg(feature = "cublas")]
#[test]
#[ignore = "benchmark: run with --ignored on a GPU"]
fn layouts_vs_cublas_timing() {
    let Some((gpu, kernels)) = setup() else {
        return;
    };
    for mnk in [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 7168, 4096)] {
        versus_cublas(&gpu, &kernels, mnk, 30);
    }
}
