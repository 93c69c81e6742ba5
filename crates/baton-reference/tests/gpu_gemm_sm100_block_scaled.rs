//! The sm_100a block-scaled GEMMs (MXFP8, NVFP4) through the host API
//! (`baton_runtime::gemm::block_scaled`), on a real B200/GB200, against the f64 reference
//! of the dequantized inputs (`block_scaled::reference_gemm`): random
//! inputs over a wide dynamic range, ragged shapes, beta, a NaN-poisoned D.
//!
//! **Never run so far**: no Blackwell GPU has been available. On a Hopper
//! GPU (or none) the GPU tests print `SKIPPED: needs sm_100a …` and
//! return. The same role programs run on the CPU simulation in
//! `kernels/roles/tests/cpu_gemm_sm100_block_scaled.rs`.
//!
//! (That the host's shared-memory sizes equal what the kernels demand in
//! the embedded PTX is checked without a GPU in `xtask/tests/kernel_layouts.rs`.)
//!
//! On sm_100a it also compares both kernels with cuBLASLt's block-scaled
//! GEMMs (`gemm_block_scaled_ref`: VEC32_UE8M0 / VEC16_UE4M3 scale modes) on
//! the same quantized operands at 2048³, and runs the benchmark path once.

use baton::block_scale::{Mxfp8, Nvfp4};
use baton_reference::gemm_block_scaled_check::reference_gemm;
#[cfg(feature = "cublas")]
use baton_reference::gemm_block_scaled_ref::{LtBlockScaledPlan, bench_shape, check_vs_cublaslt};
use baton_runtime::block_scaled::QuantizedMatrix;
use baton_runtime::gemm::GemmError;
use baton_runtime::gemm::block_scaled::{
    BlockScaledGemmFormat, BlockScaledGemmPlan, DeviceQuantized,
};
use baton_runtime::gemm::{bf16_to_f32, f32_to_bf16};
use baton_runtime::{Error, Gpu, Target, Variant};

fn random(n: usize, seed: u64, range: f32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Magnitude 2^[-6, 6) times a uniform in [-1, 1).
            let u = (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            let e = ((s >> 8) % 12) as i32 - 6;
            u * range * 2f32.powi(e)
        })
        .collect()
}

/// Runs one problem on the GPU and checks every element of D against the
/// f64 reference (bf16 output rounding plus f32 accumulation).
fn check<F: BlockScaledGemmFormat>(gpu: &Gpu, (m, n, k): (usize, usize, usize), beta: f32) {
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let seed = (m * 7919 + n * 31 + k) as u64;
    let qa = QuantizedMatrix::<F>::quantize(&random(m * k, seed, 4.0), m, k).unwrap();
    let qb = QuantizedMatrix::<F>::quantize(&random(n * k, seed ^ 0xabcd, 4.0), n, k).unwrap();
    let c: Vec<u16> = random(m * n, seed ^ 0x1234, 2.0)
        .iter()
        .map(|&x| f32_to_bf16(x))
        .collect();
    let stream = gpu.stream();
    let (a, b) = (
        DeviceQuantized::upload(gpu, &qa).unwrap(),
        DeviceQuantized::upload(gpu, &qb).unwrap(),
    );
    let c_d = stream.clone_htod(&c).unwrap();
    let mut d_d = stream.clone_htod(&vec![0x7fc0u16; m * n]).unwrap();
    let alpha = 0.75f32;
    BlockScaledGemmPlan::new(gpu, &kernels, &a, &b, Some(&c_d), &mut d_d)
        .and_then(|p| p.run(gpu, alpha, beta))
        .unwrap_or_else(|e| panic!("{e}"));
    gpu.synchronize().unwrap_or_else(|e| panic!("{e}"));
    let d = stream.clone_dtoh(&d_d).unwrap();
    let reference = reference_gemm(&qa, &qb).unwrap();
    let (da, db) = (qa.dequantize(), qb.dequantize());
    for i in 0..m {
        for j in 0..n {
            let r = alpha as f64 * reference[i * n + j]
                + beta as f64 * bf16_to_f32(c[i * n + j]) as f64;
            let mag: f64 = (0..k)
                .map(|kk| (da[i * k + kk] * db[j * k + kk]).abs())
                .sum();
            let got = bf16_to_f32(d[i * n + j]) as f64;
            let tol = r.abs() * 2f64.powi(-7) + alpha as f64 * mag * 2f64.powi(-18) + 1e-30;
            assert!(
                (got - r).abs() <= tol,
                "{} {m}x{n}x{k} beta {beta}: D[{i}][{j}] = {got}, reference {r}",
                F::NAME
            );
        }
    }
    println!(
        "{} {m}x{n}x{k} beta {beta}: every element within tolerance",
        F::NAME
    );
}

const SHAPES: [(usize, usize, usize); 4] = [
    (128, 128, 512),
    (200, 264, 160),
    (1, 8, 32),
    (520, 264, 1056),
];

#[test]
fn sm100_mxfp8_gemm_matches_f64_reference() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    for (i, shape) in SHAPES.into_iter().enumerate() {
        check::<Mxfp8>(&gpu, shape, if i % 2 == 0 { 0.0 } else { 0.5 });
    }
}

#[test]
fn sm100_nvfp4_gemm_matches_f64_reference() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    for (i, (m, n, k)) in SHAPES.into_iter().enumerate() {
        // NVFP4 rows are K / 2 bytes: K a multiple of 32 (16-byte pitch).
        check::<Nvfp4>(
            &gpu,
            (m, n, k.next_multiple_of(32)),
            if i % 2 == 0 { 0.5 } else { 0.0 },
        );
    }
}

/// On a GPU that is not sm_100a the plan is a typed error, not a launch of
/// a kernel the loaded module does not have.
#[test]
fn block_scaled_plan_is_refused_off_sm100a() {
    let gpu = match Gpu::new(0) {
        Ok(g) if g.target() != Target::Sm100a => g,
        Ok(_) => {
            baton_runtime::report_skip("this GPU is sm_100a: the refusal does not apply");
            return;
        }
        Err(e) => {
            baton_runtime::report_skip(&format!("no usable CUDA GPU ({e})"));
            return;
        }
    };
    let kernels = gpu.load_kernels(Variant::Release).unwrap();
    let q = QuantizedMatrix::<Mxfp8>::quantize(&[1.0; 128 * 32], 128, 32).unwrap();
    let (a, b) = (
        DeviceQuantized::upload(&gpu, &q).unwrap(),
        DeviceQuantized::upload(&gpu, &q).unwrap(),
    );
    let mut d = gpu.stream().alloc_zeros::<u16>(128 * 128).unwrap();
    match BlockScaledGemmPlan::new(&gpu, &kernels, &a, &b, None, &mut d) {
        Err(Error::Gemm(e @ GemmError::WrongTarget { runs_on, .. })) => {
            assert_eq!(runs_on, Target::Sm100a);
            assert!(e.to_string().contains("sm_100a"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a block-scaled plan was accepted on {}", gpu.name()),
    }
}

/// Ours against cuBLASLt's block-scaled GEMM on the same quantized operands
/// (relative Frobenius difference of the bf16 outputs), then the benchmark
/// path once at a small shape.
#[cfg(feature = "cublas")]
#[test]
fn sm100_block_scaled_gemms_match_cublaslt() {
    let Some(gpu) = Gpu::for_test_on(Target::Sm100a) else {
        return;
    };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let mnk = (2048, 2048, 2048);
    for (name, cmp) in [
        ("mxfp8", check_vs_cublaslt::<Mxfp8>(&gpu, &kernels, mnk)),
        ("nvfp4", check_vs_cublaslt::<Nvfp4>(&gpu, &kernels, mnk)),
    ] {
        let cmp = cmp.unwrap_or_else(|e| panic!("{name} 2048^3 vs cuBLASLt: {e}"));
        println!(
            "{name} 2048^3 vs cuBLASLt: rel diff {:.2e}, max abs {:.2e}",
            cmp.rel_error, cmp.max_abs_error
        );
        assert!(cmp.passes(1e-2), "{name} 2048^3 vs cuBLASLt: {cmp:?}");
    }
    for row in [
        bench_shape::<Mxfp8>(&gpu, &kernels, (512, 512, 1024), 2, || {}),
        bench_shape::<Nvfp4>(&gpu, &kernels, (512, 512, 1024), 2, || {}),
    ] {
        let r = row.unwrap_or_else(|e| panic!("bench: {e}"));
        println!(
            "{} 512x512x1024: ours {:.4} ms, cuBLASLt {:.4} ms",
            r.format, r.ours_ms, r.cublaslt_ms
        );
        assert!(r.ours_ms > 0.0 && r.cublaslt_ms > 0.0, "{r:?}");
    }
}

/// On a GPU that is not sm_100a the cuBLASLt reference is a typed error
/// that names the target, raised before cuBLASLt is asked.
#[cfg(feature = "cublas")]
#[test]
fn cublaslt_block_scaled_reference_is_refused_off_sm100a() {
    let gpu = match Gpu::new(0) {
        Ok(g) if g.target() != Target::Sm100a => g,
        Ok(_) => {
            baton_runtime::report_skip("this GPU is sm_100a: the refusal does not apply");
            return;
        }
        Err(e) => {
            baton_runtime::report_skip(&format!("no usable CUDA GPU ({e})"));
            return;
        }
    };
    let q = QuantizedMatrix::<Nvfp4>::quantize(&[1.0; 128 * 128], 128, 128).unwrap();
    let (a, b) = (
        DeviceQuantized::upload(&gpu, &q).unwrap(),
        DeviceQuantized::upload(&gpu, &q).unwrap(),
    );
    let mut d = gpu.stream().alloc_zeros::<u16>(128 * 128).unwrap();
    match LtBlockScaledPlan::new(&gpu, &a, &b, &mut d) {
        Err(baton_reference::Error::Runtime(Error::Gemm(
            e @ GemmError::WrongTarget { runs_on, .. },
        ))) => {
            assert_eq!(runs_on, Target::Sm100a);
            assert!(e.to_string().contains("sm_100a"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a cuBLASLt block-scaled plan was made on {}", gpu.name()),
    }
}

/// The driver accepts the tensor maps the plan encodes for each format
/// (elements: u8, 128-byte swizzle; scale factors: the 3-D view of whole
/// SF atoms), on any GPU: `cuTensorMapEncodeTiled` does not depend on the
/// architecture, so a Hopper GPU checks what a Blackwell plan will encode.
#[test]
fn block_scaled_tensor_maps_are_accepted_by_the_driver() {
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            baton_runtime::report_skip(&format!("no usable CUDA GPU ({e})"));
            return;
        }
    };
    fn maps<F: BlockScaledGemmFormat>(gpu: &Gpu, rows: usize, k: usize) {
        let x = random(rows * k, 7, 1.0);
        let q = QuantizedMatrix::<F>::quantize(&x, rows, k).unwrap();
        let dq = DeviceQuantized::upload(gpu, &q).unwrap_or_else(|e| panic!("{e}"));
        let stream = gpu.stream();
        use cudarc::driver::DevicePtr;
        let (dp, sp) = {
            let (d, _s1) = dq.data().device_ptr(stream);
            let (s, _s2) = dq.sf().device_ptr(stream);
            (d, s)
        };
        for (what, desc) in [
            ("data", q.data_map("data", dp, 128, F::BK).unwrap()),
            ("sf", q.sf_map("sf", sp, 128, F::BK).unwrap()),
        ] {
            baton_runtime::tensor_map::encode(&desc)
                .unwrap_or_else(|e| panic!("{} {rows}x{k} {what}: {e}", F::NAME));
        }
        println!("{} {rows}x{k}: element and SF maps encoded", F::NAME);
    }
    for (rows, k) in [(128, 128), (200, 160), (1, 32), (520, 1056)] {
        maps::<Mxfp8>(&gpu, rows, k);
        maps::<Nvfp4>(&gpu, rows, k.next_multiple_of(32));
    }
}
