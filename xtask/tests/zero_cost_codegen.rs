//! Zero cost, checked in the generated code: the steady-state loops of the
//! handoff kernel written with `baton::pipeline`
//! (`baton_bench_handoff_pipeline`) and of the same kernel written with raw
//! `mbarrier` PTX (`baton_bench_handoff_handwritten`) must have the same
//! shape, and each pipeline loop at most 2 more instructions per iteration
//! than its hand-written twin — in the PTX, and in the SASS that ptxas makes
//! of it (read with nvdisasm).
//!
//! Without the device toolchain (PTX not built, ptxas or nvdisasm missing)
//! this test skips with a reason, except under `CI=true`, where it fails.

use baton_runtime::Variant;
use xtask::codegen::{Dialect, kernel_loops, sass_of};

const OURS: &str = "baton_bench_handoff_pipeline";
const HAND: &str = "baton_bench_handoff_handwritten";
const ALLOWED_EXTRA: usize = 2;

fn unavailable(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("CI=true but {reason}; CI must run tools/install-device-toolchain.sh first");
    }
    baton_runtime::report_skip(&format!(
        "{reason} (run tools/install-device-toolchain.sh, then rebuild)"
    ));
}

fn compare(text: &str, dialect: Dialect) {
    let loops = |k| {
        kernel_loops(text, k, dialect).unwrap_or_else(|| panic!("{k} missing from the {dialect:?}"))
    };
    let (ours, hand) = (loops(OURS), loops(HAND));
    let sizes =
        |l: &[xtask::codegen::LoopInfo]| l.iter().map(|l| l.instructions).collect::<Vec<_>>();
    println!(
        "{dialect:?} loops, instructions per iteration:\n  pipeline API: {:?}\n  hand-written: {:?}",
        sizes(&ours),
        sizes(&hand)
    );
    assert!(
        !ours.is_empty(),
        "no loops found in {OURS}: the analysis is broken"
    );
    assert_eq!(
        ours.len(),
        hand.len(),
        "{dialect:?}: different loop structure"
    );
    for (o, h) in ours.iter().zip(&hand) {
        assert!(
            o.instructions <= h.instructions + ALLOWED_EXTRA,
            "{dialect:?}: pipeline loop {} has {} instructions/iteration, hand-written {} has {}",
            o.label,
            o.instructions,
            h.label,
            h.instructions
        );
    }
}

#[test]
fn pipeline_loops_match_handwritten_in_ptx() {
    match baton_selftest::kernels::ptx(Variant::Release) {
        Ok(text) => compare(text, Dialect::Ptx),
        Err(e) => unavailable(&format!("no PTX embedded: {e}")),
    }
}

#[test]
fn pipeline_loops_match_handwritten_in_sass() {
    let text = match baton_selftest::kernels::ptx(Variant::Release) {
        Ok(t) => t,
        Err(e) => return unavailable(&format!("no PTX embedded: {e}")),
    };
    match sass_of(text, "sm_90a") {
        Ok(sass) => compare(&sass, Dialect::Sass),
        Err(e) => unavailable(&e.to_string()),
    }
}
