//! The BF16 GEMM on a real GPU: against an f64 CPU reference at small and
//! ragged shapes, and against cuBLAS at a large one; fresh random inputs,
//! poisoned outputs, NaN never passes. Without a CUDA GPU each test prints
//! `SKIPPED: no CUDA GPU (<reason>)` and returns.

use baton_runtime::gemm::{GemmConfig, GemmPlan, GemmShapeError};
use baton_runtime::{Error, Gpu, Variant, gemm_check};

#[test]
fn gemm_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64(&gpu, &kernels, &GemmConfig::ALL);
}

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
        let cmp =
            gemm_check::check_vs_cublas(&gpu, &kernels, config, (2048, 2048, 2048), 1.0, beta)
                .unwrap_or_else(|e| panic!("{e}"));
        println!("2048^3 beta {beta} vs cuBLAS: rel {:.2e}", cmp.rel_error);
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
