//! Builds `tests/fixture-kernel` (two kernels declared with `baton::kernel!`)
//! with baton-build and checks the PTX it writes. Needs the device toolchain:
//! without it the test prints `SKIPPED: …`, and under `CI=true` (where
//! `tools/install-device-toolchain.sh` ran) a missing toolchain fails.

use baton_build::{KernelCrate, Target, Toolchain, Variant};
use std::path::PathBuf;

fn skip_or_fail(reason: &str) {
    if std::env::var_os("CI").is_some_and(|v| v == "true") {
        panic!("CI=true but {reason}; CI must run tools/install-device-toolchain.sh first");
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
}

#[test]
fn fixture_kernel_crate_builds_with_specs_applied() {
    let tc = match Toolchain::find() {
        Ok(t) => t,
        Err(e) => return skip_or_fail(&e.to_string()),
    };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let out = tmp.join("fixture-out");
    let _ = std::fs::remove_dir_all(&out);
    let built = KernelCrate::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixture-kernel"))
        .target(Target::Sm90a)
        .variant(Variant::Release)
        .out_dir(&out)
        .target_dir(tmp.join("fixture-target"))
        .cargo_directives(false)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.modules.len(), 1);
    let m = &built.modules[0];
    assert_eq!(m.path, out.join("baton_build_fixture_sm90a.ptx"));
    let ptx = std::fs::read_to_string(&m.path).unwrap();

    // The specs came through the PTX, with the fixture's values.
    let names: Vec<&str> = m.specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let axpb = m.specs.iter().find(|s| s.name == "fixture_axpb").unwrap();
    assert_eq!(
        (axpb.threads, axpb.cluster, axpb.min_blocks_per_sm),
        (128, [1, 1, 1], 1)
    );
    assert_eq!(
        (axpb.dynamic_smem_bytes, axpb.hot, axpb.param_bytes),
        (0, true, 32)
    );
    let rev = m
        .specs
        .iter()
        .find(|s| s.name == "fixture_reverse")
        .unwrap();
    assert_eq!(
        (rev.threads, rev.cluster, rev.min_blocks_per_sm),
        (256, [2, 1, 1], 2)
    );
    assert_eq!(
        (rev.dynamic_smem_bytes, rev.hot, rev.param_bytes),
        (1024, false, 16)
    );
    assert!(
        m.entries_without_spec.is_empty(),
        "{:?}",
        m.entries_without_spec
    );

    // Records stripped; declaration and bounds present; one struct parameter each.
    assert!(
        !ptx.contains("__baton_spec_"),
        "spec records left in the PTX"
    );
    assert_eq!(
        ptx.matches(".extern .shared .align 1024 .b8 baton_dynamic_smem[];")
            .count(),
        1
    );
    assert!(ptx.contains(".version 8.0\n"), "PTX ISA not pinned to 8.0");
    assert!(
        ptx.contains("fixture_axpb_param_0[32]\n)\n.maxntid 128, 1, 1\n.minnctapersm 1\n{"),
        "{ptx}"
    );
    assert!(
        ptx.contains("fixture_reverse_param_0[16]\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{"),
        "{ptx}"
    );

    match &tc.ptxas {
        Some(_) => {
            let report = std::fs::read_to_string(m.ptxas_report.as_ref().unwrap()).unwrap();
            assert!(
                report.contains("Compiling entry function 'fixture_axpb'"),
                "{report}"
            );
            assert_eq!(m.resources.len(), 2, "{:?}", m.resources);
            assert!(
                m.resources.iter().all(|r| r.registers > 0),
                "{:?}",
                m.resources
            );
        }
        None => skip_or_fail("ptxas not found: the fixture's PTX was not assembled"),
    }
}
