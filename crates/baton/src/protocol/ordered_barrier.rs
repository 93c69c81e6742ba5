//! `OrderedBarrier`: `GROUPS` math warpgroups take turns over a shared
//! resource in a fixed order — group 0, 1, …, `GROUPS − 1`, 0, 1, … — once
//! per *turn kind* (`DEPTH` of them per round). The counterpart of CUTLASS's
//! `OrderedSequenceBarrier`.
//!
//! A ping-pong GEMM uses `DEPTH = 2`, `GROUPS = 2`: turn 0 is the main loop
//! (the tensor cores), turn 1 the epilogue (the TMA store and its shared
//! staging). Group 0 runs its main loop, then hands the tensor cores to
//! group 1 and runs its epilogue while group 1's main loop runs:
//!
//! ```text
//!             round 0                        round 1
//! group 0 │ turn 0: mainloop │ turn 1: epilogue │             │ turn 0: mainloop │ …
//! group 1 │                  │ turn 0: mainloop │ turn 1: epi │                  │ …
//!                            ▲ group 0 arrives on turn[0][1]
//! ```
//!
//! # The protocol
//!
//! Shared memory holds `DEPTH × GROUPS` `mbarrier`s ([`OrderedBarriers`]),
//! `turn[d][g]` = "group `g` may take turn `d`". For every round and every
//! turn `d = 0, 1, …, DEPTH − 1` in that order, group `g`:
//!
//! | step | barrier | who | how many |
//! |---|---|---|---|
//! | [`wait`](OrderedBarrier::wait) | `turn[d][g]` for its phase parity | every thread of group `g` | — |
//! | the turn's work | — | group `g` alone among the groups | — |
//! | [`arrive`](OrderedBarrier::arrive) | `turn[d][(g + 1) % GROUPS]` | every arriving thread of group `g`, then it steps | `arrivals_per_turn` (init) complete the phase, e.g. 128: every thread of a warpgroup |
//!
//! Phase rules: each group keeps one [`PipelineState<DEPTH>`] (the turn
//! `d` is its index): **group 0 starts at (turn 0, phase 1)**, every other
//! group at (turn 0, phase 0). A fresh barrier is in phase 0, so group 0's
//! first wait passes at once and everybody else waits for the group before
//! it. After each `arrive` the state steps; after turn `DEPTH − 1` it wraps
//! to turn 0 and flips the phase.
//!
//! Why one phase bit is enough: group `g − 1` can arrive on `turn[d][g]` for
//! round `r + 1` only after its own wait for round `r + 1`, which (around
//! the ring) needs group `g`'s arrival of round `r`, which follows group
//! `g`'s wait of round `r`. So a barrier is never more than one completed
//! phase ahead of its waiter. This holds only while **every group takes
//! every turn of every round, in order**; a group must not skip a turn
//! (there is no `advance` without an arrive).
//!
//! Leaving: if group `g` runs `r_g` rounds, the others never wait for a round
//! that does not come iff `r_0 ≥ r_1 ≥ … ≥ r_{GROUPS−1} ≥ r_0 − 1` — the
//! round-robin split of a work list (item `i` to group `i % GROUPS`) always
//! satisfies it. An arrival nobody waits for at the end is harmless; the
//! CTA must still be resident (it is while any group runs).
//!
//! Memory: `mbarrier.arrive` releases and `try_wait` acquires at CTA scope,
//! so the next group sees every generic-proxy write the arriving threads
//! made before arriving (shared staging, say). Asynchronous work is not
//! covered: a group handing over a TMA store's staging buffer must wait for
//! the store's reads (`cp.async.bulk.wait_group.read`) before it arrives;
//! `wgmma` in flight must be waited (`wgmma.wait_group`) if the next group
//! must not overlap it.
//!
//! Init: one thread calls [`OrderedBarrier::init`] with the number of
//! arriving threads per turn, before any thread uses the barrier; then the
//! block synchronizes.
//!
//! # Why `mbarrier`s and not named barriers
//!
//! FlashAttention-3 orders its warpgroups with named barriers (`bar.sync id,
//! 256` by the waiting group, `bar.arrive id, 256` by the signalling one);
//! CUTLASS uses `mbarrier`s. baton uses `mbarrier`s because:
//! * the phase is explicit, so a hung wait reports barrier, turn, group and
//!   phase (debug builds bound every wait, like the pipelines', see
//!   [`diag`](super::diag)) — a named barrier has no phase to report;
//! * the CPU backend and loom already model `mbarrier` semantics exactly, so
//!   the order is model-checked with the same primitive the GPU runs;
//! * named barrier ids (16 per CTA, id 0 = `__syncthreads`) are a global
//!   resource the epilogue and other roles also allocate; `mbarrier`s are
//!   ordinary shared memory (8 bytes each: 32 bytes for 2 × 2) with no id to
//!   collide.
//!
//! The cost is a shared-memory `try_wait` poll instead of a hardware wait,
//! measured as part of the ping-pong kernel (BENCHMARKS.md).

use super::diag::{Role, WaitSite};
use super::state::PipelineState;
use crate::arch::current::{BarrierRef, MbarrierCell, fence_barrier_init};
use crate::smem::SharedRef;
use core::ffi::CStr;

/// The `DEPTH × GROUPS` barriers of an [`OrderedBarrier`], as laid out in
/// shared memory: `turn[d][g]`, 8 bytes each on the GPU.
///
/// ```
/// use baton::protocol::ordered_barrier::OrderedBarriers;
/// assert_eq!(OrderedBarriers::<2, 2>::GPU_BYTES, 32);
/// ```
#[repr(C)]
pub struct OrderedBarriers<const DEPTH: usize, const GROUPS: usize> {
    turn: [[MbarrierCell; GROUPS]; DEPTH],
}

impl<const DEPTH: usize, const GROUPS: usize> OrderedBarriers<DEPTH, GROUPS> {
    /// Bytes of shared memory the barriers take on the GPU (8 per barrier).
    pub const GPU_BYTES: usize = 8 * DEPTH * GROUPS;
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const DEPTH: usize, const GROUPS: usize> OrderedBarriers<DEPTH, GROUPS> {
    /// Uninitialized barriers in host memory (CPU backend).
    ///
    /// ```
    /// use baton::protocol::ordered_barrier::OrderedBarriers;
    /// let _bars = OrderedBarriers::<2, 2>::new();
    /// ```
    pub fn new() -> Self {
        Self {
            turn: core::array::from_fn(|_| core::array::from_fn(|_| MbarrierCell::new())),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const DEPTH: usize, const GROUPS: usize> Default for OrderedBarriers<DEPTH, GROUPS> {
    fn default() -> Self {
        Self::new()
    }
}

/// One group's handle on an ordered sequence of turns (see the [module
/// docs](self) for the protocol): [`wait`](Self::wait) for the group's turn,
/// do the turn's work, [`arrive`](Self::arrive) to hand the turn to the next
/// group and step to the next turn — or [`turn`](Self::turn) for a guard
/// that does both.
///
/// Every thread of a group builds its own handle (same barriers, same
/// `group`); neither `Copy` nor `Clone`, so a group's position cannot fork.
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
/// use std::sync::Mutex;
///
/// struct Smem { order: OrderedBarriers<2, 2>, log: Mutex<Vec<(u32, u32)>> }
/// let block = CpuBlock::new(Smem { order: OrderedBarriers::new(), log: Mutex::new(vec![]) });
/// // warp 0 is group 0, warp 1 is group 1 (32 arrivals per turn: one warp)
/// block.run_warps(2, |warp, smem| {
///     let bars = baton::smem_field!(smem, Smem, order);
///     let mut order = OrderedBarrier::new(bars, warp.index(), c"math-order");
///     if warp.index() == 0 {
///         order.init(32);
///     }
///     warp.sync_block();
///     for _round in 0..3 {
///         for turn in 0..2 {
///             let _t = order.turn(); // waits; arrives + steps on drop
///             smem.get().log.lock().unwrap().push((turn, warp.index()));
///         }
///     }
/// });
/// let log = block.smem().get().log.lock().unwrap().clone();
/// // per turn kind, the groups alternate 0, 1, 0, 1, …
/// for turn in 0..2 {
///     let order: Vec<u32> = log.iter().filter(|e| e.0 == turn).map(|e| e.1).collect();
///     assert_eq!(order, [0, 1, 0, 1, 0, 1]);
/// }
/// ```
pub struct OrderedBarrier<'a, const DEPTH: usize, const GROUPS: usize> {
    barriers: SharedRef<'a, OrderedBarriers<DEPTH, GROUPS>>,
    group: u32,
    state: PipelineState<DEPTH>,
    name: &'static CStr,
}

impl<'a, const DEPTH: usize, const GROUPS: usize> OrderedBarrier<'a, DEPTH, GROUPS> {
    const VALID: () = assert!(
        GROUPS >= 2 && GROUPS <= 32 && DEPTH >= 1 && DEPTH <= 32,
        "an ordered barrier needs 2..=32 groups and 1..=32 turns per round"
    );

    /// Number of groups taking turns.
    pub const GROUPS: u32 = GROUPS as u32;
    /// Turns per round.
    pub const DEPTH: u32 = DEPTH as u32;

    /// Group `group`'s handle over `barriers`, named `name` in hang
    /// reports, at the start of the sequence: group 0 at (turn 0, phase 1),
    /// the others at (turn 0, phase 0). Panics (CPU) or traps (GPU) if
    /// `group >= GROUPS`.
    ///
    /// ```
    /// use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let g1 = OrderedBarrier::new(SharedRef::from_ref(&bars), 1, c"order");
    /// assert_eq!((g1.group(), g1.turn_index(), g1.phase()), (1, 0, 0));
    /// ```
    #[inline(always)]
    pub fn new(
        barriers: SharedRef<'a, OrderedBarriers<DEPTH, GROUPS>>,
        group: u32,
        name: &'static CStr,
    ) -> Self {
        let state = if group == 0 {
            PipelineState::at(0, 1)
        } else {
            PipelineState::at(0, 0)
        };
        Self::with_state(barriers, group, name, state)
    }

    /// A handle at an explicit position (resuming a sequence; tests that
    /// prove a wrong phase rule is caught). Panics (CPU) or traps (GPU) if
    /// `group >= GROUPS`.
    ///
    /// ```
    /// use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// use baton::protocol::state::PipelineState;
    /// use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let g0 = OrderedBarrier::with_state(SharedRef::from_ref(&bars), 0, c"order", PipelineState::at(1, 1));
    /// assert_eq!((g0.turn_index(), g0.phase()), (1, 1));
    /// ```
    #[inline(always)]
    pub fn with_state(
        barriers: SharedRef<'a, OrderedBarriers<DEPTH, GROUPS>>,
        group: u32,
        name: &'static CStr,
        state: PipelineState<DEPTH>,
    ) -> Self {
        let () = Self::VALID;
        assert!(group < GROUPS as u32, "ordered barrier group out of range");
        Self {
            barriers,
            group,
            state,
            name,
        }
    }

    /// Initializes every barrier with `arrivals_per_turn`: the number of
    /// threads of one group that [`arrive`](Self::arrive) per turn (128 when
    /// every thread of a warpgroup arrives; 1 when one elected thread
    /// arrives after the group synchronized), then fences the
    /// initialization (`fence.mbarrier_init`).
    ///
    /// Contract: exactly **one** thread calls this, before any thread uses
    /// the barrier; the block then synchronizes.
    ///
    /// ```
    /// use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<1, 2>::new();
    /// OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"order").init(1);
    /// ```
    #[inline(always)]
    pub fn init(&self, arrivals_per_turn: u32) {
        for d in 0..Self::DEPTH {
            for g in 0..Self::GROUPS {
                // SAFETY: single initializing thread, before use (contract
                // above); the indices are in range.
                unsafe { self.barrier_unchecked(d, g).init(arrivals_per_turn) };
            }
        }
        fence_barrier_init();
    }

    #[inline(always)]
    fn barrier_unchecked(&self, turn: u32, group: u32) -> BarrierRef<'a> {
        let rows = crate::smem_field!(self.barriers, OrderedBarriers<DEPTH, GROUPS>, turn);
        // SAFETY: callers pass a `PipelineState` index (< DEPTH) and a group
        // checked at construction or reduced mod GROUPS (< GROUPS).
        BarrierRef::new(unsafe {
            rows.at_unchecked(turn as usize)
                .at_unchecked(group as usize)
        })
    }

    /// `turn[turn][group]`: arrived on by group `group − 1` (mod `GROUPS`),
    /// waited on by group `group`. Panics/traps if out of range.
    ///
    /// ```
    /// use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"order");
    /// g0.init(1);
    /// assert!(g0.barrier(0, 0).try_wait_parity(1)); // fresh: phase 0 running
    /// ```
    #[inline(always)]
    pub fn barrier(&self, turn: u32, group: u32) -> BarrierRef<'a> {
        let rows = crate::smem_field!(self.barriers, OrderedBarriers<DEPTH, GROUPS>, turn);
        BarrierRef::new(rows.at(turn as usize).at(group as usize))
    }

    /// This handle's group.
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 3>::new();
    /// assert_eq!(OrderedBarrier::new(SharedRef::from_ref(&bars), 2, c"o").group(), 2);
    /// ```
    #[inline(always)]
    pub fn group(&self) -> u32 {
        self.group
    }

    /// The turn (`0..DEPTH`) this group takes next.
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// g0.init(1);
    /// g0.wait();
    /// g0.arrive();
    /// assert_eq!(g0.turn_index(), 1);
    /// ```
    #[inline(always)]
    pub fn turn_index(&self) -> u32 {
        self.state.index()
    }

    /// The phase parity this group waits for at [`turn_index`](Self::turn_index).
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<1, 2>::new();
    /// assert_eq!(OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o").phase(), 1);
    /// ```
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.state.phase()
    }

    /// Every thread of the group: waits until the previous group handed over
    /// this group's current turn (`turn[turn_index][group]` completes this
    /// group's phase). Debug builds bound the wait and report pipeline
    /// `name`, role "ordered group", barrier `turn[turn_index × GROUPS +
    /// group]` and the phase.
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<1, 2>::new();
    /// let g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// g0.init(1);
    /// g0.wait(); // group 0's first turn passes at once
    /// ```
    #[inline(always)]
    pub fn wait(&self) {
        let (turn, phase, group, name) = (
            self.state.index(),
            self.state.phase(),
            self.group,
            self.name,
        );
        self.barrier_unchecked(turn, group)
            .wait_parity(phase, move || WaitSite {
                pipeline: name,
                role: Role::OrderedGroup,
                stage: turn * GROUPS as u32 + group,
                phase,
            });
    }

    /// Non-blocking [`wait`](Self::wait): is it this group's turn?
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<1, 2>::new();
    /// let g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// let g1 = OrderedBarrier::new(SharedRef::from_ref(&bars), 1, c"o");
    /// g0.init(1);
    /// assert!(g0.try_wait() && !g1.try_wait());
    /// ```
    #[inline(always)]
    pub fn try_wait(&self) -> bool {
        self.barrier_unchecked(self.state.index(), self.group)
            .try_wait_parity(self.state.phase())
    }

    /// Every arriving thread of the group, after the turn's work: hands the
    /// current turn to the next group (one arrival per thread on
    /// `turn[turn_index][(group + 1) % GROUPS]`), then steps to the next
    /// turn (flipping the phase after turn `DEPTH − 1`).
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<1, 2>::new();
    /// let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// let g1 = OrderedBarrier::new(SharedRef::from_ref(&bars), 1, c"o");
    /// g0.init(1);
    /// g0.wait();
    /// g0.arrive();
    /// assert!(g1.try_wait()); // group 1's turn now
    /// assert!(!g0.try_wait()); // group 0 waits for group 1
    /// ```
    #[inline(always)]
    pub fn arrive(&mut self) {
        let next = if self.group + 1 == GROUPS as u32 {
            0
        } else {
            self.group + 1
        };
        self.barrier_unchecked(self.state.index(), next).arrive();
        self.state.step();
    }

    /// Scoped turn: [`wait`](Self::wait)s now, [`arrive`](Self::arrive)s
    /// (and steps) when the guard drops.
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// g0.init(1);
    /// {
    ///     let t = g0.turn();
    ///     assert_eq!(t.index(), 0); // the main-loop turn, say
    /// }
    /// assert_eq!(g0.turn_index(), 1);
    /// ```
    #[inline(always)]
    pub fn turn(&mut self) -> Turn<'_, 'a, DEPTH, GROUPS> {
        self.wait();
        Turn { order: self }
    }
}

/// A turn held by one group ([`OrderedBarrier::turn`]): the next group
/// waits until this guard drops (arrive + step).
///
/// ```
/// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
/// # use baton::smem::SharedRef;
/// let bars = OrderedBarriers::<1, 2>::new();
/// let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
/// let g1 = OrderedBarrier::new(SharedRef::from_ref(&bars), 1, c"o");
/// g0.init(1);
/// let t = g0.turn();
/// assert!(!g1.try_wait());
/// drop(t);
/// assert!(g1.try_wait());
/// ```
pub struct Turn<'o, 'a, const DEPTH: usize, const GROUPS: usize> {
    order: &'o mut OrderedBarrier<'a, DEPTH, GROUPS>,
}

impl<const DEPTH: usize, const GROUPS: usize> Turn<'_, '_, DEPTH, GROUPS> {
    /// Which turn of the round (`0..DEPTH`) this is.
    ///
    /// ```
    /// # use baton::protocol::ordered_barrier::{OrderedBarrier, OrderedBarriers};
    /// # use baton::smem::SharedRef;
    /// let bars = OrderedBarriers::<2, 2>::new();
    /// let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
    /// g0.init(1);
    /// assert_eq!(g0.turn().index(), 0);
    /// assert_eq!(g0.turn().index(), 1);
    /// ```
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.order.turn_index()
    }
}

impl<const DEPTH: usize, const GROUPS: usize> Drop for Turn<'_, '_, DEPTH, GROUPS> {
    #[inline(always)]
    fn drop(&mut self) {
        self.order.arrive();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arch::cpu::CpuBlock;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    /// Shared memory of the block tests: the barriers, an "in the resource"
    /// counter per turn kind, and the log of (turn, group, round).
    struct Smem<const D: usize, const G: usize> {
        order: OrderedBarriers<D, G>,
        inside: [AtomicU32; D],
        log: Mutex<Vec<(u32, u32, u32)>>,
    }

    /// `GROUPS` groups of `warps_per_group` warps (warp `w` is in group
    /// `w / warps_per_group`); group `g` runs `rounds(g)` rounds, every
    /// thread arrives (32 × warps_per_group arrivals per turn). Checks that
    /// no two groups are ever inside the same turn kind at once and that each
    /// turn kind's log is the round-robin order.
    fn run<const D: usize, const G: usize>(
        warps_per_group: u32,
        rounds: impl Fn(u32) -> u32 + Sync,
    ) {
        let block = CpuBlock::new(Smem::<D, G> {
            order: OrderedBarriers::new(),
            inside: core::array::from_fn(|_| AtomicU32::new(0)),
            log: Mutex::new(Vec::new()),
        });
        block.run_warps(G as u32 * warps_per_group, |warp, smem| {
            let group = warp.index() / warps_per_group;
            let first_warp = warp.index() % warps_per_group == 0;
            let bars = crate::smem_field!(smem, Smem<D, G>, order);
            let mut order = OrderedBarrier::new(bars, group, c"test-order");
            if warp.index() == 0 {
                order.init(32 * warps_per_group);
            }
            warp.sync_block();
            let s = smem.get();
            for round in 0..rounds(group) {
                for turn in 0..D as u32 {
                    let t = order.turn();
                    assert_eq!(t.index(), turn);
                    if first_warp {
                        // one entry per group and turn
                        let before = s.inside[turn as usize].fetch_add(1, Relaxed);
                        s.log.lock().unwrap().push((turn, group, round));
                        std::thread::yield_now();
                        assert_eq!(before, 0, "two groups inside turn {turn} at once");
                        s.inside[turn as usize].fetch_sub(1, Relaxed);
                    }
                    drop(t);
                }
            }
        });
        let log = block.smem().get().log.lock().unwrap().clone();
        let total: u32 = (0..G as u32).map(&rounds).sum();
        for turn in 0..D as u32 {
            let seq: Vec<(u32, u32)> = log
                .iter()
                .filter(|e| e.0 == turn)
                .map(|e| (e.1, e.2))
                .collect();
            let want: Vec<(u32, u32)> = (0..total).map(|i| (i % G as u32, i / G as u32)).collect();
            assert_eq!(seq, want, "turn {turn}: groups out of order");
        }
    }

    #[test]
    fn two_groups_two_turns_ping_pong() {
        run::<2, 2>(4, |_| 6); // warpgroups: 4 warps, 128 arrivals per turn
    }

    #[test]
    fn three_groups_one_turn() {
        run::<1, 3>(2, |_| 5);
    }

    #[test]
    fn three_groups_three_turns() {
        run::<3, 3>(1, |_| 4);
    }

    #[test]
    fn round_robin_split_may_leave_early() {
        // 7 items over 3 groups: rounds 3, 2, 2 — the last groups leave first.
        run::<2, 3>(1, |g| (7 - g).div_ceil(3));
        // 5 items over 2 groups: group 1 leaves one round early.
        run::<2, 2>(2, |g| (5 - g).div_ceil(2));
    }

    #[test]
    fn handover_publishes_the_previous_groups_writes() {
        // A plain (relaxed) counter, incremented inside each turn: every
        // group sees the exact count of the turns before it.
        struct S {
            order: OrderedBarriers<1, 2>,
            count: AtomicU32,
        }
        let block = CpuBlock::new(S {
            order: OrderedBarriers::new(),
            count: AtomicU32::new(0),
        });
        block.run_warps(2, |warp, smem| {
            let bars = crate::smem_field!(smem, S, order);
            let mut order = OrderedBarrier::new(bars, warp.index(), c"publish");
            if warp.index() == 0 {
                order.init(32);
            }
            warp.sync_block();
            for round in 0..50 {
                let _t = order.turn();
                let c = smem.get().count.load(Relaxed);
                assert_eq!(c, 2 * round + warp.index());
                smem.get().count.store(c + 1, Relaxed);
            }
        });
    }

    #[test]
    #[should_panic(expected = "group out of range")]
    fn group_out_of_range_is_rejected() {
        let bars = OrderedBarriers::<2, 2>::new();
        let _ = OrderedBarrier::new(SharedRef::from_ref(&bars), 2, c"o");
    }

    #[test]
    #[should_panic(expected = "arrive count mismatch")]
    fn more_arrivals_than_the_init_count_are_reported() {
        let bars = OrderedBarriers::<1, 2>::new();
        let mut g0 = OrderedBarrier::new(SharedRef::from_ref(&bars), 0, c"o");
        g0.init(1);
        g0.wait();
        // a whole warp arrives on a barrier initialized for one elected thread
        crate::arch::cpu::with_lanes(32, || g0.arrive());
    }
}
