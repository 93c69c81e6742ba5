//! Forgetting to release a linear pipeline stage is a *build error* on the
//! GPU: `kernels/compile-fail` is built once per misuse (a dropped
//! `ProducerStage`, a dropped `ConsumerStage`, an early `return` while
//! holding a stage) and ptxas must refuse each with
//! `Unresolved extern function 'baton_error__<Stage>_dropped_without_release'`;
//! the control build (no misuse) must assemble.
//!
//! Needs the device toolchain; skips with a reason without it, except under
//! `CI=true`, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use xtask::ptxas;

fn unavailable(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("CI=true but {reason}; CI must run tools/install-device-toolchain.sh first");
    }
    baton_runtime::report_skip(&format!("{reason} (run tools/install-device-toolchain.sh)"));
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Builds the compile-fail crate with `feature` (or none) and assembles it;
/// returns ptxas's verdict: Ok(()) or Err(its output).
fn build_and_assemble(ptxas_bin: &Path, feature: Option<&str>) -> Result<(), xtask::ToolError> {
    let root = root();
    let target = root.join("target/compile-fail");
    let mut cmd =
        Command::new(std::env::var("CARGO_DEVICE").unwrap_or_else(|_| "/usr/bin/cargo".into()));
    cmd.current_dir(root.join("kernels/compile-fail"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env(
            "RUSTC",
            std::env::var("RUSTC_DEVICE").unwrap_or_else(|_| "/usr/bin/rustc".into()),
        )
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "rustc",
            "--quiet",
            "--release",
            "-Zbuild-std=core",
            "--target",
            "nvptx64-nvidia-cuda",
        ]);
    if let Some(f) = feature {
        cmd.args(["--features", f]);
    }
    cmd.args([
        "--",
        "--emit=asm",
        "-C",
        "target-cpu=sm_90a",
        "-C",
        "linker=/bin/true",
    ]);
    let out = cmd.output().expect("run the device cargo");
    assert!(
        out.status.success(),
        "device build ({feature:?}) failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ptx_path = target.join("nvptx64-nvidia-cuda/release/deps/baton_compile_fail.s");
    let ptx = std::fs::read_to_string(&ptx_path).expect("PTX written by the build");
    let ptx = ptx.replacen(
        ".address_size 64\n",
        ".address_size 64\n.extern .shared .align 1024 .b8 baton_dynamic_smem[];\n",
        1,
    );
    ptxas::run(ptxas_bin, &ptx, "sm_90a").map(|_| ())
}

#[test]
fn forgotten_linear_stages_do_not_assemble() {
    if !Path::new(&std::env::var("RUSTC_DEVICE").unwrap_or_else(|_| "/usr/bin/rustc".into()))
        .exists()
    {
        return unavailable("the device rustc (/usr/bin/rustc from rustc-web) is missing");
    }
    let Some(ptxas_bin) = ptxas::find_ptxas() else {
        return unavailable("ptxas not found");
    };
    build_and_assemble(&ptxas_bin, None)
        .unwrap_or_else(|e| panic!("the control build must assemble:\n{e}"));
    for (feature, symbol) in [
        (
            "forget-producer-stage",
            "baton_error__ProducerStage_dropped_without_release",
        ),
        (
            "forget-consumer-stage",
            "baton_error__ConsumerStage_dropped_without_release",
        ),
        (
            "forget-on-early-return",
            "baton_error__ConsumerStage_dropped_without_release",
        ),
    ] {
        let err = build_and_assemble(&ptxas_bin, Some(feature)).expect_err(feature);
        let err = err.output().unwrap_or_else(|| panic!("{feature}: {err}"));
        assert!(
            err.contains(&format!("Unresolved extern function '{symbol}'")),
            "{feature}: unexpected ptxas output:\n{err}"
        );
        println!("{feature}: refused as expected ({symbol})");
    }
}
