//! `cargo xtask`: developer commands over the PTX embedded in
//! baton-runtime (built by its build script).
//!
//! ```text
//! cargo xtask ptxas [release|debug|sm100a]   ptxas -v report of every kernel (hot ones flagged)
//!                   [selftest|selftest-debug|selftest-sm100a]   the same for the test kernels' module
//! cargo xtask loops <kernel> [ptx|sass]      the kernel's loops and their sizes (sm_90a release;
//!                                            either module)
//! ```

use baton_runtime::{KERNELS, Variant, ptx};
use baton_selftest::kernels as selftest;
use std::process::ExitCode;
use xtask::codegen::{self, Dialect};
use xtask::ptxas;

const USAGE: &str = "usage: cargo xtask ptxas [release|debug|sm100a|selftest|selftest-debug|selftest-sm100a]\n       cargo xtask loops <kernel> [ptx|sass]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["ptxas"] => ptxas_report("release"),
        ["ptxas", which] => ptxas_report(which),
        ["loops", kernel] => loops(kernel, "ptx"),
        ["loops", kernel, dialect] => loops(kernel, dialect),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The embedded PTX of `which` and the arch ptxas assembles it for.
fn embedded(which: &str) -> Result<(&'static str, &'static str), String> {
    match which {
        "release" => Ok((
            ptx::get(Variant::Release).map_err(|e| e.to_string())?,
            "sm_90a",
        )),
        "debug" => Ok((
            ptx::get(Variant::Debug).map_err(|e| e.to_string())?,
            "sm_90a",
        )),
        "sm100a" => Ok((
            ptx::sm100a().ok_or("no sm_100a PTX embedded (tools/install-device-toolchain.sh)")?,
            "sm_100a",
        )),
        "selftest" => Ok((
            selftest::ptx(Variant::Release).map_err(|e| e.to_string())?,
            "sm_90a",
        )),
        "selftest-debug" => Ok((
            selftest::ptx(Variant::Debug).map_err(|e| e.to_string())?,
            "sm_90a",
        )),
        "selftest-sm100a" => Ok((
            selftest::sm100a()
                .ok_or("no sm_100a test-kernel PTX embedded (tools/install-device-toolchain.sh)")?,
            "sm_100a",
        )),
        other => Err(format!(
            "unknown build `{other}`: release, debug, sm100a, selftest, selftest-debug or selftest-sm100a\n{USAGE}"
        )),
    }
}

fn ptxas_report(which: &str) -> Result<(), String> {
    let (text, arch) = embedded(which)?;
    let bin = ptxas::find_ptxas().ok_or("ptxas not found ($PTXAS, .tools/cuda-nvcc, PATH)")?;
    let out = ptxas::run(&bin, text, arch).map_err(|e| e.to_string())?;
    let reports = ptxas::parse(&out).map_err(|e| e.to_string())?;
    println!(
        "{:<48} {:>5} {:>7} {:>7} {:>6} {:>7}",
        "kernel", "regs", "spill_st", "spill_ld", "stack", "smem"
    );
    for r in reports.iter().filter(|r| r.entry) {
        let hot = KERNELS
            .iter()
            .chain(selftest::KERNELS)
            .any(|k| k.hot && k.name == r.kernel);
        let flag = match (hot, r.is_clean()) {
            (true, false) => "  HOT: must not spill or use a stack",
            (true, true) => "  hot",
            _ => "",
        };
        println!(
            "{:<48} {:>5} {:>7} {:>7} {:>6} {:>7}{flag}",
            r.kernel, r.registers, r.spill_stores, r.spill_loads, r.stack_frame, r.smem
        );
    }
    Ok(())
}

fn loops(kernel: &str, dialect: &str) -> Result<(), String> {
    // The kernel's module: the production one, else the test kernels'.
    let (ptx_text, arch) = match embedded("release") {
        Ok((t, a)) if ptx::entry_names(t).iter().any(|e| e == kernel) => (t, a),
        _ => embedded("selftest")?,
    };
    let (text, dialect) = match dialect {
        "ptx" => (ptx_text.to_string(), Dialect::Ptx),
        "sass" => (
            codegen::sass_of(ptx_text, arch).map_err(|e| e.to_string())?,
            Dialect::Sass,
        ),
        other => return Err(format!("unknown dialect `{other}`: ptx or sass\n{USAGE}")),
    };
    let loops = codegen::kernel_loops(&text, kernel, dialect)
        .ok_or_else(|| format!("no kernel `{kernel}` in the {arch} PTX"))?;
    for l in loops {
        println!("{l:?}");
    }
    Ok(())
}
