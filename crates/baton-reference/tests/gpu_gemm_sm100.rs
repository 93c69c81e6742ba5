//! The Blackwell (sm_100a) BF16 GEMM on a real B200/GB200: against an f64
//! CPU reference at small and ragged shapes, and against cuBLAS at 2048³;
//! fresh random inputs, poisoned outputs, NaN never passes.
//!
//! **Never run so far**: no Blackwell GPU has been available. On a Hopper
//! GPU (or none) each test prints `SKIPPED: needs sm_100a …` and returns;
//! the GPU suite (`tools/gpu-suite.sh`) counts it as a skip. The same role
//! programs run on the CPU simulation in `kernels/roles/tests/`.

use baton_reference::gemm_check;
#[cfg(feature = "cublas")]
use baton_reference::gemm_cublas::check_vs_cublas;
use baton_runtime::gemm::GemmError;
use baton_runtime::gemm::{GemmConfig, GemmPlan};
use baton_runtime::{Error, Gpu, Target, Variant};

#[test]
fn sm100_gemm_matches_f64_reference_on_ragged_shapes() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    gemm_check::assert_ragged_shapes_match_f64(&gpu, &kernels, &GemmConfig::SM100);
}

#[cfg(feature = "cublas")]
#[test]
fn sm100_gemm_matches_cublas_at_2048() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    for beta in [0.0f32, 0.5] {
        // `None`: the heuristic, which picks the sm_100a kernel on this GPU.
        let cmp = check_vs_cublas(&gpu, &kernels, None, (2048, 2048, 2048), 1.0, beta)
            .unwrap_or_else(|e| panic!("{e}"));
        println!(
            "sm100 2048^3 beta {beta} vs cuBLAS: rel {:.2e}",
            cmp.rel_error
        );
        assert!(cmp.passes(1e-2), "{cmp:?}");
    }
}

/// A Hopper configuration on a Blackwell GPU (or the reverse) is a typed
/// error, not a launch of a kernel the module does not have.
#[test]
fn configuration_for_another_target_is_refused() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    let kernels = gpu.load_kernels(Variant::Release).unwrap();
    let s = gpu.stream();
    let a = s.alloc_zeros::<u16>(128 * 64).unwrap();
    let b = s.alloc_zeros::<u16>(256 * 64).unwrap();
    let mut d = s.alloc_zeros::<u16>(128 * 256).unwrap();
    match GemmPlan::with_config(
        &gpu,
        &kernels,
        GemmConfig::T128x256,
        &a,
        &b,
        None,
        &mut d,
        128,
        256,
        64,
    ) {
        Err(Error::Gemm(
            e @ GemmError::WrongTarget {
                runs_on, gpu: on, ..
            },
        )) => {
            assert_eq!((runs_on, on), (Target::Sm90a, Target::Sm100a));
            assert!(e.to_string().contains("sm_90a"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a Hopper configuration was accepted on {}", gpu.name()),
    }
}
