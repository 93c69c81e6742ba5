//! Builds baton's device kernels into PTX with `baton-build` and generates
//! `$OUT_DIR/baton_ptx.rs`, which embeds them:
//!
//! * `baton_sm90a.ptx` (release) and `baton_sm90a_debug.ptx` (debug
//!   assertions: bounded waits that report the hung pipeline), with their
//!   `ptxas -v` reports when ptxas is present, from `kernels/` (the GEMMs);
//! * `baton_sm100a.ptx` (Blackwell; the kernels crate's `sm100` feature).
//!
//! The test kernels (`kernels/selftest`) are built and embedded by
//! `baton-selftest`, not here.
//!
//! Launch bounds, the dynamic shared-memory declaration and the hot-kernel
//! rule (no spills, no stack) come from the kernels' `KernelSpec`s.
//!
//! * `BATON_PTX_DIR=<dir>`: embed `<dir>/baton_sm90a.ptx` and
//!   `<dir>/baton_sm90a_debug.ptx` (and their `.ptxas.txt` reports if
//!   present) instead of building; `<dir>/baton_sm100a.ptx` too if present.
//! * `BATON_TRACE=1`: build the sm_90a kernels with their `trace` feature
//!   (timeline stamps, `baton_kernel_roles::trace`) for `baton trace gemm`;
//!   a profiling build, not for production (use its own target directory;
//!   the hot-kernel spill rule is off there: stamps spill in the kernels at
//!   their register limit, listed in the ptxas report).
//! * `BATON_SKIP_PTX=1`, or the `gemm-kernels` feature off: embed nothing
//!   (`load_kernels` then fails with `Error::PtxNotBuilt` naming why).
//! * Device toolchain missing: embed nothing and warn with the command to
//!   run; loading then fails with `Error::PtxNotBuilt`.
//! * Any other build failure of the kernels fails this build.

use baton_build::{BuildError, KernelCrate, Target, Variant};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// The modules (file stems) and the constants that embed them.
const VARIANTS: [(&str, &str); 2] = [("baton_sm90a", "RELEASE"), ("baton_sm90a_debug", "DEBUG")];
/// The sm_100a module; optional.
const SM100A: [(&str, &str); 1] = [("baton_sm100a", "SM100A")];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest
        .join("../..")
        .canonicalize()
        .expect("repository root");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for v in ["BATON_PTX_DIR", "BATON_SKIP_PTX", "BATON_TRACE"] {
        println!("cargo:rerun-if-env-changed={v}");
    }

    // Remove stale outputs so that nothing from an earlier build is embedded.
    for (v, _) in VARIANTS.iter().chain(&SM100A) {
        let _ = fs::remove_file(out.join(format!("{v}.ptx")));
        let _ = fs::remove_file(out.join(format!("{v}.ptxas.txt")));
    }

    let source = if env::var_os("CARGO_FEATURE_GEMM_KERNELS").is_none() {
        "not built: baton-runtime's `gemm-kernels` feature is off".to_string()
    } else if env::var_os("BATON_SKIP_PTX").is_some_and(|v| v == "1") {
        warn("BATON_SKIP_PTX=1: no PTX embedded; loading kernels will fail with PtxNotBuilt");
        "skipped (BATON_SKIP_PTX=1)".to_string()
    } else if let Some(dir) = env::var_os("BATON_PTX_DIR") {
        copy_prebuilt(&PathBuf::from(dir), &out)
    } else {
        build(&root.join("kernels"), "baton")
    };

    let mut generated = String::new();
    generated.push_str(&format!(
        "/// How the embedded PTX was obtained.\npub const SOURCE: &str = {source:?};\n"
    ));
    for (v, konst) in VARIANTS {
        generated.push_str(&baton_build::embed_optional_str(
            &out,
            &format!("{v}.ptx"),
            &format!("{konst}_PTX"),
        ));
        generated.push_str(&baton_build::embed_optional_str(
            &out,
            &format!("{v}.ptxas.txt"),
            &format!("{konst}_PTXAS"),
        ));
    }
    for (v, konst) in SM100A {
        generated.push_str(&baton_build::embed_optional_str(
            &out,
            &format!("{v}.ptx"),
            &format!("{konst}_PTX"),
        ));
    }
    fs::write(out.join("baton_ptx.rs"), generated).expect("write baton_ptx.rs");
}

/// Builds the kernel crate at `kernels` for sm_90a (release + debug) and
/// sm_100a into `OUT_DIR` as `<name>_sm90a[_debug].ptx`, `<name>_sm100a.ptx`.
fn build(kernels: &Path, name: &str) -> String {
    let traced = env::var_os("BATON_TRACE").is_some_and(|v| v == "1");
    let mut sm90 = KernelCrate::new(kernels)
        .target(Target::Sm90a)
        .variant(Variant::Release)
        .variant(Variant::Debug)
        .output_name(name);
    if traced {
        warn(
            "BATON_TRACE=1: the sm_90a kernels carry timeline stamps (a profiling build; the hot-kernel \
             spill rule is off: see the ptxas report)",
        );
        sm90 = sm90.feature("trace").hot_rule(false);
    }
    let sm90 = sm90.build();
    let sm90 = match sm90 {
        Ok(b) => b,
        Err(BuildError::ToolchainMissing { what, install }) => {
            warn(&format!("device toolchain missing: {what}"));
            warn(&format!(
                "no PTX embedded: GPU kernels unavailable in this build (Error::PtxNotBuilt); run: {install}, then rebuild"
            ));
            return format!("not built: device toolchain missing (run: {install})");
        }
        Err(e) => baton_build::fail(&format!(
            "{e}\n(fix the kernel build above, or set BATON_SKIP_PTX=1 to build the host side without kernels)"
        )),
    };
    if let Err(e) = KernelCrate::new(kernels)
        .target(Target::Sm100a)
        .feature("sm100")
        .output_name(name)
        .build()
    {
        baton_build::fail(&format!("sm_100a kernels ({name}): {e}"));
    }
    let checked = if sm90.toolchain.ptxas.is_some() {
        "built by baton-build, checked by ptxas"
    } else {
        "built by baton-build (no ptxas check)"
    };
    if traced {
        format!("{checked}, traced (BATON_TRACE=1)")
    } else {
        checked.to_string()
    }
}

fn copy_prebuilt(dir: &Path, out: &Path) -> String {
    for (v, _) in VARIANTS {
        let ptx = dir.join(format!("{v}.ptx"));
        println!("cargo:rerun-if-changed={}", ptx.display());
        if let Err(e) = fs::copy(&ptx, out.join(format!("{v}.ptx"))) {
            baton_build::fail(&format!(
                "BATON_PTX_DIR={}: cannot read {}: {e} (make the directory with tools/build-ptx.sh --out-dir DIR)",
                dir.display(),
                ptx.display()
            ));
        }
        let rep = dir.join(format!("{v}.ptxas.txt"));
        if rep.exists() {
            fs::copy(&rep, out.join(format!("{v}.ptxas.txt"))).expect("copy ptxas report");
        }
    }
    for (v, _) in SM100A {
        let sm100 = dir.join(format!("{v}.ptx"));
        println!("cargo:rerun-if-changed={}", sm100.display());
        if sm100.exists() {
            fs::copy(&sm100, out.join(format!("{v}.ptx"))).expect("copy sm_100a PTX");
        }
    }
    format!("prebuilt from BATON_PTX_DIR={}", dir.display())
}

fn warn(msg: &str) {
    println!("cargo:warning=baton-runtime: {msg}");
}
