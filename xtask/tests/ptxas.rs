//! Runs ptxas on the embedded PTX (both modules: the GEMMs and the test
//! kernels): every kernel of `baton_runtime::KERNELS` and
//! `baton_selftest::kernels::KERNELS` must be in its module, and hot kernels must compile (release variant)
//! with no spills and no stack frame.
//!
//! Without the device toolchain or ptxas this test skips with a reason,
//! except under `CI=true`, where it fails: CI installs the toolchain
//! (`tools/install-device-toolchain.sh`), so a missing one is a CI bug.

use baton_runtime::{KernelInfo, Variant, ptx};

/// The production kernels (runtime module), then the test kernels (their own
/// module), each with the module's PTX of `variant`.
/// A kernel table and the function that gives its module's PTX.
type Table = (
    &'static [KernelInfo],
    fn(Variant) -> baton_runtime::Result<&'static str>,
);

fn tables() -> [Table; 2] {
    [
        (baton_runtime::KERNELS, ptx::get),
        (
            baton_selftest::kernels::KERNELS,
            baton_selftest::kernels::ptx,
        ),
    ]
}

fn all_kernels() -> impl Iterator<Item = &'static KernelInfo> {
    baton_runtime::KERNELS
        .iter()
        .chain(baton_selftest::kernels::KERNELS)
}
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
    let texts = match (ptx::get(variant), baton_selftest::kernels::ptx(variant)) {
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
    for (table, module) in tables() {
        let module = module(Variant::Release).unwrap();
        for k in table {
            assert!(
                ptx::entry_names(module).iter().any(|e| e == k.name),
                "kernel {} (in its KERNELS table) missing from that table's module",
                k.name
            );
        }
    }
    for e in &entries {
        assert!(
            all_kernels().any(|k| k.name == *e),
            "PTX kernel {e} is not listed in baton_runtime::KERNELS or baton_selftest::kernels::KERNELS"
        );
    }
    let mut bad = Vec::new();
    for hot in all_kernels().filter(|k| k.hot).map(|k| k.name) {
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
    for k in all_kernels() {
        assert!(
            reports.iter().any(|r| r.entry && r.kernel == k.name),
            "kernel {} missing from debug PTX",
            k.name
        );
    }
}
