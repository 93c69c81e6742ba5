//! `baton bench gemm-block-scaled` end to end: argument errors (any
//! machine), SKIPPED with exit 77 without an sm_100a GPU, and on a B200 a
//! small verified run (f64 and cuBLASLt checks, one timed shape) that must
//! pass. Never run on a B200 so far.

use std::process::{Command, Output};

fn baton(args: &[&str]) -> Output {
    // The GPU suite runs this test from a bundle on another machine, where
    // the build-time path of the binary does not exist: it sets BATON_BIN.
    let bin =
        std::env::var("BATON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").to_string());
    Command::new(&bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {bin} {args:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn unknown_format_is_refused_with_the_allowed_values() {
    let out = baton(&["bench", "gemm-block-scaled", "--format", "fp16"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("mxfp8") && t.contains("nvfp4") && t.contains("both"),
        "{t}"
    );
}

#[test]
fn malformed_shape_is_refused() {
    let out = baton(&["bench", "gemm-block-scaled", "--shape", "64x64"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("MxNxK"), "{t}");
}

/// Shapes cuBLASLt cannot take are refused before a GPU is opened, so the
/// answer is the same on every machine.
#[test]
fn unsupported_shape_fails_before_the_gpu_is_opened() {
    let out = baton(&[
        "bench",
        "gemm-block-scaled",
        "--format",
        "mxfp8",
        "--shape",
        "256x256x160",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("FAIL") && t.contains("256x256x160") && t.contains("multiple of 128"),
        "{t}"
    );
}

#[test]
fn skips_off_blackwell_and_passes_on_it() {
    let out = baton(&[
        "bench",
        "gemm-block-scaled",
        "--shape",
        "512x512x1024",
        "--reps",
        "2",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(77) => {
            assert!(stdout.starts_with("SKIPPED: "), "{stdout}");
            baton_runtime::report_skip(stdout.trim().trim_start_matches("SKIPPED: "));
        }
        Some(0) => {
            println!("{stdout}");
            for want in [
                "mxfp8 2048x2048x2048 vs cuBLASLt",
                "nvfp4 2048x2048x2048 vs cuBLASLt",
                "| mxfp8 | 512×512×1024 |",
                "| nvfp4 | 512×512×1024 |",
                "geometric mean ours/cuBLASLt",
            ] {
                assert!(stdout.contains(want), "missing {want:?}:\n{stdout}");
            }
            assert!(!stdout.contains("FAIL"), "{stdout}");
        }
        code => panic!("baton exited with {code:?}:\n{}", text(&out)),
    }
}
