//! Exhaustive model checks of `OrderedBarrier` on the CPU backend, under
//! loom (`tools/test-loom.sh`; see `loom_pipeline.rs` for why loom and how
//! the models are bounded).
//!
//! # The models
//!
//! `GROUPS` groups of `threads` loom threads each (one thread = one arriving
//! lane; the barrier is initialized with `threads` arrivals per turn) take
//! `DEPTH` turns per round for `rounds(g)` rounds. Turn `d` guards one
//! `loom::cell::UnsafeCell<u64>` counter per lane: inside the turn, lane `l`
//! of the group reads its cell, checks it equals the number of turns taken
//! before (round-robin order: `round × GROUPS + group`) and increments it.
//! Lanes of one group never share a cell; lane `l` of the next group touches
//! the same cell only after the barrier. Two groups inside the same turn at
//! once is a
//! loom *causality violation*; a group out of order fails the count check;
//! a hang (a wait that never passes) ends in loom's branch limit or
//! deadlock report.
//!
//! The broken-protocol controls at the end must be rejected: group 1
//! starting at phase 1 (as if it went first), an init count smaller than
//! the group's arriving threads, and a group that arrives before its
//! turn's work.
#![cfg(loom)]

use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
use baton::protocol::state::PipelineState;
use baton::smem::SharedRef;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// A cell only ordered accesses may touch (loom checks it).
struct Slot(UnsafeCell<u64>);

// SAFETY: accesses are ordered by the ordered barrier; loom reports any
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

/// Most arriving threads per group in a model.
const MAX_LANES: usize = 2;

struct Smem<const D: usize, const G: usize> {
    order: OrderedBarriers<D, G>,
    /// Turns taken so far, per turn kind and lane: lane `l` of every group
    /// touches cell `[d][l]` in turn `d`, so within a group the lanes never
    /// share a cell, and across groups only the barrier orders them.
    count: [[Slot; MAX_LANES]; D],
}

impl<const D: usize, const G: usize> Smem<D, G> {
    fn new() -> Self {
        Self {
            order: OrderedBarriers::new(),
            count: core::array::from_fn(|_| core::array::from_fn(|_| Slot::new())),
        }
    }
    fn order(&self) -> SharedRef<'_, OrderedBarriers<D, G>> {
        SharedRef::from_ref(&self.order)
    }
}

/// How a thread of a group behaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Behaviour {
    /// The protocol: wait, work, arrive.
    Correct,
    /// Wrong: arrive first, then do the turn's work.
    ArriveBeforeWork,
}

/// Thread `lane` of group `group`: `rounds` rounds of `D` turns; in each
/// turn it reads its own counter cell of that turn kind, checks the order and
/// increments it.
fn group_thread<const D: usize, const G: usize>(
    order: &mut OrderedBarrier<'_, D, G>,
    smem: &Smem<D, G>,
    lane: usize,
    rounds: u32,
    behaviour: Behaviour,
) {
    let group = order.group() as u64;
    for round in 0..rounds as u64 {
        for (d, cells) in smem.count.iter().enumerate() {
            order.wait();
            if behaviour == Behaviour::ArriveBeforeWork {
                order.arrive(); // wrong: hands the turn over before the work
            }
            let got = cells[lane].read();
            let want = round * G as u64 + group;
            assert_eq!(
                got, want,
                "turn {d}: group {group} round {round} out of order"
            );
            cells[lane].write(got + 1);
            if behaviour == Behaviour::Correct {
                order.arrive();
            }
        }
    }
}

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

/// The model: `G` groups × `threads`, group `g` runs `rounds[g]` rounds;
/// `init_count` arrivals per turn; group `wrong_phase_group` (if any)
/// starts at phase 1; `behaviour` for every thread. Group 0 lane 0 is the
/// model's main thread.
#[allow(clippy::too_many_arguments)]
fn model<const D: usize, const G: usize>(
    threads: u32,
    rounds: [u32; G],
    init_count: u32,
    wrong_phase_group: Option<u32>,
    behaviour: Behaviour,
    preemption_bound: usize,
) -> usize {
    assert!(threads as usize <= MAX_LANES);
    explore(preemption_bound, move || {
        let smem = Arc::new(Smem::<D, G>::new());
        // the protocol's start: group 0 at phase 1, the others at 0
        let handle = |group: u32| {
            if Some(group) == wrong_phase_group || group == 0 {
                PipelineState::at(0, 1)
            } else {
                PipelineState::at(0, 0)
            }
        };
        OrderedBarrier::new(smem.order(), 0, c"loom-order").init(init_count);
        let mut joins = Vec::new();
        for group in 0..G as u32 {
            for lane in 0..threads {
                if group == 0 && lane == 0 {
                    continue;
                }
                let smem = smem.clone();
                let state = handle(group);
                let rounds = rounds[group as usize];
                joins.push(loom::thread::spawn(move || {
                    let mut order =
                        OrderedBarrier::with_state(smem.order(), group, c"loom-order", state);
                    group_thread(&mut order, &smem, lane as usize, rounds, behaviour);
                }));
            }
        }
        let mut order = OrderedBarrier::with_state(smem.order(), 0, c"loom-order", handle(0));
        group_thread(&mut order, &smem, 0, rounds[0], behaviour);
        for j in joins {
            j.join().unwrap();
        }
        // every turn of every group happened, in order
        let total: u64 = rounds.iter().map(|&r| r as u64).sum();
        for cells in &smem.count {
            for c in &cells[..threads as usize] {
                assert_eq!(c.read(), total, "a turn was lost");
            }
        }
    })
}

// ----- the protocol holds ---------------------------------------------------

/// The ping-pong configuration (2 groups, main-loop + epilogue turns), one
/// arriving thread per group, two rounds each: every turn kind's barriers
/// complete two phases (both parities).
#[test]
fn two_groups_two_turns() {
    let n = model::<2, 2>(1, [2, 2], 1, None, Behaviour::Correct, 3);
    assert!(n > 5, "loom explored only {n} executions");
}

/// The round-robin split of an odd number of tiles: group 1 leaves one
/// round early; group 0's last turns wait only for arrivals that come.
#[test]
fn two_groups_uneven_rounds() {
    let n = model::<2, 2>(1, [2, 1], 1, None, Behaviour::Correct, 3);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Two arriving threads per group (init count 2): the next group waits for
/// both; one turn kind (the FlashAttention-3 softmax/GEMM order), one round
/// each plus group 0's second round (group 0 waits for both of group 1's
/// arrivals). Four spinning threads: the largest model, preemption bound 1.
#[test]
fn two_groups_two_threads_each() {
    let n = model::<1, 2>(2, [2, 1], 2, None, Behaviour::Correct, 1);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Three groups round the ring, one turn kind.
#[test]
fn three_groups() {
    let n = model::<1, 3>(1, [2, 2, 1], 1, None, Behaviour::Correct, 2);
    assert!(n > 5, "loom explored only {n} executions");
}

// ----- the checker can fail -------------------------------------------------

fn must_fail(body: impl FnOnce() -> usize) -> String {
    let payload = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(n) => panic!("loom accepted a broken protocol ({n} executions explored)"),
        Err(p) => p,
    };
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn caught(msg: &str) -> bool {
    msg.contains("Causality violation")
        || msg.contains("out of order")
        || msg.contains("a turn was lost")
        || msg.contains("branches")
        || msg.contains("deadlock")
}

/// Wrong ordering: group 1 starts at phase 1 as if it went first. Its first
/// wait on a fresh barrier passes at once, so both groups are inside turn 0
/// together: loom reports the unordered access (or the order check fails).
#[test]
fn second_group_starting_at_phase_one_is_caught() {
    let msg = must_fail(|| model::<2, 2>(1, [1, 1], 1, Some(1), Behaviour::Correct, 2));
    assert!(caught(&msg), "loom failed for another reason: {msg}");
    assert!(
        msg.contains("Causality violation") || msg.contains("out of order"),
        "the wrong order must show as overlap or disorder: {msg}"
    );
}

/// Wrong arrive count: groups of two arriving threads on barriers
/// initialized for one. The first thread's arrival completes the phase and
/// lets the next group in while the second thread is still inside its turn
/// (and its own late arrival completes a phase nobody earned).
#[test]
fn arrive_count_below_the_group_size_is_caught() {
    let msg = must_fail(|| model::<1, 2>(2, [1, 1], 1, None, Behaviour::Correct, 1));
    assert!(caught(&msg), "loom failed for another reason: {msg}");
}

/// Wrong side of the arrive: a group hands its turn over before its work,
/// so the next group's turn overlaps it.
#[test]
fn arrive_before_work_is_caught() {
    let msg = must_fail(|| model::<1, 2>(1, [1, 1], 1, None, Behaviour::ArriveBeforeWork, 2));
    assert!(
        msg.contains("Causality violation") || msg.contains("out of order"),
        "loom failed for another reason: {msg}"
    );
}

// ----- the ping-pong GEMM's configuration -------------------------------------

/// The configuration of the ping-pong GEMM (`kernels/src/gemm_bf16.rs`,
/// `gemm_pingpong`), one thread per role: a producer fills a `STAGES`-ring
/// (`full` count 1, `empty` count 1: each stage has one consuming group),
/// tile `t` has `k_blocks[t]` stages and belongs to group `t mod 2`, which
/// skips the other group's stages (`consumer_skip`); each group consumes
/// its tile's stages inside its main-loop turn (turn 0) and writes the
/// tile's sum to one shared staging cell inside its epilogue turn (turn 1),
/// then publishes it. Checks every tile's sum (nothing lost or paired with
/// another tile's stage) and that the staging cell is never touched by two
/// groups at once; the producer's tail then overwrites the ring.
fn pingpong_gemm_model<const STAGES: usize>(
    k_blocks: &'static [u32],
    skip_other_tiles: bool,
    preemption_bound: usize,
) -> usize {
    use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
    struct GemmSmem<const S: usize> {
        ring: PipelineBarriers<S>,
        slots: [Slot; S],
        order: OrderedBarriers<2, 2>,
        staging: Slot,
    }
    explore(preemption_bound, move || {
        let smem = Arc::new(GemmSmem::<STAGES> {
            ring: PipelineBarriers::new(),
            slots: core::array::from_fn(|_| Slot::new()),
            order: OrderedBarriers::new(),
            staging: Slot::new(),
        });
        ProducerConsumerPipeline::new(SharedRef::from_ref(&smem.ring), c"ring").init_barriers(1, 1);
        OrderedBarrier::new(SharedRef::from_ref(&smem.order), 0, c"order").init(1);
        // the value of stage `i` of tile `t`: distinct per (tile, stage)
        let value = |t: usize, i: u32| (t as u64 + 1) * 100 + i as u64;
        let groups: Vec<_> = (0..2u32)
            .map(|group| {
                let smem = smem.clone();
                loom::thread::spawn(move || {
                    let mut pipe =
                        ProducerConsumerPipeline::new(SharedRef::from_ref(&smem.ring), c"ring");
                    let mut order =
                        OrderedBarrier::new(SharedRef::from_ref(&smem.order), group, c"order");
                    let mut sums = Vec::new();
                    for (t, &kb) in k_blocks.iter().enumerate() {
                        if t as u32 % 2 != group {
                            if skip_other_tiles {
                                pipe.consumer_skip(kb);
                            }
                            continue;
                        }
                        order.wait(); // turn 0: main loop
                        let mut sum = 0;
                        for _ in 0..kb {
                            let s = pipe.acquire_consumer();
                            sum += smem.slots[s.index() as usize].read();
                            s.release();
                        }
                        order.arrive();
                        order.wait(); // turn 1: epilogue through the staging cell
                        smem.staging.write(sum);
                        let staged = smem.staging.read();
                        order.arrive();
                        sums.push((t, staged));
                    }
                    sums
                })
            })
            .collect();
        let mut producer = ProducerConsumerPipeline::new(SharedRef::from_ref(&smem.ring), c"ring");
        for (t, &kb) in k_blocks.iter().enumerate() {
            for i in 0..kb {
                let s = producer.acquire_producer();
                smem.slots[s.index() as usize].write(value(t, i));
                s.release();
            }
        }
        producer.drain();
        for slot in &smem.slots {
            slot.write(0); // every stage released: reuse races with a late read
        }
        for g in groups {
            for (t, got) in g.join().unwrap() {
                let want: u64 = (0..k_blocks[t]).map(|i| value(t, i)).sum();
                assert_eq!(got, want, "tile {t}: out of order sum");
            }
        }
    })
}

/// Three tiles of 2, 1 and 2 K blocks over a 2-stage ring: group 0 takes
/// tiles 0 and 2, group 1 tile 1 and leaves a round early; skips cross a
/// ring wrap. Four spinning threads: preemption bound 1 (3 s in release;
/// bound 2 passes too, in ~1 min).
#[test]
fn pingpong_gemm_schedule() {
    let n = pingpong_gemm_model::<2>(&[2, 1, 2], true, 1);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Wrong: a group that does not skip the other group's stages waits on a
/// stage of the other group's tile (and its phase is off from then on): it
/// reads another tile's data, or both groups wait for the same fill.
#[test]
fn pingpong_gemm_without_skip_is_caught() {
    let msg = must_fail(|| pingpong_gemm_model::<2>(&[1, 1], false, 2));
    assert!(
        caught(&msg) || msg.contains("out of order sum"),
        "loom failed for another reason: {msg}"
    );
}
