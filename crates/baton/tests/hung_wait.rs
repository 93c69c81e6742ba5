//! A hung wait reports where it hung: pipeline, role, barrier, stage and
//! phase. Its own test binary, because the CPU backend reads the wait bound
//! (`BATON_CPU_WAIT_TIMEOUT_MS`) once per process, at the first wait; this
//! file sets it to 200 ms before any wait, in its only test.
#![cfg(not(loom))]

use baton::arch::cpu::MbarrierCell;
use baton::epi_load::LoadOrderBarrier;
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
use baton::protocol::state::PipelineState;
use baton::smem::SharedRef;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

fn hang_message(f: impl FnOnce()) -> String {
    let start = Instant::now();
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("the wait must time out");
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_secs(5),
        "bounded by BATON_CPU_WAIT_TIMEOUT_MS, took {elapsed:?}"
    );
    err.downcast_ref::<String>()
        .cloned()
        .expect("a formatted panic message")
}

#[test]
fn hung_waits_name_pipeline_role_stage_and_phase() {
    // SAFETY: this is the binary's only test and no other thread runs yet.
    unsafe { std::env::set_var("BATON_CPU_WAIT_TIMEOUT_MS", "200") };

    // The classic bug: the producer starts at phase 0 and blocks on its
    // very first wait on a fresh `empty` barrier.
    let bars = PipelineBarriers::<3>::new();
    let mut p = ProducerConsumerPipeline::with_states(
        SharedRef::from_ref(&bars),
        c"mainloop",
        PipelineState::at(0, 0),
        PipelineState::consumer_start(),
    );
    p.init_barriers(1, 1);
    let msg = hang_message(|| p.acquire_producer().release());
    assert!(
        msg.contains("pipeline mainloop: producer waiting on empty[0] for phase parity 0"),
        "{msg}"
    );

    // A consumer waiting for a fill that never comes, on stage 2, lap 2.
    let bars = PipelineBarriers::<3>::new();
    let mut p = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"epilogue");
    p.init_barriers(1, 1);
    for _ in 0..5 {
        p.acquire_producer().release();
        p.acquire_consumer().release();
    }
    let msg = hang_message(|| p.wait_producer());
    assert!(
        msg.contains("pipeline epilogue: consumer waiting on full[2] for phase parity 1"),
        "{msg}"
    );

    // The producer tail waits for a stage the consumer never released.
    let bars = PipelineBarriers::<2>::new();
    let mut p = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"tail");
    p.init_barriers(1, 1);
    p.acquire_producer().release();
    p.acquire_producer().release();
    p.acquire_consumer().release(); // stage 0 back, stage 1 still held
    let msg = hang_message(|| p.drain());
    assert!(
        msg.contains("pipeline tail: producer waiting on empty[1] for phase parity 0"),
        "{msg}"
    );

    // The load-order barrier's second tile without a second arrival.
    let cell = MbarrierCell::new();
    let mut main = LoadOrderBarrier::new(SharedRef::from_ref(&cell), c"load-order");
    let mut epi = LoadOrderBarrier::new(SharedRef::from_ref(&cell), c"load-order");
    main.init(1);
    main.arrive_and_step();
    epi.wait_and_step();
    let msg = hang_message(|| epi.wait());
    assert!(
        msg.contains("pipeline load-order: consumer waiting on full[0] for phase parity 1"),
        "{msg}"
    );

    // An ordered group whose predecessor never hands over: group 1 of 2,
    // turn 1 (the epilogue turn) of round 0 -> turn[1 * 2 + 1].
    let bars = OrderedBarriers::<2, 2>::new();
    let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"math-order");
    let mut g1 = OrderedBarrier::new(SharedRef::from_ref(&bars), 1, c"math-order");
    g0.init(1);
    drop(g0.turn()); // group 0's main loop, handed to group 1
    drop(g1.turn()); // group 1's main loop; group 0 never ends its epilogue
    let msg = hang_message(|| g1.wait());
    assert!(
        msg.contains("pipeline math-order: ordered group waiting on turn[3] for phase parity 0"),
        "{msg}"
    );
}
