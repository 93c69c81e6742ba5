//! The linear stage types and the phase rules, single-threaded on the CPU
//! backend: forgotten stages panic naming pipeline and stage, guards release
//! on drop, `release_without_signal` does not arrive, arrive-count
//! mismatches are reported, and `PipelineState` steps/wraps as the protocol
//! says for 1..=4 stages (checked against real barriers, not only against
//! the state type's own arithmetic).
#![cfg(not(loom))]

use baton::arch::cpu::{CpuBlock, WARP_SIZE, with_lanes};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::protocol::state::PipelineState;
use baton::smem::SharedRef;

fn pipe<'a, const S: usize>(
    bars: &'a PipelineBarriers<S>,
    name: &'static core::ffi::CStr,
) -> ProducerConsumerPipeline<'a, S> {
    let p = ProducerConsumerPipeline::new(SharedRef::from_ref(bars), name);
    p.init_barriers(1, 1);
    p
}

// ----- forgotten stages --------------------------------------------------------

#[test]
#[should_panic(
    expected = "ProducerStage of pipeline \"forgot-prod\" (stage 1, phase 1) dropped without release"
)]
fn producer_stage_dropped_without_release_names_pipeline_and_stage() {
    let bars = PipelineBarriers::<2>::new();
    let mut p = pipe(&bars, c"forgot-prod");
    p.acquire_producer().release();
    let stage = p.acquire_producer();
    drop(stage);
}

#[test]
#[should_panic(
    expected = "ConsumerStage of pipeline \"forgot-cons\" (stage 0, phase 1) dropped without release"
)]
fn consumer_stage_dropped_without_release_names_pipeline_and_stage() {
    let bars = PipelineBarriers::<1>::new();
    let mut p = pipe(&bars, c"forgot-cons");
    // one full lap, so the consumer is at stage 0 with phase 1
    p.acquire_producer().release();
    p.acquire_consumer().release();
    p.acquire_producer().release();
    let stage = p.acquire_consumer();
    drop(stage);
}

#[test]
#[should_panic(expected = "PendingRelease dropped without release")]
fn pending_release_dropped_without_release() {
    let bars = PipelineBarriers::<2>::new();
    let mut p = pipe(&bars, c"forgot-pending");
    p.acquire_producer().release();
    let pending = p.acquire_consumer().defer_release();
    drop(pending);
}

/// A stage dropped while the thread is already panicking must not panic again
/// (that would abort the process and hide the first message).
#[test]
fn dropping_a_stage_during_a_panic_keeps_the_first_message() {
    let bars = PipelineBarriers::<1>::new();
    let err = std::panic::catch_unwind(|| {
        let mut p = pipe(&bars, c"unwinding");
        let _stage = p.acquire_producer();
        panic!("the first failure");
    })
    .unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"the first failure"));
}

// ----- guards ------------------------------------------------------------------

#[test]
fn scoped_guards_arrive_and_step_on_drop() {
    let bars = PipelineBarriers::<2>::new();
    let mut p = pipe(&bars, c"guards");
    assert!(!p.try_wait_producer(), "nothing produced yet");
    {
        let s = p.produce();
        assert_eq!((s.index(), s.phase()), (0, 1));
        assert_eq!(p_full_parity(&bars, 0), 0, "no arrival before the drop");
    }
    assert_eq!(p_full_parity(&bars, 0), 1, "the drop arrived on full[0]");
    assert_eq!(p.producer_stage(), 1, "the drop stepped");
    assert!(p.try_wait_producer());
    {
        let s = p.consume();
        assert_eq!((s.index(), s.phase()), (0, 0));
        assert_eq!(p_empty_parity(&bars, 0), 0);
    }
    assert_eq!(p_empty_parity(&bars, 0), 1, "the drop arrived on empty[0]");
    assert_eq!(p.consumer_stage(), 1);
}

#[test]
fn explicit_guards_only_step_on_drop() {
    let bars = PipelineBarriers::<2>::new();
    let mut p = pipe(&bars, c"explicit");
    drop(p.produce_explicit());
    assert_eq!(p.producer_stage(), 1, "stepped");
    assert_eq!(p_full_parity(&bars, 0), 0, "but did not arrive");
    p.full(0).arrive(); // the explicit signal
    assert!(p.try_wait_producer());
    {
        let s = p.consume_explicit();
        assert_eq!(s.index(), 0);
    }
    assert_eq!(p.consumer_stage(), 1);
    assert_eq!(p_empty_parity(&bars, 0), 0, "no arrival from the guard");
}

#[test]
fn release_without_signal_steps_without_arriving() {
    let bars = PipelineBarriers::<1>::new();
    let p_bars = SharedRef::from_ref(&bars);
    let mut p = ProducerConsumerPipeline::new(p_bars, c"no-signal");
    p.init_barriers(2, 1); // two producer arrivals per phase
    let s = p.acquire_producer();
    s.arrive(); // one of two
    s.release_without_signal();
    assert_eq!((p.producer_stage(), p.producer_phase()), (0, 0), "wrapped");
    assert!(
        !p.try_wait_producer(),
        "release_without_signal must not add the second arrival"
    );
    p.full(0).arrive(); // the second arrival completes the phase
    assert!(p.try_wait_producer());

    let c = p.acquire_consumer();
    c.release_without_signal();
    assert_eq!((p.consumer_stage(), p.consumer_phase()), (0, 1));
    assert!(
        !p.try_wait_consumer(),
        "the consumer did not arrive on empty[0]"
    );
    p.empty(0).arrive();
    assert!(p.try_wait_consumer());
}

#[test]
fn deferred_release_arrives_only_when_released() {
    let bars = PipelineBarriers::<2>::new();
    let mut p = pipe(&bars, c"deferred");
    p.acquire_producer().release();
    p.acquire_producer().release();
    let first = p.acquire_consumer().defer_release();
    assert_eq!(p.consumer_stage(), 1, "stepped at once");
    assert_eq!(p_empty_parity(&bars, 0), 0, "but empty[0] still owed");
    first.release();
    assert_eq!(p_empty_parity(&bars, 0), 1);
    p.acquire_consumer().release();
}

fn p_full_parity<const S: usize>(bars: &PipelineBarriers<S>, stage: u32) -> u32 {
    ProducerConsumerPipeline::new(SharedRef::from_ref(bars), c"probe")
        .full(stage)
        .current_parity()
}

fn p_empty_parity<const S: usize>(bars: &PipelineBarriers<S>, stage: u32) -> u32 {
    ProducerConsumerPipeline::new(SharedRef::from_ref(bars), c"probe")
        .empty(stage)
        .current_parity()
}

// ----- arrive counts -------------------------------------------------------------

/// A producer warp that signals with all 32 lanes on a barrier initialized
/// for one (TMA-style) arrival — the classic "forgot elect_one" bug.
#[test]
#[should_panic(expected = "arrive count mismatch")]
fn warp_arriving_on_a_count_one_barrier_is_reported() {
    let block = CpuBlock::new(PipelineBarriers::<2>::new());
    block.run_warps(1, |warp, bars| {
        let mut p = ProducerConsumerPipeline::new(bars, c"count");
        p.init_barriers(1, WARP_SIZE);
        warp.sync_block();
        drop(p.produce()); // 32 arrivals on full[0], count 1
    });
}

#[test]
#[should_panic(expected = "32 arrival(s) on an mbarrier with only 31 pending")]
fn consumer_arrivals_beyond_the_count_are_reported() {
    let bars = PipelineBarriers::<1>::new();
    let mut p = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"count");
    p.init_barriers(1, 32);
    p.acquire_producer().release();
    let c = p.acquire_consumer();
    c.arrive(); // one lane
    with_lanes(WARP_SIZE, || c.release()); // then the whole warp: 33 > 32
}

#[test]
fn a_warp_completes_a_count_32_barrier_in_one_arrive() {
    let bars = PipelineBarriers::<1>::new();
    let mut p = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"count");
    p.init_barriers(1, WARP_SIZE);
    p.acquire_producer().release();
    with_lanes(WARP_SIZE, || p.acquire_consumer().release());
    assert!(p.try_wait_consumer(), "32 lanes = 32 arrivals");
}

#[test]
#[should_panic(expected = "arrive count must be in 1..=2^20-1")]
fn zero_arrive_count_is_rejected() {
    let bars = PipelineBarriers::<1>::new();
    ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"count").init_barriers(0, 1);
}

// ----- phase rules -----------------------------------------------------------------

fn state_rules<const S: usize>() {
    for (mut st, start_phase) in [
        (PipelineState::<S>::producer_start(), 1),
        (PipelineState::<S>::consumer_start(), 0),
    ] {
        for k in 0..3 * S as u32 {
            assert_eq!(st.index(), k % S as u32, "{S} stages, step {k}");
            assert_eq!(
                st.phase(),
                (start_phase + k / S as u32) % 2,
                "{S} stages, step {k}"
            );
            st.step();
        }
    }
    let mut st = PipelineState::<S>::at(S as u32 - 1, 0);
    st.advance(S as u32);
    assert_eq!(
        st,
        PipelineState::at(S as u32 - 1, 1),
        "a lap flips the phase"
    );
    st.advance(2 * S as u32);
    assert_eq!(st, PipelineState::at(S as u32 - 1, 1), "two laps do not");
}

/// The rules on real barriers: the producer fills `S` stages without any
/// consumer (its first lap waits for parity 1 on fresh barriers), then is
/// blocked; the consumer is blocked until the first fill, and each release
/// frees exactly the stage it names.
fn pipeline_rules<const S: usize>() {
    let bars = PipelineBarriers::<S>::new();
    let mut p = pipe(&bars, c"rules");
    assert!(
        !p.try_wait_producer(),
        "{S}: consumer blocked before any fill"
    );
    for k in 0..S as u32 {
        assert!(
            p.try_wait_consumer(),
            "{S}: first lap never blocks (stage {k})"
        );
        let s = p.acquire_producer();
        assert_eq!((s.index(), s.phase()), (k, 1));
        s.release();
    }
    assert_eq!((p.producer_stage(), p.producer_phase()), (0, 0));
    assert!(!p.try_wait_consumer(), "{S}: ring full, producer blocked");
    for lap in 0..3u32 {
        for k in 0..S as u32 {
            assert!(p.try_wait_producer(), "{S}: stage {k} full");
            let c = p.acquire_consumer();
            assert_eq!((c.index(), c.phase()), (k, lap % 2));
            c.release();
            // exactly the released stage is free for the producer again
            assert!(p.try_wait_consumer(), "{S}: stage {k} freed");
            let s = p.acquire_producer();
            assert_eq!(
                (s.index(), s.phase()),
                (k, lap % 2),
                "{S}: producer lap {}",
                lap + 1
            );
            s.release();
            assert!(
                !p.try_wait_consumer(),
                "{S}: next producer stage still held by the consumer"
            );
        }
    }
    // drain and tail: the producer tail passes only once every stage is back
    for _ in 0..S {
        p.acquire_consumer().release();
    }
    let (stage, phase) = (p.producer_stage(), p.producer_phase());
    p.drain();
    assert_eq!((p.producer_stage(), p.producer_phase()), (stage, phase ^ 1));
}

#[test]
fn phase_rules_stages_1_to_4() {
    state_rules::<1>();
    state_rules::<2>();
    state_rules::<3>();
    state_rules::<4>();
    pipeline_rules::<1>();
    pipeline_rules::<2>();
    pipeline_rules::<3>();
    pipeline_rules::<4>();
}

#[test]
#[should_panic(expected = "stage index must be < STAGES and phase 0 or 1")]
fn state_at_rejects_an_index_out_of_range() {
    let _ = PipelineState::<4>::at(4, 0);
}

#[test]
#[should_panic(expected = "stage index must be < STAGES and phase 0 or 1")]
fn state_at_rejects_a_phase_above_one() {
    let _ = PipelineState::<4>::at(0, 2);
}
