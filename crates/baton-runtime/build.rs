//! Builds the device kernels (`kernels/`) into PTX with `tools/build-ptx.sh`
//! and generates `$OUT_DIR/baton_ptx.rs`, which embeds them.
//!
//! * `BATON_PTX_DIR=<dir>`: embed `<dir>/baton_sm90a.ptx` and
//!   `<dir>/baton_sm90a_debug.ptx` (and their `.ptxas.txt` reports if
//!   present) instead of building; `<dir>/baton_sm100a.ptx` too if present.
//!
//! The sm_100a PTX (`baton_sm100a.ptx`, Blackwell kernels) is embedded when
//! there is one, for the ptxas test; the runtime does not load it.
//! * `BATON_SKIP_PTX=1`: embed nothing.
//! * Device toolchain missing (`tools/build-ptx.sh` exits 3): embed nothing
//!   and warn; loading then fails with `Error::PtxNotBuilt`.
//! * Any other build failure of the kernels fails this build.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const VARIANTS: [&str; 2] = ["baton_sm90a", "baton_sm90a_debug"];
/// Built by `tools/build-ptx.sh` next to the variants; optional.
const SM100A: &str = "baton_sm100a";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest
        .join("../..")
        .canonicalize()
        .expect("repository root");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());

    for p in [
        "kernels/src",
        "kernels/Cargo.toml",
        "kernels/roles/src",
        "kernels/roles/Cargo.toml",
        "kernels/launch-bounds.txt",
        "crates/baton/src",
        "crates/baton/Cargo.toml",
        "tools/build-ptx.sh",
        "tools/env.sh",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    for v in [
        "BATON_PTX_DIR",
        "BATON_SKIP_PTX",
        "PTXAS",
        "RUSTC_DEVICE",
        "CARGO_DEVICE",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }

    // Remove stale outputs so that nothing from an earlier build is embedded.
    for v in VARIANTS.iter().chain(&[SM100A]) {
        let _ = fs::remove_file(out.join(format!("{v}.ptx")));
        let _ = fs::remove_file(out.join(format!("{v}.ptxas.txt")));
    }

    let source = if env::var_os("BATON_SKIP_PTX").is_some_and(|v| v == "1") {
        warn("BATON_SKIP_PTX=1: no PTX embedded; loading kernels will fail with PtxNotBuilt");
        "skipped (BATON_SKIP_PTX=1)".to_string()
    } else if let Some(dir) = env::var_os("BATON_PTX_DIR") {
        let dir = PathBuf::from(dir);
        for v in VARIANTS {
            let ptx = dir.join(format!("{v}.ptx"));
            println!("cargo:rerun-if-changed={}", ptx.display());
            if let Err(e) = fs::copy(&ptx, out.join(format!("{v}.ptx"))) {
                fail(&format!(
                    "BATON_PTX_DIR={}: cannot read {}: {e} (make the directory with tools/build-ptx.sh --check --out-dir DIR)",
                    dir.display(),
                    ptx.display()
                ));
            }
            let rep = dir.join(format!("{v}.ptxas.txt"));
            if rep.exists() {
                fs::copy(&rep, out.join(format!("{v}.ptxas.txt"))).expect("copy ptxas report");
            }
        }
        let sm100 = dir.join(format!("{SM100A}.ptx"));
        println!("cargo:rerun-if-changed={}", sm100.display());
        if sm100.exists() {
            fs::copy(&sm100, out.join(format!("{SM100A}.ptx"))).expect("copy sm_100a PTX");
        }
        format!("prebuilt from BATON_PTX_DIR={}", dir.display())
    } else {
        build_ptx(&root, &out)
    };

    let mut generated = String::new();
    generated.push_str(&format!(
        "/// How the embedded PTX was obtained.\npub const SOURCE: &str = {source:?};\n"
    ));
    for (v, konst) in VARIANTS.iter().zip(["RELEASE", "DEBUG"]) {
        generated.push_str(&embed(&out, &format!("{v}.ptx"), &format!("{konst}_PTX")));
        generated.push_str(&embed(
            &out,
            &format!("{v}.ptxas.txt"),
            &format!("{konst}_PTXAS"),
        ));
    }
    generated.push_str(&embed(&out, &format!("{SM100A}.ptx"), "SM100A_PTX"));
    fs::write(out.join("baton_ptx.rs"), generated).expect("write baton_ptx.rs");
}

fn embed(out: &Path, file: &str, konst: &str) -> String {
    if out.join(file).exists() {
        format!(
            "pub const {konst}: Option<&str> = Some(include_str!(concat!(env!(\"OUT_DIR\"), \"/{file}\")));\n"
        )
    } else {
        format!("pub const {konst}: Option<&str> = None;\n")
    }
}

/// Ends the build script with `msg` on stderr (cargo shows it), without a
/// panic backtrace in the way.
fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

fn warn(msg: &str) {
    println!("cargo:warning=baton-runtime: {msg}");
}

fn build_ptx(root: &Path, out: &Path) -> String {
    let script = root.join("tools/build-ptx.sh");
    let ptxas = env::var_os("PTXAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".tools/cuda-nvcc/nvidia/cu13/bin/ptxas"));
    // Re-check on every build while a tool is missing (a missing path is
    // always out of date), so installing it later takes effect.
    println!("cargo:rerun-if-changed={}", ptxas.display());
    println!("cargo:rerun-if-changed=/usr/bin/rustc");
    let mut cmd = Command::new("bash");
    cmd.arg(&script).arg("--out-dir").arg(out);
    if ptxas.exists() {
        cmd.arg("--check");
    }
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stderr = String::from_utf8_lossy(&res.stderr);
    match res.status.code() {
        Some(0) => {
            if ptxas.exists() {
                "built by tools/build-ptx.sh --check".to_string()
            } else {
                warn(
                    "ptxas not found: PTX built but not checked (run tools/install-device-toolchain.sh)",
                );
                "built by tools/build-ptx.sh (no ptxas check)".to_string()
            }
        }
        Some(3) => {
            for line in stderr.lines() {
                warn(line);
            }
            warn(
                "no PTX embedded: GPU kernels unavailable in this build (Error::PtxNotBuilt); run tools/install-device-toolchain.sh and rebuild",
            );
            "not built: device toolchain missing (run tools/install-device-toolchain.sh)"
                .to_string()
        }
        _ => fail(&format!(
            "tools/build-ptx.sh failed ({}):\n{}\n{}\n(fix the kernel build above, or set BATON_SKIP_PTX=1 to build the host side without kernels)",
            res.status,
            String::from_utf8_lossy(&res.stdout),
            stderr
        )),
    }
}
