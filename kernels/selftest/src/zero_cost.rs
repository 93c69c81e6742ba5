//! Zero-cost evidence: the same handoff loop written with
//! `baton::pipeline` and by hand with raw `mbarrier` PTX.
//!
//! Both kernels: 5 warps; warp 0's elected lane produces `iters` stages
//! (producer count 1), warps 1..=4 consume them (consumer count 128) through
//! a 4-stage ring, each consumer thread summing the stage indices it saw.
//! The host times both in one process (`baton bench zero-cost`) and a test
//! compares the instruction counts of their steady-state loops in the PTX
//! and SASS.

use baton::arch::ptx::{dynamic_smem, elect_one, sync_threads, thread_idx_x, warp_idx};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton_kernels_abi::zero_cost as abi;
use baton_kernels_abi::zero_cost::{HandoffBenchParams, STAGES};
use core::arch::asm;

baton::kernel! {
    #[spec(abi::PIPELINE)]
    /// `baton::pipeline` version (linear API on both sides).
    pub fn baton_bench_handoff_pipeline(p: HandoffBenchParams) {
        let HandoffBenchParams { out, iters } = p;
        // SAFETY: the host launches with PipelineBarriers::<4>::GPU_BYTES of smem.
        let bars = unsafe { dynamic_smem::<PipelineBarriers<STAGES>>() };
        let mut pipe = ProducerConsumerPipeline::new(bars, c"bench");
        if thread_idx_x() == 0 {
            pipe.init_barriers(1, 128);
        }
        sync_threads();
        if warp_idx() == 0 {
            if elect_one() {
                for _ in 0..iters {
                    pipe.acquire_producer().release();
                }
                pipe.drain();
            }
        } else {
            let mut acc = 0u32;
            for _ in 0..iters {
                let stage = pipe.acquire_consumer();
                acc = acc.wrapping_add(stage.index());
                stage.release();
            }
            // SAFETY: the host allocates grid × 160 words.
            unsafe {
                *out.add((baton::arch::ptx::block_idx_x() * 160 + thread_idx_x()) as usize) = acc
            };
        }
    }
}

#[inline(always)]
fn smem_base() -> u32 {
    let r: u32;
    // SAFETY: the build declares `baton_dynamic_smem`.
    unsafe {
        asm!("mov.u32 {r}, baton_dynamic_smem;", r = out(reg32) r, options(pure, nomem, nostack))
    };
    r
}

#[inline(always)]
fn raw_wait(addr: u32, parity: u32) {
    // SAFETY: addr is an initialized mbarrier.
    #[allow(named_asm_labels)]
    unsafe {
        asm!(
            "{{ .reg .pred p; WAIT_HAND: mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph}; @!p bra WAIT_HAND; }}",
            a = in(reg32) addr, ph = in(reg32) parity, options(nostack)
        )
    };
}

#[inline(always)]
fn raw_arrive(addr: u32) {
    // SAFETY: addr is an initialized mbarrier.
    unsafe {
        asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) addr, options(nostack))
    };
}

baton::kernel! {
    #[spec(abi::HANDWRITTEN)]
    /// Hand-written version: shared addresses, stage and phase kept by hand,
    /// the way a CUDA C++ kernel without a pipeline abstraction does it.
    pub fn baton_bench_handoff_handwritten(p: HandoffBenchParams) {
        let HandoffBenchParams { out, iters } = p;
        let full = smem_base();
        let empty = full + 8 * STAGES as u32;
        if thread_idx_x() == 0 {
            for s in 0..STAGES as u32 {
                // SAFETY: one thread initializes before the barrier below.
                unsafe {
                    asm!("mbarrier.init.shared::cta.b64 [{a}], 1;", a = in(reg32) full + 8 * s, options(nostack));
                    asm!("mbarrier.init.shared::cta.b64 [{a}], 128;", a = in(reg32) empty + 8 * s, options(nostack));
                }
            }
            // SAFETY: a fence.
            unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) };
        }
        sync_threads();
        if warp_idx() == 0 {
            if elect_one() {
                let (mut stage, mut phase) = (0u32, 1u32);
                for _ in 0..iters {
                    raw_wait(empty + 8 * stage, phase);
                    raw_arrive(full + 8 * stage);
                    stage += 1;
                    if stage == STAGES as u32 {
                        stage = 0;
                        phase ^= 1;
                    }
                }
                // Tail: wait until the consumers released every stage.
                for _ in 0..STAGES {
                    raw_wait(empty + 8 * stage, phase);
                    stage += 1;
                    if stage == STAGES as u32 {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        } else {
            let (mut stage, mut phase, mut acc) = (0u32, 0u32, 0u32);
            for _ in 0..iters {
                raw_wait(full + 8 * stage, phase);
                acc = acc.wrapping_add(stage);
                raw_arrive(empty + 8 * stage);
                stage += 1;
                if stage == STAGES as u32 {
                    stage = 0;
                    phase ^= 1;
                }
            }
            // SAFETY: as above.
            unsafe {
                *out.add((baton::arch::ptx::block_idx_x() * 160 + thread_idx_x()) as usize) = acc
            };
        }
    }
}
