//! Kernels that misuse the linear stage API. Built one feature at a time by
//! `xtask/tests/linear_stage_gpu_build.rs`: every misuse must
//! make ptxas fail with `Unresolved extern function
//! 'baton_error__<Stage>_dropped_without_release'`, and the control build
//! (no feature) must assemble.
#![no_std]
#![feature(abi_ptx)]

use baton::arch::ptx::{dynamic_smem, sync_threads, thread_idx_x, warp_idx};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn linear_stage_misuse(out: *mut u32, n: u32) {
    // SAFETY: launched with PipelineBarriers::<2>::GPU_BYTES of smem.
    let bars = unsafe { dynamic_smem::<PipelineBarriers<2>>() };
    let mut pipe = ProducerConsumerPipeline::new(bars, c"misuse");
    if thread_idx_x() == 0 {
        pipe.init_barriers(1, 32);
    }
    sync_threads();
    if warp_idx() == 0 {
        if thread_idx_x() == 0 {
            for _ in 0..n {
                let stage = pipe.acquire_producer();
                #[cfg(feature = "forget-producer-stage")]
                drop(stage);
                #[cfg(not(feature = "forget-producer-stage"))]
                stage.release();
            }
        }
    } else {
        let mut acc = 0;
        for i in 0..n {
            let stage = pipe.acquire_consumer();
            acc += stage.index();
            #[cfg(feature = "forget-on-early-return")]
            if i == 7 {
                // Returns while still holding the stage.
                return;
            }
            let _ = i;
            #[cfg(feature = "forget-consumer-stage")]
            core::mem::drop(stage);
            #[cfg(not(feature = "forget-consumer-stage"))]
            stage.release();
        }
        // SAFETY: the host passes at least 64 words.
        unsafe { *out.add(thread_idx_x() as usize) = acc };
    }
}
