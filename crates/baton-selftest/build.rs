//! Builds baton's test and evidence kernels (`kernels/selftest`: smoke,
//! pipeline and tile-pipeline tests, the zero-cost pair, the hang kernel,
//! the sm_100a smoke kernels) into their own PTX modules with `baton-build`
//! and generates `$OUT_DIR/selftest_ptx.rs`, which embeds them:
//! `baton_selftest_sm90a.ptx`, `baton_selftest_sm90a_debug.ptx` (with their
//! `ptxas -v` reports when ptxas is present) and `baton_selftest_sm100a.ptx`.
//!
//! * `BATON_PTX_DIR=<dir>`: embed those files from `<dir>` instead of
//!   building (`tools/build-ptx.sh --out-dir <dir>` makes them);
//! * `BATON_SKIP_PTX=1`: embed nothing;
//! * device toolchain missing: embed nothing and warn with the command to
//!   run; loading then fails with `Error::PtxNotBuilt`.

use baton_build::{BuildError, KernelCrate, Target, Variant};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// The modules (file stems) and the constants that embed them.
const MODULES: [(&str, &str); 3] = [
    ("baton_selftest_sm90a", "RELEASE"),
    ("baton_selftest_sm90a_debug", "DEBUG"),
    ("baton_selftest_sm100a", "SM100A"),
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kernels = manifest.join("../../kernels/selftest");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for v in ["BATON_PTX_DIR", "BATON_SKIP_PTX"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    for (m, _) in MODULES {
        let _ = fs::remove_file(out.join(format!("{m}.ptx")));
        let _ = fs::remove_file(out.join(format!("{m}.ptxas.txt")));
    }
    let source = if env::var_os("BATON_SKIP_PTX").is_some_and(|v| v == "1") {
        "skipped (BATON_SKIP_PTX=1)".to_string()
    } else if let Some(dir) = env::var_os("BATON_PTX_DIR") {
        let dir = PathBuf::from(dir);
        for (m, _) in MODULES {
            for ext in ["ptx", "ptxas.txt"] {
                let f = dir.join(format!("{m}.{ext}"));
                println!("cargo:rerun-if-changed={}", f.display());
                if f.exists() {
                    fs::copy(&f, out.join(format!("{m}.{ext}"))).expect("copy prebuilt PTX");
                }
            }
        }
        format!("prebuilt from BATON_PTX_DIR={}", dir.display())
    } else {
        build(&kernels)
    };
    let mut generated = format!(
        "/// How the embedded test-kernel PTX was obtained.\npub const SOURCE: &str = {source:?};\n"
    );
    for (m, konst) in MODULES {
        generated.push_str(&baton_build::embed_optional_str(
            &out,
            &format!("{m}.ptx"),
            &format!("{konst}_PTX"),
        ));
        if konst != "SM100A" {
            generated.push_str(&baton_build::embed_optional_str(
                &out,
                &format!("{m}.ptxas.txt"),
                &format!("{konst}_PTXAS"),
            ));
        }
    }
    fs::write(out.join("selftest_ptx.rs"), generated).expect("write selftest_ptx.rs");
}

fn build(kernels: &Path) -> String {
    let sm90 = KernelCrate::new(kernels)
        .target(Target::Sm90a)
        .variant(Variant::Release)
        .variant(Variant::Debug)
        .output_name("baton_selftest")
        .build();
    let sm90 = match sm90 {
        Ok(b) => b,
        Err(BuildError::ToolchainMissing { what, install }) => {
            println!("cargo:warning=baton-selftest: device toolchain missing: {what}");
            println!(
                "cargo:warning=baton-selftest: no test-kernel PTX embedded (Error::PtxNotBuilt); run: {install}, then rebuild"
            );
            return format!("not built: device toolchain missing (run: {install})");
        }
        Err(e) => baton_build::fail(&format!(
            "{e}\n(fix the kernel build above, or set BATON_SKIP_PTX=1 to build the host side without kernels)"
        )),
    };
    if let Err(e) = KernelCrate::new(kernels)
        .target(Target::Sm100a)
        .feature("sm100")
        .output_name("baton_selftest")
        .build()
    {
        baton_build::fail(&format!("sm_100a test kernels: {e}"));
    }
    if sm90.toolchain.ptxas.is_some() {
        "built by baton-build, checked by ptxas".to_string()
    } else {
        "built by baton-build (no ptxas check)".to_string()
    }
}
