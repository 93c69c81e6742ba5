//! Runs `ptxas -arch=sm_100a` on the embedded sm_100a PTX
//! (`baton_sm100a.ptx` and `baton_selftest_sm100a.ptx`, built by baton-build): the Blackwell
//! (`tcgen05`) kernels must be in it and compile with no spills and no stack
//! frame. No Blackwell GPU runs them; this is the check that they assemble.
//!
//! Without the device toolchain or ptxas this test skips with a reason,
//! except under `CI=true`, where it fails (as `tests/ptxas.rs`).

use baton_runtime::{Variant, ptx};
use xtask::ptxas;

/// The sm_100a kernels (`kernels/selftest/src/sm100_smoke.rs`, `kernels/src/gemm_sm100.rs`).
const SM100_KERNELS: [&str; 8] = [
    "baton_sm100_gemm_bf16",
    "baton_sm100_gemm_mxfp8",
    "baton_sm100_gemm_nvfp4",
    "baton_sm100_smoke",
    "baton_sm100_commit_pair",
    "baton_sm100_pair_mma",
    "baton_sm100_block_scaled",
    "baton_sm100_block_scaled_pair",
];

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Skips (prints why) outside CI; fails in CI.
fn unavailable(reason: &str) {
    if in_ci() {
        panic!(
            "CI=true but {reason}; CI must run tools/install-device-toolchain.sh before the tests"
        );
    }
    baton_runtime::report_skip(&format!(
        "{reason} (run tools/install-device-toolchain.sh, then rebuild)"
    ));
}

#[test]
fn sm100_kernels_assemble_without_spills_or_stack() {
    // The GEMMs' module and the test kernels' module (tcgen05 smoke kernels).
    let (Some(gemms), Some(selftest)) = (ptx::sm100a(), baton_selftest::kernels::sm100a()) else {
        unavailable("no sm_100a PTX embedded in this build");
        return;
    };
    let Some(ptxas_bin) = ptxas::find_ptxas() else {
        unavailable("ptxas not found ($PTXAS, .tools/cuda-nvcc, PATH)");
        return;
    };
    let mut reports = Vec::new();
    for text in [gemms, selftest] {
        let out = ptxas::run(&ptxas_bin, text, "sm_100a")
            .unwrap_or_else(|e| panic!("sm_100a PTX rejected: {e}"));
        println!("sm_100a: ptxas -v:\n{out}");
        reports.extend(ptxas::parse(&out).unwrap_or_else(|e| panic!("{e}\nfull output:\n{out}")));
    }
    let text = format!("{gemms}\n{selftest}");
    let mut bad = Vec::new();
    for k in SM100_KERNELS {
        let Some(r) = reports.iter().find(|r| r.entry && r.kernel == k) else {
            panic!("sm_100a kernel {k} missing from the ptxas report");
        };
        if !r.is_clean() {
            bad.push(format!(
                "{k}: {} B spill stores, {} B spill loads, {} B stack frame ({} registers)",
                r.spill_stores, r.spill_loads, r.stack_frame, r.registers
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "sm_100a kernels must not spill or use a stack frame:\n{}",
        bad.join("\n")
    );
    for mma in [
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.mma.cta_group::2.kind::f16",
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale",
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale",
        "tcgen05.cp.cta_group::1.32x128b.warpx4",
    ] {
        assert!(text.contains(mma), "the sm_100a PTX has no {mma}");
    }
}

#[test]
fn sm90a_ptx_has_no_sm100_kernels() {
    // The sm_100a kernels are behind the kernels crate's `sm100` feature;
    // ptxas for sm_90a rejects `tcgen05`, so they must not leak in.
    for (variant, text) in [Variant::Release, Variant::Debug]
        .into_iter()
        .flat_map(|v| [(v, ptx::get(v)), (v, baton_selftest::kernels::ptx(v))])
    {
        let Ok(text) = text else {
            unavailable(&format!("no {variant} PTX embedded in this build"));
            return;
        };
        assert!(!text.contains("tcgen05"), "{variant} PTX contains tcgen05");
        for k in SM100_KERNELS {
            assert!(
                !ptx::entry_names(text).iter().any(|e| e == k),
                "{variant} PTX contains the sm_100a kernel {k}"
            );
        }
    }
}
