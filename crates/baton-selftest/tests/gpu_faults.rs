//! Fault paths on a real GPU (issue #21): what the host sees when a kernel
//! traps, when the GPU runs out of memory for a workspace, when work is
//! queued behind a fault, and when a release kernel hangs.
//!
//! A trap poisons the process's CUDA context for good, so the two trap
//! tests run the faulting part in a child process (this test executable
//! again, selecting the same test, with `BATON_FAULT_CHILD` set) and check
//! its report; the parent then opens a fresh context on the same GPU and
//! checks that real work passes there. The deliberate release-build hang
//! runs only with `BATON_FAULT_HANG=1` (it never returns: the GPU suite's
//! per-test time limit must turn it into a FAIL). Without a CUDA GPU every
//! test prints `SKIPPED: …` and returns.

use baton_reference::gemm_check;
use baton_reference::random::XorShift;
use baton_runtime::cudarc::driver::DevicePtrMut;
use baton_runtime::gemm::{GemmConfig, GemmPlan};
use baton_runtime::kernel_abi::pipeline::{HANG, HangParams};
use baton_runtime::{Error, Gpu, Variant, report_skip};
use baton_selftest::pipeline_gpu;
use std::process::Command;

/// True when a self-test's error is a runtime error that
/// [`Error::is_context_fatal`].
fn context_fatal(e: &baton_selftest::Error) -> bool {
    matches!(e, baton_selftest::Error::Runtime(r) if r.is_context_fatal())
}

/// Set (to the test's name) in the child process that runs the faulting part.
const CHILD_ENV: &str = "BATON_FAULT_CHILD";
/// Set to 1 to run the deliberate release-build hang.
const HANG_ENV: &str = "BATON_FAULT_HANG";
/// Printed by a child whose every check held; anything else is a failure.
const CHILD_OK: &str = "fault-child: every check held";

/// In the child (`BATON_FAULT_CHILD` names `test`): runs `body`, prints its
/// report and exits the process — 0 only when `body` found every check
/// held. In the parent: `false`, so the test goes on.
fn run_child_part(test: &str, body: fn() -> Result<(), String>) -> bool {
    if std::env::var(CHILD_ENV).as_deref() != Ok(test) {
        return false;
    }
    match body() {
        Ok(()) => {
            println!("{CHILD_OK}");
            std::process::exit(0)
        }
        Err(why) => {
            println!("fault-child: FAILED: {why}");
            std::process::exit(1)
        }
    }
}

/// Runs this test executable again for `test` only, as the child, and
/// returns its exit code and output. Panics when the child could not run.
fn spawn_child(test: &str) -> (Option<i32>, String) {
    let exe = std::env::current_exe().expect("path of this test executable");
    let out = Command::new(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, test)
        .output()
        .unwrap_or_else(|e| panic!("run {} for {test}: {e}", exe.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// True when this machine has a usable Hopper GPU; prints `SKIPPED` (and
/// returns false) otherwise. The context it opens is released again, so
/// the next `Gpu` is a fresh one.
fn gpu_present() -> bool {
    Gpu::for_test().is_some()
}

/// The parent's half of a trap test: the child must have trapped, printed
/// the device-side hang report and found every check held; then a fresh
/// context on the same GPU must run a pipeline kernel correctly.
fn check_child_then_fresh_context(test: &str) {
    let (code, text) = spawn_child(test);
    println!("--- child output ---\n{text}--- end of child output ---");
    assert_eq!(code, Some(0), "the child failed:\n{text}");
    assert!(text.contains(CHILD_OK), "no child report:\n{text}");
    assert!(
        text.contains("baton: wait timed out: pipeline hang-test"),
        "the debug build's hang report is missing:\n{text}"
    );
    let gpu = Gpu::for_test().expect("the GPU is still there after the child's trap");
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("a fresh context after a trap: {e}"));
    let run = pipeline_gpu::run_handoff(&gpu, &kernels, "baton_pipeline_handoff", 8, 256)
        .unwrap_or_else(|e| panic!("a fresh context after a trap: {e}"));
    println!(
        "fresh context after the trap: {} payloads, {} mismatches",
        run.payloads, run.mismatches
    );
    assert!(run.passed(), "a fresh context after a trap: {run:#?}");
}

const TRAP_TEST: &str = "trapped_kernel_is_a_typed_error_and_a_fresh_context_works";

/// The debug build's bounded wait traps (`baton_pipeline_hang`: a consumer
/// waits on a stage nobody fills). `launch_sync` must return
/// `Error::Launch` naming the kernel, with a context-fatal driver code.
fn trap_child() -> Result<(), String> {
    let gpu = Gpu::new(0).map_err(|e| e.to_string())?;
    let kernels =
        baton_selftest::kernels::load_kernels(&gpu, Variant::Debug).map_err(|e| e.to_string())?;
    let hang = kernels.kernel(&HANG).map_err(|e| e.to_string())?;
    let mut out = gpu
        .stream()
        .alloc_zeros::<u32>(1)
        .map_err(|e| e.to_string())?;
    let (out_ptr, _out_sync) = out.device_ptr_mut(gpu.stream());
    let params = HangParams {
        out: out_ptr as *mut u32,
    };
    let started = std::time::Instant::now();
    // SAFETY: `out` holds one u32 and outlives the launch.
    let result = unsafe { hang.launch_sync(gpu.stream(), 1, &params) };
    let secs = started.elapsed().as_secs_f64();
    let err = match result {
        Ok(()) => {
            return Err("the hang kernel completed, but nothing ever filled its stage".into());
        }
        Err(e) => e,
    };
    match &err {
        Error::Launch { kernel, .. }
            if kernel == "baton_pipeline_hang" && err.is_context_fatal() =>
        {
            println!("fault-child: the trap surfaced after {secs:.1} s as: {err}");
            Ok(())
        }
        _ => Err(format!(
            "wrong error after {secs:.1} s (want Error::Launch naming baton_pipeline_hang, context-fatal): {err:?}"
        )),
    }
}

#[test]
fn trapped_kernel_is_a_typed_error_and_a_fresh_context_works() {
    if run_child_part(TRAP_TEST, trap_child) || !gpu_present() {
        return;
    }
    check_child_then_fresh_context(TRAP_TEST);
}

const QUEUED_TEST: &str = "work_queued_behind_a_fault_is_reported_not_hidden";

/// Work enqueued behind a kernel that will trap, and work enqueued after
/// the fault surfaced, must fail: never a result read from a dead context.
fn queued_child() -> Result<(), String> {
    let gpu = Gpu::new(0).map_err(|e| e.to_string())?;
    let debug =
        baton_selftest::kernels::load_kernels(&gpu, Variant::Debug).map_err(|e| e.to_string())?;
    let release =
        baton_selftest::kernels::load_kernels(&gpu, Variant::Release).map_err(|e| e.to_string())?;
    let hang = debug.kernel(&HANG).map_err(|e| e.to_string())?;
    let mut out = gpu
        .stream()
        .alloc_zeros::<u32>(1)
        .map_err(|e| e.to_string())?;
    {
        let (out_ptr, _out_sync) = out.device_ptr_mut(gpu.stream());
        let params = HangParams {
            out: out_ptr as *mut u32,
        };
        // SAFETY: as in trap_child.
        unsafe { hang.launch(gpu.stream(), 1, &params) }
            .map_err(|e| format!("enqueueing the hang kernel failed at once: {e}"))?;
    }
    // 1. Queued behind the kernel that will trap in ~4 s: the handoff
    // enqueues its copies and launch, then synchronizes and meets the fault.
    let behind = pipeline_gpu::run_handoff(&gpu, &release, "baton_pipeline_handoff", 4, 64);
    match behind {
        Err(ref e) if context_fatal(e) => {
            println!("fault-child: work queued behind the trap reported: {e}")
        }
        Err(e) => {
            return Err(format!(
                "work queued behind the trap: not a context-fatal error: {e:?}"
            ));
        }
        Ok(run) => {
            return Err(format!(
                "work queued behind the trap came back as a result: {run:?}"
            ));
        }
    }
    // 2. Queued after the fault surfaced: every later call fails too (the
    // error is sticky), and says so.
    let after = pipeline_gpu::run_handoff(&gpu, &release, "baton_pipeline_handoff", 4, 64);
    match after {
        Err(e) => println!("fault-child: work queued after the fault reported: {e}"),
        Ok(run) => {
            return Err(format!(
                "work queued after the fault came back as a result: {run:?}"
            ));
        }
    }
    match gpu.synchronize() {
        Err(e) if e.is_context_fatal() => {
            println!("fault-child: a later synchronize still reports: {e}")
        }
        Err(e) => {
            return Err(format!(
                "a later synchronize: not a context-fatal error: {e:?}"
            ));
        }
        Ok(()) => return Err("a later synchronize succeeded on the faulted context".into()),
    }
    // 3. Opening the GPU again in this process gets the same dead primary
    // context: its work must fail as well, never pass.
    match Gpu::new(0) {
        Err(e) => println!("fault-child: reopening the GPU in this process fails: {e}"),
        Ok(again) => {
            match pipeline_gpu::run_handoff(&again, &release, "baton_pipeline_handoff", 4, 64) {
                Err(e) => println!("fault-child: work on the reopened GPU reports: {e}"),
                Ok(run) => {
                    return Err(format!(
                        "work on the reopened GPU came back as a result: {run:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn work_queued_behind_a_fault_is_reported_not_hidden() {
    if run_child_part(QUEUED_TEST, queued_child) || !gpu_present() {
        return;
    }
    check_child_then_fresh_context(QUEUED_TEST);
}

/// Fills the GPU's memory: allocations of 1 GiB, then 64, 4 and 1 MiB,
/// until each size fails.
fn fill_device_memory(gpu: &Gpu) -> Vec<baton_runtime::cudarc::driver::CudaSlice<u8>> {
    let mut hog = Vec::new();
    for chunk in [1usize << 30, 1 << 26, 1 << 22, 1 << 20] {
        // SAFETY: the bytes are never read; the buffers only take memory.
        while let Ok(b) = unsafe { gpu.stream().alloc::<u8>(chunk) } {
            hog.push(b);
        }
    }
    hog
}

/// A stream-K workspace that does not fit is `Error::OutOfDeviceMemory`
/// (naming the workspace and the sizes), the plan stays usable, and once
/// memory is free again the same plan runs with stream-K and matches an
/// f64 reference.
#[test]
fn out_of_device_memory_for_a_stream_k_workspace_is_a_typed_error() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = gpu
        .load_kernels(Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let (m, n, k) = (300, 520, 512);
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = gemm_check::random_bf16(m * k, &mut rng);
    let b = gemm_check::random_bf16(n * k, &mut rng);
    let s = gpu.stream();
    let a_d = s.clone_htod(&a).unwrap();
    let b_d = s.clone_htod(&b).unwrap();
    let mut d_d = s.clone_htod(&vec![gemm_check::POISON_BF16; m * n]).unwrap();
    let mut plan = GemmPlan::with_config(
        &gpu,
        &kernels,
        GemmConfig::T128x128,
        &a_d,
        &b_d,
        None,
        &mut d_d,
        m,
        n,
        k,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    plan.set_stream_k(&gpu, None).unwrap();

    let hog = fill_device_memory(&gpu);
    let (free, total) = gpu.context().mem_get_info().unwrap();
    println!(
        "filled the GPU: {} buffers, {} MiB free of {} MiB",
        hog.len(),
        free >> 20,
        total >> 20
    );
    let err = match plan.set_stream_k(&gpu, Some(1)) {
        Ok(()) => panic!(
            "a stream-K workspace was allocated with {} MiB free",
            free >> 20
        ),
        Err(e) => e,
    };
    println!("as expected: {err}");
    let Error::OutOfDeviceMemory { what, bytes, .. } = &err else {
        panic!("wrong error for a workspace that does not fit: {err:?}")
    };
    assert!(what.contains("stream-K workspace"), "{err}");
    assert!(*bytes > 0, "{err}");
    assert!(!err.is_context_fatal(), "{err}");
    assert_eq!(
        plan.stream_k(),
        None,
        "a failed set_stream_k changed the plan"
    );

    drop(hog);
    gpu.synchronize().unwrap();
    plan.set_stream_k(&gpu, Some(1))
        .unwrap_or_else(|e| panic!("with memory free again: {e}"));
    assert_eq!(plan.stream_k(), Some(1));
    plan.run(&gpu, 1.0, 0.0).unwrap_or_else(|e| panic!("{e}"));
    gpu.synchronize().unwrap_or_else(|e| panic!("{e}"));
    drop(plan);
    let d = s.clone_dtoh(&d_d).unwrap();
    let reference = gemm_check::reference_f64(&a, &b, None, m, n, k, 1.0, 0.0);
    let cmp = gemm_check::Comparison::new(&d, &reference);
    println!(
        "stream-K GEMM after the out-of-memory error: rel {:.2e}",
        cmp.rel_error
    );
    assert!(cmp.passes(1e-2), "{cmp:?}");
}

/// A release-build kernel that hangs: `baton_pipeline_hang` from the
/// release PTX, whose wait is unbounded, so this test never returns. Run
/// only with `BATON_FAULT_HANG=1`, inside `tools/gpu-suite.sh`, to show the
/// suite's per-test limit (`SUITE_TEST_TIMEOUT`) turns it into a FAIL
/// instead of a stuck run (docs/GPU-SUITE.md records such a run).
#[test]
fn release_build_hang_is_stopped_by_the_suite_time_limit() {
    if std::env::var(HANG_ENV).as_deref() != Ok("1") {
        report_skip(&format!(
            "deliberate hang; run with {HANG_ENV}=1 under tools/gpu-suite.sh, which must report FAIL (timeout)"
        ));
        return;
    }
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let hang = kernels.kernel(&HANG).unwrap();
    let mut out = gpu.stream().alloc_zeros::<u32>(1).unwrap();
    let (out_ptr, _out_sync) = out.device_ptr_mut(gpu.stream());
    let params = HangParams {
        out: out_ptr as *mut u32,
    };
    println!("launching the release-build hang; only the suite's time limit ends this test");
    // SAFETY: as in trap_child.
    let result = unsafe { hang.launch_sync(gpu.stream(), 1, &params) };
    panic!("the release-build hang returned ({result:?}); its consumer had nothing to consume");
}
