//! A hung pipeline on the GPU reports itself: `baton hang-check` launches a
//! consumer that waits on a stage nobody fills (debug PTX), and its output
//! must name the pipeline, role, barrier, stage and phase, then the launch
//! must fail (trap). Without a GPU the command exits 77 and this test prints
//! `SKIPPED`.

use std::process::Command;

#[test]
fn hung_wait_prints_pipeline_role_stage_and_phase_then_traps() {
    // The GPU suite runs this test from a bundle on another machine, where
    // the build-time path of the binary does not exist: it sets BATON_BIN.
    let bin =
        std::env::var("BATON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").to_string());
    let out = Command::new(&bin)
        .arg("hang-check")
        .output()
        .unwrap_or_else(|e| panic!("run {bin} hang-check: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(77) => {
            baton_runtime::report_skip(&format!("no usable GPU ({})", stdout.trim()));
        }
        Some(0) => {
            println!("{stdout}");
            assert!(
                stdout.contains("baton: wait timed out: pipeline hang-test, consumer waiting on full[0] for phase parity 0"),
                "the device report is missing from the output:\n{stdout}"
            );
        }
        code => panic!(
            "baton hang-check exited with {code:?}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}
