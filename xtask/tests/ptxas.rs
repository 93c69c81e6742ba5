//! Runs ptxas on the embedded PTX (both modules: the GEMMs and the test
//! kernels): every kernel of `baton_runtime::KERNELS` must be in them, in
//! the module the table says, and hot kernels must compile (release variant)
//! with no spills and no stack frame.
//!
//! Without the device toolchain or ptxas this test skips with a reason,
//! except under `CI=true`, where it fails: CI installs the toolchain
//! (`tools/install-device-toolchain.sh`), so a missing one is a CI bug.

use baton_runtime::{KERNELS, Variant, hot_kernels, ptx};
use xtask::ptxas;

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

/// The ptxas reports of both modules of `variant` (production GEMMs, then
/// the test kernels of `kernels/selftest`).
fn reports(variant: Variant) -> Option<Vec<ptxas::PtxasReport>> {
    let texts = match (ptx::get(variant), ptx::selftest(variant)) {
        (Ok(t), Ok(s)) => [t, s],
        (Err(e), _) | (_, Err(e)) => {
            unavailable(&format!("no PTX embedded in this build: {e}"));
            return None;
        }
    };
    let Some(ptxas_bin) = ptxas::find_ptxas() else {
        unavailable("ptxas not found ($PTXAS, .tools/cuda-nvcc, PATH)");
        return None;
    };
    let mut all = Vec::new();
    for text in texts {
        let out = ptxas::run(&ptxas_bin, text, "sm_90a")
            .unwrap_or_else(|e| panic!("{variant} PTX rejected: {e}"));
        let r = ptxas::parse(&out).unwrap_or_else(|e| panic!("{e}\nfull output:\n{out}"));
        println!("{variant}: ptxas -v:\n{out}");
        all.extend(r);
    }
    Some(all)
}

#[test]
fn hot_kernels_do_not_spill_or_use_a_stack() {
    let Some(reports) = reports(Variant::Release) else {
        return;
    };
    let entries: Vec<&str> = reports
        .iter()
        .filter(|r| r.entry)
        .map(|r| r.kernel.as_str())
        .collect();
    assert!(
        entries.contains(&"baton_smoke_mbarrier"),
        "smoke kernel missing from ptxas report: {entries:?}"
    );
    for k in KERNELS {
        assert!(
            entries.contains(&k.name),
            "kernel {} (in KERNELS) missing from the PTX: {entries:?}",
            k.name
        );
        let module = k.module_ptx(Variant::Release).unwrap();
        assert!(
            ptx::entry_names(module).iter().any(|e| e == k.name),
            "kernel {} is not in the module KERNELS says (selftest: {})",
            k.name,
            k.selftest
        );
    }
    for e in &entries {
        assert!(
            KERNELS.iter().any(|k| k.name == *e),
            "PTX kernel {e} is not listed in baton_runtime::KERNELS"
        );
    }
    let mut bad = Vec::new();
    for hot in hot_kernels() {
        let r = reports
            .iter()
            .find(|r| r.kernel == hot && r.entry)
            .expect("checked above");
        if !r.is_clean() {
            bad.push(format!(
                "{hot}: {} B spill stores, {} B spill loads, {} B stack frame ({} registers)",
                r.spill_stores, r.spill_loads, r.stack_frame, r.registers
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "hot kernels must not spill or use a stack frame:\n{}",
        bad.join("\n")
    );
}

#[test]
fn debug_variant_assembles_with_every_kernel() {
    let Some(reports) = reports(Variant::Debug) else {
        return;
    };
    for k in KERNELS {
        assert!(
            reports.iter().any(|r| r.entry && r.kernel == k.name),
            "kernel {} missing from debug PTX",
            k.name
        );
    }
}
