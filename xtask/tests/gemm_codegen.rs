//! Evidence of a fast GEMM, read from the SASS in CI (no GPU needed): every
//! GEMM configuration's kernel issues `HGMMA` (the Hopper warpgroup tensor
//! core instruction; a kernel showing only `HMMA` or `FFMA` would be on a
//! slower path) in whole K blocks (4 per 64-wide K block), and it touches no
//! local memory (`LDL`/`STL`: an accumulator array
//! spilled or indexed at run time). Skips without the device toolchain,
//! except under `CI=true`, where it fails.

use baton_runtime::gemm::GemmConfig;
use baton_runtime::{Variant, ptx};
use xtask::codegen::{Dialect, kernel_body, kernel_loops, sass_of};

fn unavailable(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("CI=true but {reason}; CI must run tools/install-device-toolchain.sh first");
    }
    baton_runtime::report_skip(reason);
}

#[test]
fn gemm_kernels_use_hgmma_and_no_local_memory() {
    let text = match ptx::get(Variant::Release) {
        Ok(t) => t,
        Err(e) => return unavailable(&format!("no PTX embedded: {e}")),
    };
    let sass = match sass_of(text, "sm_90a") {
        Ok(s) => s,
        Err(e) => return unavailable(&e.to_string()),
    };
    for config in GemmConfig::SM90 {
        let name = config.kernel();
        let body = kernel_body(&sass, name, Dialect::Sass)
            .unwrap_or_else(|| panic!("{name} missing from the SASS"));
        let count = |op: &str| body.lines().filter(|l| l.contains(op)).count();
        let (hgmma, ldl, stl) = (count(" HGMMA."), count(" LDL"), count(" STL"));
        println!("{name}: {hgmma} HGMMA, {ldl} LDL, {stl} STL");
        assert!(hgmma >= 4, "{name}: no HGMMA in the SASS");
        assert_eq!((ldl, stl), (0, 0), "{name}: local memory traffic");
        // A K block is 4 wgmma (K = 16 each); the main loop is peeled once,
        // so the kernel holds whole multiples of 4.
        assert_eq!(hgmma % 4, 0, "{name}: {hgmma} HGMMA is not whole K blocks");
        let loops = kernel_loops(&sass, name, Dialect::Sass).unwrap();
        assert!(!loops.is_empty(), "{name}: no loops found");
    }
}
