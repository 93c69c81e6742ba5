//! Exhaustive model checks of `ProducerConsumerPipeline`, `EpiLoadPipeline`
//! and `LoadOrderBarrier` on the CPU backend, under loom:
//!
//! ```text
//! tools/test-loom.sh
//! # = RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//! #   cargo test -p baton --release --test loom_pipeline
//! ```
//!
//! # Why loom (and not shuttle)
//!
//! * loom enumerates **every** interleaving of the model's threads up to a
//!   preemption bound (DPOR-reduced), so a pass is a proof for that bound,
//!   not a sample; shuttle samples schedules at random (PCT), so a pass says
//!   only that the schedules it happened to draw were fine.
//! * loom's `UnsafeCell` tracks happens-before: a read of a payload slot
//!   that is not ordered after the write that produced it (or a refill not
//!   ordered after every consumer's read) is reported as a *causality
//!   violation*, even when the value read happens to be right. That is how a
//!   broken phase rule or a missing arrive/wait edge is caught here.
//! * loom models the C11 memory model for atomics (a load may return any
//!   store not yet superseded in its view, orderings decide what is
//!   synchronized), so the mbarrier's acquire/release choices are checked;
//!   shuttle runs atomics sequentially consistent and cannot find an
//!   ordering that is too weak.
//!
//! # What each model is
//!
//! One loom thread is one arrival (a plain thread stands for one lane on the
//! CPU backend; the epilogue model uses `with_lanes(32)` for a full consumer
//! warp). Barriers are initialized before the threads are spawned (spawn is
//! a happens-before edge, like the block sync after `init_barriers`). The
//! payload is one `loom::cell::UnsafeCell<u64>` per stage: the producer writes
//! the sequence number `i + 1` of item `i`, every consumer reads every item
//! (broadcast) and asserts it sees `1, 2, 3, …` in order on the expected
//! stage — nothing lost, duplicated or reordered, and no racy access. After
//! its last item the producer runs `drain()` and then overwrites
//! every slot: if the tail returned before every consumer had released
//! every stage, that write races with a consumer's read and loom fails.
//!
//! Item counts are small (`STAGES` to `2 × STAGES`: enough to wrap the ring
//! and flip every phase) and loom runs with a **preemption bound**: 3 for
//! one producer and one consumer, 2 for the mixed-API and epilogue models,
//! 1 for two consumers (two consumers multiply the executions — and the
//! stale values each relaxed load and CAS retry may return — by ~100).
//! loom's documentation notes that most concurrency bugs need at most 2–3
//! preemptions; an unbounded search of these spin-waiting models does not
//! finish in CI time. Each model also asserts that loom explored more than a
//! handful of executions. A spin-wait that polled 3 times without success
//! stops branching (`LOOM_POLLS_BEFORE_SKIP` in `arch/cpu/sync.rs`): without
//! that cut-off two concurrent waiters livelock loom's free post-yield
//! switches and every two-consumer model fails on the branch limit.
//!
//! Budget: `tools/test-loom.sh` takes about 30 s on 2 idle cores in release
//! (the largest model, two consumers over 3 stages, ~20 s of it), plus
//! ~30 s to build loom and baton the first time.
#![cfg(loom)]

use baton::arch::cpu::{MbarrierCell, WARP_SIZE, elect_one, with_lanes};
use baton::epi_load::{EpiLoadPipeline, LoadOrderBarrier};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::protocol::state::PipelineState;
use baton::smem::SharedRef;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

// ----- shared memory of the models -----------------------------------------

/// One payload slot. loom's `UnsafeCell` is `!Sync`; the pipeline protocol is
/// what makes sharing it sound, and loom checks exactly that.
struct Slot(UnsafeCell<u64>);

// SAFETY: accesses are ordered by the pipeline's barriers; loom reports any
// access that is not.
unsafe impl Sync for Slot {}

impl Slot {
    fn new() -> Self {
        Slot(UnsafeCell::new(0))
    }
    fn write(&self, v: u64) {
        // SAFETY: loom's cell checks the exclusivity dynamically.
        self.0.with_mut(|p| unsafe { *p = v });
    }
    fn read(&self) -> u64 {
        // SAFETY: as `write`.
        self.0.with(|p| unsafe { *p })
    }
}

struct Smem<const S: usize> {
    bars: PipelineBarriers<S>,
    slots: [Slot; S],
}

impl<const S: usize> Smem<S> {
    fn new() -> Self {
        Self {
            bars: PipelineBarriers::new(),
            slots: core::array::from_fn(|_| Slot::new()),
        }
    }
    fn bars(&self) -> SharedRef<'_, PipelineBarriers<S>> {
        SharedRef::from_ref(&self.bars)
    }
}

// ----- how each role drives the pipeline -------------------------------------

/// The API a role uses for every item.
#[derive(Clone, Copy, Debug)]
enum Api {
    /// `produce()` / `consume()` guards: arrive + step on drop.
    Scoped,
    /// `acquire_*()` then `release()`.
    Linear,
    /// `produce_explicit()` / `consume_explicit()` + `stage.arrive()`.
    ScopedExplicit,
    /// `acquire_*()` + `stage.arrive()` + `release_without_signal()`.
    LinearExplicit,
    /// `try_wait_*()` + `wait_*_if_needed()` + `*_mbar(stage).arrive()` +
    /// `*_step()`.
    Direct,
}

const ALL_APIS: [Api; 5] = [
    Api::Scoped,
    Api::Linear,
    Api::ScopedExplicit,
    Api::LinearExplicit,
    Api::Direct,
];

fn seq(item: u32) -> u64 {
    item as u64 + 1
}

/// Produces `items` sequence numbers, then runs the producer tail and
/// overwrites every slot (the "CTA exit": must not race with any reader).
fn producer<const S: usize>(
    pipe: &mut ProducerConsumerPipeline<'_, S>,
    slots: &[Slot; S],
    items: u32,
    api: Api,
) {
    for i in 0..items {
        let want_stage = i % S as u32;
        match api {
            Api::Scoped => {
                let s = pipe.produce();
                assert_eq!(s.index(), want_stage);
                slots[s.index() as usize].write(seq(i));
            }
            Api::Linear => {
                let s = pipe.acquire_producer();
                assert_eq!(s.index(), want_stage);
                slots[s.index() as usize].write(seq(i));
                s.release();
            }
            Api::ScopedExplicit => {
                let s = pipe.produce_explicit();
                slots[s.index() as usize].write(seq(i));
                s.arrive();
            }
            Api::LinearExplicit => {
                let s = pipe.acquire_producer();
                slots[s.index() as usize].write(seq(i));
                s.arrive();
                s.release_without_signal();
            }
            Api::Direct => {
                let ready = pipe.try_wait_consumer();
                pipe.wait_consumer_if_needed(ready);
                let stage = pipe.producer_stage();
                assert_eq!(stage, want_stage);
                slots[stage as usize].write(seq(i));
                pipe.producer_mbar(stage).arrive();
                pipe.producer_step();
            }
        }
    }
    let (stage, phase) = (pipe.producer_stage(), pipe.producer_phase());
    pipe.drain();
    assert_eq!(pipe.producer_stage(), stage, "the tail goes round once");
    assert_eq!(pipe.producer_phase(), phase ^ 1, "the tail flips the phase");
    // Every consumer released every stage: the slots may be reused.
    for slot in slots {
        slot.write(u64::MAX);
    }
}

/// Consumes `items` items, checking each sequence number and stage.
fn consumer<const S: usize>(
    pipe: &mut ProducerConsumerPipeline<'_, S>,
    slots: &[Slot; S],
    items: u32,
    api: Api,
) -> u32 {
    let mut seen = 0;
    for i in 0..items {
        let want_stage = i % S as u32;
        let got = match api {
            Api::Scoped => {
                let s = pipe.consume();
                assert_eq!(s.index(), want_stage);
                slots[s.index() as usize].read()
            }
            Api::Linear => {
                let s = pipe.acquire_consumer();
                assert_eq!(s.index(), want_stage);
                let v = slots[s.index() as usize].read();
                s.release();
                v
            }
            Api::ScopedExplicit => {
                let s = pipe.consume_explicit();
                let v = slots[s.index() as usize].read();
                s.arrive();
                v
            }
            Api::LinearExplicit => {
                let s = pipe.acquire_consumer();
                let v = slots[s.index() as usize].read();
                s.arrive();
                s.release_without_signal();
                v
            }
            Api::Direct => {
                let ready = pipe.try_wait_producer();
                pipe.wait_producer_if_needed(ready);
                let stage = pipe.consumer_stage();
                assert_eq!(stage, want_stage);
                let v = slots[stage as usize].read();
                pipe.consumer_mbar(stage).arrive();
                pipe.consumer_step();
                v
            }
        };
        assert_eq!(got, seq(i), "item {i}: lost, duplicated or reordered");
        seen += 1;
    }
    seen
}

/// Runs `body` under loom with `preemption_bound`; returns the number of
/// executions explored.
fn explore(preemption_bound: usize, body: impl Fn() + Sync + Send + 'static) -> usize {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    let iterations = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        body();
    });
    iterations.load(Relaxed)
}

/// One producer (the model's main thread) and `consumers` consumer threads
/// over a `STAGES`-stage ring, `items` items, each role on its API.
fn pipeline_model<const STAGES: usize>(
    consumers: u32,
    items: u32,
    producer_api: Api,
    consumer_api: Api,
    preemption_bound: usize,
) {
    let explored = explore(preemption_bound, move || {
        let smem = Arc::new(Smem::<STAGES>::new());
        let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"loom");
        pipe.init_barriers(1, consumers);
        let handles: Vec<_> = (0..consumers)
            .map(|_| {
                let smem = smem.clone();
                loom::thread::spawn(move || {
                    let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"loom");
                    consumer(&mut pipe, &smem.slots, items, consumer_api)
                })
            })
            .collect();
        producer(&mut pipe, &smem.slots, items, producer_api);
        for h in handles {
            assert_eq!(h.join().unwrap(), items, "every consumer saw every item");
        }
    });
    assert!(
        explored > 5,
        "loom explored only {explored} executions ({STAGES} stages, {consumers} consumers)"
    );
}

// ----- the models ----------------------------------------------------------

/// Every API on both sides: one consumer over 1, 2 and 3 stages (`2 ×
/// STAGES` items: two laps, every phase flips), preemption bound 3; two
/// consumers (broadcast, `empty` count 2) over 1 stage (2 items: a wrap),
/// preemption bound 1 — two consumers multiply the schedules (and the
/// stale values each relaxed load and CAS retry may see) by ~100.
fn every_stage_count(producer_api: Api, consumer_api: Api) {
    pipeline_model::<1>(1, 2, producer_api, consumer_api, 3);
    pipeline_model::<2>(1, 4, producer_api, consumer_api, 3);
    pipeline_model::<3>(1, 6, producer_api, consumer_api, 3);
    pipeline_model::<1>(2, 2, producer_api, consumer_api, 1);
}

#[test]
fn scoped_api() {
    every_stage_count(Api::Scoped, Api::Scoped);
    // two consumers, 2 stages, 3 items (a wrap)
    pipeline_model::<2>(2, 3, Api::Scoped, Api::Scoped, 1);
}

/// The largest model (~20 s in release on one core): its own test, so the
/// harness runs it beside the others.
#[test]
fn scoped_api_two_consumers_three_stages() {
    pipeline_model::<3>(2, 3, Api::Scoped, Api::Scoped, 1);
}

#[test]
fn linear_api() {
    every_stage_count(Api::Linear, Api::Linear);
    // two consumers, 2 stages, one item per stage, then the tail's wrap
    pipeline_model::<2>(2, 2, Api::Linear, Api::Linear, 1);
}

#[test]
fn explicit_signalling_scoped() {
    // consume_explicit + stage.arrive(); produce_explicit + stage.arrive()
    every_stage_count(Api::ScopedExplicit, Api::ScopedExplicit);
}

#[test]
fn explicit_signalling_linear() {
    // acquire + stage.arrive() + release_without_signal()
    every_stage_count(Api::LinearExplicit, Api::LinearExplicit);
    pipeline_model::<2>(2, 2, Api::LinearExplicit, Api::LinearExplicit, 1);
}

#[test]
fn try_wait_and_wait_if_needed() {
    every_stage_count(Api::Direct, Api::Direct);
}

#[test]
fn mixed_apis_across_roles() {
    // Each role's API is its own business: any pair must interoperate.
    for (i, &p) in ALL_APIS.iter().enumerate() {
        let c = ALL_APIS[(i + 2) % ALL_APIS.len()];
        pipeline_model::<2>(1, 3, p, c, 2);
    }
}

/// The epilogue: a main-loop load thread signals a `LoadOrderBarrier` once
/// after its "prologue" (a write the epilogue-load thread then reads), the
/// epilogue-load thread (one elected lane of its warp) fills C stages with
/// `arrive_expect_tx` + a simulated TMA write + `complete_tx`, and
/// `consumer_warps` epilogue warps (32 lanes each: `with_lanes(32)`, so one
/// `consume()` is 32 arrivals) read every C tile.
fn epi_load_model<const STAGES: usize>(consumer_warps: u32, tiles: u32, preemption_bound: usize) {
    struct EpiSmem<const S: usize> {
        order: MbarrierCell,
        prologue: Slot,
        ring: Smem<S>,
    }
    let explored = explore(preemption_bound, move || {
        let smem = Arc::new(EpiSmem::<STAGES> {
            order: MbarrierCell::new(),
            prologue: Slot::new(),
            ring: Smem::new(),
        });
        let main_order = LoadOrderBarrier::new(SharedRef::from_ref(&smem.order), c"order");
        main_order.init(1);
        let epi = EpiLoadPipeline::new(smem.ring.bars(), c"epi-load");
        epi.init_barriers(1, WARP_SIZE * consumer_warps);

        let loader = {
            let smem = smem.clone();
            loom::thread::spawn(move || {
                let mut order = LoadOrderBarrier::new(SharedRef::from_ref(&smem.order), c"order");
                let mut epi = EpiLoadPipeline::new(smem.ring.bars(), c"epi-load");
                with_lanes(WARP_SIZE, || {
                    order.wait_and_step();
                    assert_eq!(smem.prologue.read(), 7, "prologue issued first");
                    elect_one(|| {
                        for t in 0..tiles {
                            let s = epi.produce_explicit();
                            s.arrive_expect_tx(8);
                            // the "TMA": bytes land, then the transaction completes
                            smem.ring.slots[s.index() as usize].write(seq(t));
                            s.mbar().complete_tx(8);
                        }
                        epi.drain();
                    });
                    // after the tail every C stage is free again: reuse races
                    // with any epilogue read the tail did not wait for
                    for slot in &smem.ring.slots {
                        slot.write(0);
                    }
                });
            })
        };
        let epilogue: Vec<_> = (0..consumer_warps)
            .map(|_| {
                let smem = smem.clone();
                loom::thread::spawn(move || {
                    let mut epi = EpiLoadPipeline::new(smem.ring.bars(), c"epi-load");
                    with_lanes(WARP_SIZE, || {
                        for t in 0..tiles {
                            let c = epi.consume();
                            assert_eq!(c.index(), t % STAGES as u32);
                            assert_eq!(smem.ring.slots[c.index() as usize].read(), seq(t));
                        }
                    });
                })
            })
            .collect();
        // main-loop load warp: prologue, then release the epilogue loader
        let mut main_order = main_order;
        smem.prologue.write(7);
        elect_one(|| main_order.arrive_and_step());
        loader.join().unwrap();
        for h in epilogue {
            h.join().unwrap();
        }
    });
    assert!(explored > 5, "loom explored only {explored} executions");
}

#[test]
fn epi_load_pipeline_and_load_order_barrier() {
    epi_load_model::<1>(1, 2, 3);
    epi_load_model::<2>(1, 3, 2);
    epi_load_model::<1>(2, 1, 1);
}

// ----- the checker can fail --------------------------------------------------

/// Runs a model that must be rejected; returns loom's panic message.
fn must_fail(preemption_bound: usize, body: impl Fn() + Sync + Send + 'static) -> String {
    let result = catch_unwind(AssertUnwindSafe(|| explore(preemption_bound, body)));
    let payload = match result {
        Ok(n) => panic!("loom accepted a broken protocol ({n} executions explored)"),
        Err(p) => p,
    };
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A consumer that starts at phase 1 (instead of 0) passes its first wait on
/// a fresh `full` barrier at once and reads slot 0 before (or unordered
/// with) the producer's write: loom reports the causality violation on the
/// slot, or the consumer sees the stale 0 instead of sequence number 1.
#[test]
fn consumer_starting_at_phase_one_is_caught() {
    let msg = must_fail(2, || {
        let smem = Arc::new(Smem::<2>::new());
        let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"wrong-phase");
        pipe.init_barriers(1, 1);
        let reader = {
            let smem = smem.clone();
            loom::thread::spawn(move || {
                let mut pipe = ProducerConsumerPipeline::with_states(
                    smem.bars(),
                    c"wrong-phase",
                    PipelineState::producer_start(),
                    PipelineState::at(0, 1), // wrong: the consumer starts at phase 0
                );
                consumer(&mut pipe, &smem.slots, 3, Api::Scoped)
            })
        };
        producer(&mut pipe, &smem.slots, 3, Api::Scoped);
        reader.join().unwrap();
    });
    assert!(
        msg.contains("Causality violation") || msg.contains("lost, duplicated or reordered"),
        "loom failed for another reason: {msg}"
    );
}

/// A producer that starts at phase 0 (the classic bug) blocks on its first
/// `empty` wait forever: loom reports the hang (every execution spins until
/// the branch limit, or deadlocks).
#[test]
fn producer_starting_at_phase_zero_is_caught() {
    let msg = must_fail(1, || {
        let smem = Arc::new(Smem::<1>::new());
        let mut pipe = ProducerConsumerPipeline::with_states(
            smem.bars(),
            c"wrong-phase",
            PipelineState::at(0, 0), // wrong: the producer starts at phase 1
            PipelineState::consumer_start(),
        );
        pipe.init_barriers(1, 1);
        let reader = {
            let smem = smem.clone();
            loom::thread::spawn(move || {
                let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"wrong-phase");
                consumer(&mut pipe, &smem.slots, 1, Api::Scoped)
            })
        };
        producer(&mut pipe, &smem.slots, 1, Api::Scoped);
        reader.join().unwrap();
    });
    assert!(
        msg.contains("branches") || msg.contains("deadlock"),
        "loom failed for another reason: {msg}"
    );
}

/// A producer that releases a stage before it has written the payload (the
/// write is on the wrong side of the arrive) races with the consumer's read.
#[test]
fn write_after_release_is_caught() {
    let msg = must_fail(2, || {
        let smem = Arc::new(Smem::<1>::new());
        let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"late-write");
        pipe.init_barriers(1, 1);
        let reader = {
            let smem = smem.clone();
            loom::thread::spawn(move || {
                let mut pipe = ProducerConsumerPipeline::new(smem.bars(), c"late-write");
                consumer(&mut pipe, &smem.slots, 1, Api::Scoped)
            })
        };
        let s = pipe.acquire_producer();
        let index = s.index() as usize;
        s.release();
        smem.slots[index].write(seq(0)); // wrong: after the arrive
        reader.join().unwrap();
    });
    assert!(
        msg.contains("Causality violation") || msg.contains("lost, duplicated or reordered"),
        "loom failed for another reason: {msg}"
    );
}

/// `LoadOrderBarrier` used once per tile with nothing that keeps the
/// main-loop warp within one tile of the epilogue-load warp: if the main-loop
/// warp arrives for tiles 0 and 1 before the epilogue loader waits for tile
/// 0, the barrier has completed two phases, its parity is back to 0, and the
/// loader's wait for parity 0 never passes. loom finds that schedule. (This
/// is why CUTLASS arrives on its load-order barrier only for the first tile.)
#[test]
fn load_order_barrier_two_tiles_ahead_is_caught() {
    let msg = must_fail(1, || {
        let cell = Arc::new(MbarrierCell::new());
        let mut main = LoadOrderBarrier::new(SharedRef::from_ref(&*cell), c"order");
        main.init(1);
        let loader = {
            let cell = cell.clone();
            loom::thread::spawn(move || {
                let mut epi = LoadOrderBarrier::new(SharedRef::from_ref(&*cell), c"order");
                for _tile in 0..2 {
                    epi.wait_and_step();
                }
            })
        };
        for _tile in 0..2 {
            main.arrive_and_step();
        }
        loader.join().unwrap();
    });
    assert!(
        msg.contains("branches") || msg.contains("deadlock"),
        "loom failed for another reason: {msg}"
    );
}
