//! `baton hang-check`: shows what a hung pipeline looks like on the GPU.
//!
//! Launches the debug-PTX kernel `baton_pipeline_hang`, whose consumer
//! waits on a stage nobody fills. The debug build bounds the wait (4 s),
//! prints where it hung with device `printf`, and traps; the launch then
//! fails on the host. Exit 0 when it failed that way, 1 otherwise, 77
//! without a GPU. The context is unusable afterwards, so this runs as its
//! own process (the test `tests/gpu_hang.rs` checks the printed report).

use crate::commands::{Outcome, open_gpu_selftest_kernels};
use baton_runtime::Variant;
use baton_runtime::cudarc::driver::DevicePtrMut;
use baton_runtime::kernel_abi::pipeline::{HANG, HangParams};

/// Runs the hang and reports how it ended.
pub fn hang_check(ordinal: usize) -> Outcome {
    let (gpu, kernels) = match open_gpu_selftest_kernels(ordinal, Variant::Debug) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let run = || -> baton_runtime::Result<()> {
        let k = kernels.kernel(&HANG)?;
        let stream = gpu.stream();
        let mut out = stream.alloc_zeros::<u32>(1)?;
        let (out, _out_sync) = out.device_ptr_mut(stream);
        let params = HangParams {
            out: out as *mut u32,
        };
        // SAFETY: `out` holds one u32 and lives until launch_sync returns.
        unsafe { k.launch_sync(stream, 1, &params) }
    };
    let started = std::time::Instant::now();
    let result = run();
    let secs = started.elapsed().as_secs_f64();
    match result {
        Err(e) => {
            println!("hang-check: the launch failed after {secs:.1} s, as it must: {e}");
            Outcome::Pass
        }
        Ok(()) => {
            println!(
                "hang-check: FAIL: the kernel completed, but its consumer had nothing to consume"
            );
            Outcome::Fail
        }
    }
}
