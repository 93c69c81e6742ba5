//! `ProducerConsumerPipeline`: an N-stage ring guarded by `mbarrier`s.
//!
//! # The protocol
//!
//! Shared memory holds `2 × STAGES` barriers ([`PipelineBarriers`]):
//! `full[0..STAGES)` then `empty[0..STAGES)`. For every stage `s`:
//!
//! | who | waits on | for parity | then | arrives on | how many arrivals complete the phase |
//! |---|---|---|---|---|---|
//! | producer | `empty[s]` | producer phase (starts at 1) | fills slot `s` | `full[s]` | `producer_arrive_count` (1 for TMA: the elected thread's `arrive_expect_tx`, the copy engine completes the bytes) |
//! | consumer | `full[s]` | consumer phase (starts at 0) | reads slot `s` | `empty[s]` | `consumer_arrive_count` (e.g. 128: every thread of 4 consumer warps) |
//!
//! Each role then steps: `s += 1`; at `STAGES` it wraps to 0 and flips its
//! phase. Because a fresh barrier is in phase 0, the producer's first lap
//! (waiting for parity 1) does not block, and the consumer's first wait
//! (parity 0) blocks until the first fill.
//!
//! One thread initializes all barriers ([`init_barriers`]) before any other
//! thread uses the pipeline; the block (or cluster) then synchronizes.
//!
//! # Four ways to drive it
//!
//! * **Scoped**: [`produce`]/[`consume`] return guards that wait on creation
//!   and release (arrive + step) on drop; [`produce_explicit`] and
//!   [`consume_explicit`] only step on drop, for kernels whose signal is a
//!   TMA transaction, an MMA commit or a lane-guarded arrive.
//! * **Linear**: [`acquire_producer`]/[`acquire_consumer`] return a stage that
//!   must be consumed by `release()` or `release_without_signal()`. Dropping
//!   it instead is a *build error* on the GPU (the drop glue names an
//!   undefined symbol, `baton_error__ProducerStage_dropped_without_release`,
//!   that ptxas reports) and a panic on the CPU backend.
//! * **Explicit signal**: `consume_explicit()` / `release_without_signal()`
//!   with `stage.arrive()` where the kernel wants it.
//! * **Direct**: [`wait_producer`], [`wait_consumer`], [`producer_step`],
//!   [`consumer_step`], [`producer_mbar`], [`consumer_mbar`].
//!
//! [`init_barriers`]: ProducerConsumerPipeline::init_barriers
//! [`produce`]: ProducerConsumerPipeline::produce
//! [`consume`]: ProducerConsumerPipeline::consume
//! [`produce_explicit`]: ProducerConsumerPipeline::produce_explicit
//! [`consume_explicit`]: ProducerConsumerPipeline::consume_explicit
//! [`acquire_producer`]: ProducerConsumerPipeline::acquire_producer
//! [`acquire_consumer`]: ProducerConsumerPipeline::acquire_consumer
//! [`wait_producer`]: ProducerConsumerPipeline::wait_producer
//! [`wait_consumer`]: ProducerConsumerPipeline::wait_consumer
//! [`producer_step`]: ProducerConsumerPipeline::producer_step
//! [`consumer_step`]: ProducerConsumerPipeline::consumer_step
//! [`producer_mbar`]: ProducerConsumerPipeline::producer_mbar
//! [`consumer_mbar`]: ProducerConsumerPipeline::consumer_mbar

use super::diag::{Role, WaitSite};
use super::state::PipelineState;
use crate::arch::current::{BarrierRef, MbarrierCell, fence_barrier_init};
use crate::smem::SharedRef;
use core::ffi::CStr;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

/// The `2 × STAGES` barriers of a pipeline, as laid out in shared memory:
/// `full[0..STAGES)` then `empty[0..STAGES)`, 8 bytes each on the GPU.
///
/// ```
/// use baton::pipeline::PipelineBarriers;
/// assert_eq!(PipelineBarriers::<4>::GPU_BYTES, 64);
/// ```
#[repr(C)]
pub struct PipelineBarriers<const STAGES: usize> {
    full: [MbarrierCell; STAGES],
    empty: [MbarrierCell; STAGES],
}

impl<const STAGES: usize> PipelineBarriers<STAGES> {
    /// Bytes of shared memory the barriers take on the GPU (16 per stage).
    pub const GPU_BYTES: usize = 16 * STAGES;
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const STAGES: usize> PipelineBarriers<STAGES> {
    /// Uninitialized barriers in host memory (CPU backend).
    pub fn new() -> Self {
        Self {
            full: core::array::from_fn(|_| MbarrierCell::new()),
            empty: core::array::from_fn(|_| MbarrierCell::new()),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<const STAGES: usize> Default for PipelineBarriers<STAGES> {
    fn default() -> Self {
        Self::new()
    }
}

/// An N-stage producer/consumer pipeline over the barriers in `barriers`.
///
/// Holds the shared barrier array and **this thread's** producer and consumer
/// positions ([`PipelineState`]); every thread that plays a role builds its
/// own `ProducerConsumerPipeline` over the same barriers. Neither `Copy` nor
/// `Clone`.
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
/// use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
///
/// struct Smem { bars: PipelineBarriers<2>, slots: [AtomicU64; 2] }
/// let block = CpuBlock::new(Smem { bars: PipelineBarriers::new(), slots: Default::default() });
/// block.run_warps(2, |warp, smem| {
///     let bars = baton::smem_field!(smem, Smem, bars);
///     let mut pipe = ProducerConsumerPipeline::new(bars, c"doc");
///     if warp.index() == 0 {
///         pipe.init_barriers(32, 32); // one warp (32 lanes) on each side
///     }
///     warp.sync_block();
///     let slots = &smem.get().slots;
///     for i in 0..8u64 {
///         if warp.index() == 0 {
///             let stage = pipe.produce();
///             slots[stage.index() as usize].store(i, Relaxed);
///         } else {
///             let stage = pipe.consume();
///             assert_eq!(slots[stage.index() as usize].load(Relaxed), i);
///         }
///     }
/// });
/// ```
pub struct ProducerConsumerPipeline<'a, const STAGES: usize> {
    barriers: SharedRef<'a, PipelineBarriers<STAGES>>,
    producer: PipelineState<STAGES>,
    consumer: PipelineState<STAGES>,
    name: &'static CStr,
}

impl<'a, const STAGES: usize> ProducerConsumerPipeline<'a, STAGES> {
    /// Number of stages.
    pub const STAGES: u32 = STAGES as u32;

    /// A pipeline over `barriers`, named `name` in hang reports. The
    /// producer starts at (stage 0, phase 1), the consumer at (0, 0).
    #[inline(always)]
    pub fn new(barriers: SharedRef<'a, PipelineBarriers<STAGES>>, name: &'static CStr) -> Self {
        Self::with_states(
            barriers,
            name,
            PipelineState::producer_start(),
            PipelineState::consumer_start(),
        )
    }

    /// A pipeline whose roles start at the given positions (resuming a ring;
    /// tests that prove a wrong phase rule is caught).
    #[inline(always)]
    pub fn with_states(
        barriers: SharedRef<'a, PipelineBarriers<STAGES>>,
        name: &'static CStr,
        producer: PipelineState<STAGES>,
        consumer: PipelineState<STAGES>,
    ) -> Self {
        Self {
            barriers,
            producer,
            consumer,
            name,
        }
    }

    /// The pipeline's name (hang reports).
    pub fn name(&self) -> &'static CStr {
        self.name
    }

    /// Shared-memory bytes of the barriers on the GPU (`16 × STAGES`).
    pub const fn smem_bytes() -> usize {
        PipelineBarriers::<STAGES>::GPU_BYTES
    }

    #[inline(always)]
    fn full_unchecked(&self, stage: u32) -> BarrierRef<'a> {
        let full = crate::smem_field!(self.barriers, PipelineBarriers<STAGES>, full);
        // SAFETY: callers pass a `PipelineState` index, always < STAGES.
        BarrierRef::new(unsafe { full.at_unchecked(stage as usize) })
    }

    #[inline(always)]
    fn empty_unchecked(&self, stage: u32) -> BarrierRef<'a> {
        let empty = crate::smem_field!(self.barriers, PipelineBarriers<STAGES>, empty);
        // SAFETY: callers pass a `PipelineState` index, always < STAGES.
        BarrierRef::new(unsafe { empty.at_unchecked(stage as usize) })
    }

    /// `full[stage]`: the producer arrives, the consumer waits. Panics/traps
    /// if `stage >= STAGES`.
    #[inline(always)]
    pub fn full(&self, stage: u32) -> BarrierRef<'a> {
        let full = crate::smem_field!(self.barriers, PipelineBarriers<STAGES>, full);
        BarrierRef::new(full.at(stage as usize))
    }

    /// `empty[stage]`: the consumer arrives, the producer waits. Panics/traps
    /// if `stage >= STAGES`.
    #[inline(always)]
    pub fn empty(&self, stage: u32) -> BarrierRef<'a> {
        let empty = crate::smem_field!(self.barriers, PipelineBarriers<STAGES>, empty);
        BarrierRef::new(empty.at(stage as usize))
    }

    /// Initializes every `full` barrier with `producer_arrive_count` and every
    /// `empty` barrier with `consumer_arrive_count`, then fences the
    /// initialization (`fence.mbarrier_init`).
    ///
    /// Contract: exactly **one** thread calls this, before any thread uses
    /// the pipeline; afterwards all threads synchronize (block barrier, or
    /// cluster barrier when peers arrive remotely). The counts are the number
    /// of arrivals that complete a phase: one per arriving *thread* (a warp's
    /// `arrive()` is 32 arrivals), or 1 when a single elected thread signals
    /// with `arrive_expect_tx` for a TMA load.
    #[inline(always)]
    pub fn init_barriers(&self, producer_arrive_count: u32, consumer_arrive_count: u32) {
        for s in 0..Self::STAGES {
            // SAFETY: single initializing thread, before use (contract above).
            unsafe {
                self.full_unchecked(s).init(producer_arrive_count);
                self.empty_unchecked(s).init(consumer_arrive_count);
            }
        }
        fence_barrier_init();
    }

    // ----- direct API -------------------------------------------------------

    /// Consumer side: waits until the producer filled the consumer's current
    /// stage (`full[consumer_stage]` completes the consumer's phase).
    #[inline(always)]
    pub fn wait_producer(&self) {
        let (stage, phase) = (self.consumer.index(), self.consumer.phase());
        let name = self.name;
        self.full_unchecked(stage)
            .wait_parity(phase, move || WaitSite {
                pipeline: name,
                role: Role::Consumer,
                stage,
                phase,
            });
    }

    /// Producer side: waits until the consumers freed the producer's current
    /// stage (`empty[producer_stage]` completes the producer's phase).
    #[inline(always)]
    pub fn wait_consumer(&self) {
        let (stage, phase) = (self.producer.index(), self.producer.phase());
        let name = self.name;
        self.empty_unchecked(stage)
            .wait_parity(phase, move || WaitSite {
                pipeline: name,
                role: Role::Producer,
                stage,
                phase,
            });
    }

    /// Consumer side, non-blocking: is the consumer's current stage full?
    #[inline(always)]
    pub fn try_wait_producer(&self) -> bool {
        self.full_unchecked(self.consumer.index())
            .try_wait_parity(self.consumer.phase())
    }

    /// Producer side, non-blocking: is the producer's current stage free?
    #[inline(always)]
    pub fn try_wait_consumer(&self) -> bool {
        self.empty_unchecked(self.producer.index())
            .try_wait_parity(self.producer.phase())
    }

    /// Waits for the producer unless `already_ready` (a previous
    /// [`try_wait_producer`](Self::try_wait_producer) result) says the stage
    /// is full.
    #[inline(always)]
    pub fn wait_producer_if_needed(&self, already_ready: bool) {
        if !already_ready {
            self.wait_producer();
        }
    }

    /// Waits for the consumers unless `already_ready` says the stage is free.
    #[inline(always)]
    pub fn wait_consumer_if_needed(&self, already_ready: bool) {
        if !already_ready {
            self.wait_consumer();
        }
    }

    /// The barrier the producer signals for `stage` (`full[stage]`).
    #[inline(always)]
    pub fn producer_mbar(&self, stage: u32) -> BarrierRef<'a> {
        self.full(stage)
    }

    /// The barrier the consumer signals for `stage` (`empty[stage]`).
    #[inline(always)]
    pub fn consumer_mbar(&self, stage: u32) -> BarrierRef<'a> {
        self.empty(stage)
    }

    /// The producer's current stage index.
    #[inline(always)]
    pub fn producer_stage(&self) -> u32 {
        self.producer.index()
    }

    /// The consumer's current stage index.
    #[inline(always)]
    pub fn consumer_stage(&self) -> u32 {
        self.consumer.index()
    }

    /// The producer's current phase parity.
    #[inline(always)]
    pub fn producer_phase(&self) -> u32 {
        self.producer.phase()
    }

    /// The consumer's current phase parity.
    #[inline(always)]
    pub fn consumer_phase(&self) -> u32 {
        self.consumer.phase()
    }

    /// Advances the producer one stage (flips its phase on wrap-around).
    #[inline(always)]
    pub fn producer_step(&mut self) {
        self.producer.step();
    }

    /// Advances the consumer one stage (flips its phase on wrap-around).
    #[inline(always)]
    pub fn consumer_step(&mut self) {
        self.consumer.step();
    }

    /// Advances the consumer `n` stages **without waiting or arriving**:
    /// the stages another consumer group takes. A ping-pong kernel's
    /// warpgroup skips the K blocks of the other warpgroup's tiles (CUTLASS:
    /// `pipe_consumer_state.advance(k_tiles)`).
    ///
    /// Contract: every stage is consumed (waited for and released) by
    /// exactly one group, and the `empty` count counts the arrivals of that
    /// one group only; the skipping group owes the stage nothing. Its own
    /// next wait stays within one phase of the barrier: the producer cannot
    /// refill a stage this group will consume before this group released it.
    ///
    /// ```
    /// # use baton::pipeline::*;
    /// # use baton::smem::SharedRef;
    /// let bars = PipelineBarriers::<2>::new();
    /// let mut group0 = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
    /// let mut group1 = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
    /// group0.init_barriers(1, 1);
    /// group0.acquire_producer().release(); // item 0
    /// group0.acquire_producer().release(); // item 1
    /// group0.acquire_consumer().release(); // group 0 takes item 0
    /// group1.consumer_skip(1);             // group 1 skips it, takes item 1
    /// assert_eq!(group1.consumer_stage(), 1);
    /// group1.acquire_consumer().release();
    /// ```
    #[inline(always)]
    pub fn consumer_skip(&mut self, n: u32) {
        self.consumer.advance(n);
    }

    /// Producer: wait for a free stage, arrive on its `full` barrier, step.
    #[inline(always)]
    pub fn producer_signal_and_step(&mut self) {
        self.wait_consumer();
        self.full_unchecked(self.producer.index()).arrive();
        self.producer_step();
    }

    /// Consumer: wait for a full stage, arrive on its `empty` barrier, step.
    #[inline(always)]
    pub fn consumer_signal_and_step(&mut self) {
        self.wait_producer();
        self.empty_unchecked(self.consumer.index()).arrive();
        self.consumer_step();
    }

    /// Producer tail: waits until the consumers released every stage (waits
    /// on the next `STAGES` empty barriers). Call it after the last
    /// production so the CTA does not exit while consumers — possibly in
    /// other CTAs of the cluster — still read or arrive on its shared memory.
    #[inline(always)]
    pub fn drain(&mut self) {
        for _ in 0..Self::STAGES {
            self.wait_consumer();
            self.producer_step();
        }
    }

    // ----- linear API -------------------------------------------------------

    /// Waits for a free stage and returns it; the stage **must** be consumed
    /// by [`ProducerStage::release`] or
    /// [`ProducerStage::release_without_signal`].
    #[inline(always)]
    pub fn acquire_producer(&mut self) -> ProducerStage<'_, 'a, STAGES> {
        self.wait_consumer();
        ProducerStage { pipe: self }
    }

    /// Waits for a full stage and returns it; the stage **must** be consumed
    /// by [`ConsumerStage::release`] or
    /// [`ConsumerStage::release_without_signal`].
    #[inline(always)]
    pub fn acquire_consumer(&mut self) -> ConsumerStage<'_, 'a, STAGES> {
        self.wait_producer();
        ConsumerStage { pipe: self }
    }

    // ----- scoped API -------------------------------------------------------

    /// Scoped production: waits for a free stage now; on drop arrives on its
    /// `full` barrier and steps.
    #[inline(always)]
    pub fn produce(&mut self) -> ProducerGuard<'_, 'a, STAGES, true> {
        ProducerGuard {
            stage: ManuallyDrop::new(self.acquire_producer()),
        }
    }

    /// Scoped production whose signal is explicit (TMA `arrive_expect_tx`,
    /// an MMA commit to `stage.mbar()`): waits now; on drop only steps.
    #[inline(always)]
    pub fn produce_explicit(&mut self) -> ProducerGuard<'_, 'a, STAGES, false> {
        ProducerGuard {
            stage: ManuallyDrop::new(self.acquire_producer()),
        }
    }

    /// Scoped consumption: waits for a full stage now; on drop arrives on
    /// its `empty` barrier and steps.
    #[inline(always)]
    pub fn consume(&mut self) -> ConsumerGuard<'_, 'a, STAGES, true> {
        ConsumerGuard {
            stage: ManuallyDrop::new(self.acquire_consumer()),
        }
    }

    /// Scoped consumption with explicit signalling: waits now; on drop only
    /// steps. Call `stage.arrive()` (e.g. lane-guarded) inside the scope.
    #[inline(always)]
    pub fn consume_explicit(&mut self) -> ConsumerGuard<'_, 'a, STAGES, false> {
        ConsumerGuard {
            stage: ManuallyDrop::new(self.acquire_consumer()),
        }
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    // Never defined: referenced only from the drop glue of a linear stage, so
    // a kernel that can drop a stage without releasing it fails to assemble
    // with "Unresolved extern function 'baton_error__…'".
    fn baton_error__ProducerStage_dropped_without_release();
    fn baton_error__ConsumerStage_dropped_without_release();
    fn baton_error__PendingRelease_dropped_without_release();
}

/// A producer's claim on one free stage (linear: must be released).
///
/// ```
/// # use baton::pipeline::*;
/// # use baton::smem::SharedRef;
/// let bars = PipelineBarriers::<2>::new();
/// let mut pipe = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
/// pipe.init_barriers(1, 1);
/// let stage = pipe.acquire_producer();
/// assert_eq!((stage.index(), stage.phase()), (0, 1));
/// stage.release(); // arrive on full[0], step to stage 1
/// assert_eq!(pipe.producer_stage(), 1);
/// assert!(pipe.try_wait_producer(), "stage 0 is now full for the consumer");
/// ```
#[must_use = "a ProducerStage must be consumed by release() or release_without_signal()"]
pub struct ProducerStage<'p, 'a, const STAGES: usize> {
    pipe: &'p mut ProducerConsumerPipeline<'a, STAGES>,
}

impl<'a, const STAGES: usize> ProducerStage<'_, 'a, STAGES> {
    /// Stage index (which slot of the ring to fill).
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.producer.index()
    }

    /// Phase parity the producer waited for.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.pipe.producer.phase()
    }

    /// The barrier this stage signals (`full[index]`): hand it to TMA loads
    /// or MMA commits.
    #[inline(always)]
    pub fn mbar(&self) -> BarrierRef<'a> {
        self.pipe.full_unchecked(self.index())
    }

    /// This thread arrives on `full[index]` (without stepping).
    #[inline(always)]
    pub fn arrive(&self) {
        self.mbar().arrive();
    }

    /// This thread arrives on `full[index]` and announces `bytes` of
    /// transactions the copy engine will complete (the TMA producer's signal;
    /// then finish with [`release_without_signal`](Self::release_without_signal)).
    #[inline(always)]
    pub fn arrive_expect_tx(&self, bytes: u32) {
        self.mbar().arrive_expect_tx(bytes);
    }

    /// Signals (arrive on `full[index]`) and steps.
    #[inline(always)]
    pub fn release(self) {
        self.arrive();
        self.release_without_signal();
    }

    /// Steps without signalling (the signal was a TMA transaction, a commit,
    /// or a lane-guarded [`arrive`](Self::arrive)).
    #[inline(always)]
    pub fn release_without_signal(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used again and its drop is suppressed, so
        // reading the `&mut` out of it does not duplicate a live borrow.
        let pipe = unsafe { core::ptr::read(&this.pipe) };
        pipe.producer_step();
    }
}

impl<const STAGES: usize> Drop for ProducerStage<'_, '_, STAGES> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the symbol is undefined on purpose; reaching this call means
        // the kernel does not assemble.
        unsafe {
            baton_error__ProducerStage_dropped_without_release()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        if !std::thread::panicking() {
            panic!(
                "baton: ProducerStage of pipeline {:?} (stage {}, phase {}) dropped without release() or release_without_signal()",
                self.pipe.name,
                self.index(),
                self.phase()
            );
        }
    }
}

/// A consumer's claim on one full stage (linear: must be released).
///
/// ```
/// # use baton::pipeline::*;
/// # use baton::smem::SharedRef;
/// let bars = PipelineBarriers::<1>::new();
/// let mut pipe = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
/// pipe.init_barriers(1, 1);
/// pipe.acquire_producer().release();
/// let stage = pipe.acquire_consumer();
/// assert_eq!(stage.index(), 0);
/// stage.arrive();                  // explicit signal on empty[0] …
/// stage.release_without_signal();  // … then step only
/// assert!(pipe.try_wait_consumer(), "the producer may refill stage 0");
/// ```
#[must_use = "a ConsumerStage must be consumed by release() or release_without_signal()"]
pub struct ConsumerStage<'p, 'a, const STAGES: usize> {
    pipe: &'p mut ProducerConsumerPipeline<'a, STAGES>,
}

impl<'a, const STAGES: usize> ConsumerStage<'_, 'a, STAGES> {
    /// Stage index (which slot of the ring to read).
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.consumer.index()
    }

    /// Phase parity the consumer waited for.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.pipe.consumer.phase()
    }

    /// The barrier this stage signals (`empty[index]`).
    #[inline(always)]
    pub fn mbar(&self) -> BarrierRef<'a> {
        self.pipe.empty_unchecked(self.index())
    }

    /// This thread arrives on `empty[index]` (without stepping).
    #[inline(always)]
    pub fn arrive(&self) {
        self.mbar().arrive();
    }

    /// Arrives on `empty[index]` of CTA `cta_rank` in the cluster (releasing
    /// a stage that a multicast producer in another CTA filled).
    #[inline(always)]
    pub fn arrive_cluster(&self, cta_rank: u32) {
        self.mbar().arrive_cluster(cta_rank);
    }

    /// Signals (arrive on `empty[index]`) and steps.
    #[inline(always)]
    pub fn release(self) {
        self.arrive();
        self.release_without_signal();
    }

    /// Steps without signalling.
    #[inline(always)]
    pub fn release_without_signal(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: as in `ProducerStage::release_without_signal`.
        let pipe = unsafe { core::ptr::read(&this.pipe) };
        pipe.consumer_step();
    }

    /// Steps now and signals later: returns a [`PendingRelease`] naming this
    /// stage's `empty` barrier, which must itself be released.
    ///
    /// This is the `wgmma` consumer's pattern: the MMAs reading stage `k`
    /// are still in flight when the consumer moves on to stage `k + 1`; only
    /// after `wgmma.wait_group` retired them may stage `k` be handed back.
    #[inline(always)]
    pub fn defer_release(self) -> PendingRelease<'a> {
        let bar = self.mbar();
        self.release_without_signal();
        PendingRelease { bar }
    }
}

/// A consumed stage whose `empty` signal is still owed (from
/// [`ConsumerStage::defer_release`]). Linear like the stages: dropping it
/// without a `release*` call is a GPU build error
/// (`baton_error__PendingRelease_dropped_without_release`) and a CPU panic.
///
/// ```
/// # use baton::pipeline::*;
/// # use baton::smem::SharedRef;
/// let bars = PipelineBarriers::<2>::new();
/// let mut pipe = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
/// pipe.init_barriers(1, 1);
/// pipe.acquire_producer().release();
/// pipe.acquire_producer().release();
/// let first = pipe.acquire_consumer().defer_release(); // stage 0 still owed
/// let second = pipe.acquire_consumer();                // stage 1, while 0 is in flight
/// first.release();                                     // now stage 0 is free
/// second.release();
/// assert!(pipe.try_wait_consumer());
/// ```
#[must_use = "a PendingRelease must be consumed by release(), release_if() or release_cluster()"]
pub struct PendingRelease<'a> {
    bar: BarrierRef<'a>,
}

impl<'a> PendingRelease<'a> {
    /// The `empty` barrier this release signals.
    #[inline(always)]
    pub fn mbar(&self) -> BarrierRef<'a> {
        self.bar
    }

    /// This thread arrives on the stage's `empty` barrier.
    #[inline(always)]
    pub fn release(self) {
        ManuallyDrop::new(self).bar.arrive();
    }

    /// Arrives only if `signaller` — without a branch on the GPU (a
    /// predicated arrive), so a warpgroup between `wgmma`s stays converged.
    /// Typical: `release_if(thread_in_warpgroup == 0)` with one arrival per
    /// consumer warpgroup in the init count.
    #[inline(always)]
    pub fn release_if(self, signaller: bool) {
        ManuallyDrop::new(self).bar.arrive_if(signaller);
    }

    /// Arrives on the same `empty` barrier of CTA `cta_rank` of the cluster.
    #[inline(always)]
    pub fn release_cluster(self, cta_rank: u32) {
        ManuallyDrop::new(self).bar.arrive_cluster(cta_rank);
    }

    /// [`release_multicast_if`](Self::release_multicast_if) with mask
    /// `0b11` (both CTAs of a 2-CTA cluster) through
    /// `BarrierRef::arrive_pair_if`: the ranks as immediates, not registers.
    ///
    /// ```ignore
    /// stage.defer_release().release_pair_if(thread_in_warpgroup == 0);
    /// ```
    #[inline(always)]
    pub fn release_pair_if(self, signaller: bool) {
        ManuallyDrop::new(self).bar.arrive_pair_if(signaller);
    }

    /// If `signaller`, arrives once on the `empty` barrier of every CTA in
    /// `cta_mask` (predicated, no branch) — releasing a stage that TMA
    /// multicasts from those CTAs filled. With a constant mask the loop
    /// unrolls to one predicated remote arrive per CTA. The arrive has
    /// CTA-scope release: releasing a stage publishes no data (see
    /// `BarrierRef::arrive_remote_if`).
    #[inline(always)]
    pub fn release_multicast_if(self, cta_mask: u16, signaller: bool) {
        let bar = ManuallyDrop::new(self).bar;
        let mut mask = cta_mask;
        while mask != 0 {
            bar.arrive_remote_if(mask.trailing_zeros(), signaller);
            mask &= mask - 1;
        }
    }
}

impl Drop for PendingRelease<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: see `ProducerStage::drop`.
        unsafe {
            baton_error__PendingRelease_dropped_without_release()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        if !std::thread::panicking() {
            panic!(
                "baton: PendingRelease dropped without release(), release_if() or release_cluster()"
            );
        }
    }
}

impl<const STAGES: usize> Drop for ConsumerStage<'_, '_, STAGES> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: see `ProducerStage::drop`.
        unsafe {
            baton_error__ConsumerStage_dropped_without_release()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        if !std::thread::panicking() {
            panic!(
                "baton: ConsumerStage of pipeline {:?} (stage {}, phase {}) dropped without release() or release_without_signal()",
                self.pipe.name,
                self.index(),
                self.phase()
            );
        }
    }
}

/// Scoped producer stage: waited for on creation; on drop, `release()`
/// (`SIGNAL = true`, from [`produce`](ProducerConsumerPipeline::produce)) or
/// `release_without_signal()` (`SIGNAL = false`, from
/// [`produce_explicit`](ProducerConsumerPipeline::produce_explicit)).
/// Derefs to [`ProducerStage`].
///
/// ```
/// # use baton::pipeline::*;
/// # use baton::smem::SharedRef;
/// let bars = PipelineBarriers::<2>::new();
/// let mut pipe = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
/// pipe.init_barriers(1, 1);
/// {
///     let stage = pipe.produce();
///     assert_eq!(stage.index(), 0);
/// } // arrive on full[0], step
/// assert!(pipe.try_wait_producer());
/// ```
#[must_use = "dropping the guard at once releases the stage immediately"]
pub struct ProducerGuard<'p, 'a, const STAGES: usize, const SIGNAL: bool> {
    stage: ManuallyDrop<ProducerStage<'p, 'a, STAGES>>,
}

impl<'p, 'a, const STAGES: usize, const SIGNAL: bool> Deref
    for ProducerGuard<'p, 'a, STAGES, SIGNAL>
{
    type Target = ProducerStage<'p, 'a, STAGES>;
    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.stage
    }
}

impl<const STAGES: usize, const SIGNAL: bool> DerefMut for ProducerGuard<'_, '_, STAGES, SIGNAL> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.stage
    }
}

impl<const STAGES: usize, const SIGNAL: bool> Drop for ProducerGuard<'_, '_, STAGES, SIGNAL> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: taken exactly once, here; the field is not used afterwards.
        let stage = unsafe { ManuallyDrop::take(&mut self.stage) };
        if SIGNAL {
            stage.release()
        } else {
            stage.release_without_signal()
        }
    }
}

/// Scoped consumer stage: waited for on creation; on drop, `release()`
/// (`SIGNAL = true`, from [`consume`](ProducerConsumerPipeline::consume)) or
/// `release_without_signal()` (`SIGNAL = false`, from
/// [`consume_explicit`](ProducerConsumerPipeline::consume_explicit)).
/// Derefs to [`ConsumerStage`].
///
/// ```
/// # use baton::pipeline::*;
/// # use baton::smem::SharedRef;
/// let bars = PipelineBarriers::<1>::new();
/// let mut pipe = ProducerConsumerPipeline::new(SharedRef::from_ref(&bars), c"doc");
/// pipe.init_barriers(1, 1);
/// drop(pipe.produce());
/// {
///     let stage = pipe.consume_explicit();
///     stage.arrive(); // lane-guarded in a kernel: `if lane_id() == 0 { … }`
/// } // step only
/// assert!(pipe.try_wait_consumer());
/// ```
#[must_use = "dropping the guard at once releases the stage immediately"]
pub struct ConsumerGuard<'p, 'a, const STAGES: usize, const SIGNAL: bool> {
    stage: ManuallyDrop<ConsumerStage<'p, 'a, STAGES>>,
}

impl<'p, 'a, const STAGES: usize, const SIGNAL: bool> Deref
    for ConsumerGuard<'p, 'a, STAGES, SIGNAL>
{
    type Target = ConsumerStage<'p, 'a, STAGES>;
    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.stage
    }
}

impl<const STAGES: usize, const SIGNAL: bool> DerefMut for ConsumerGuard<'_, '_, STAGES, SIGNAL> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.stage
    }
}

impl<const STAGES: usize, const SIGNAL: bool> Drop for ConsumerGuard<'_, '_, STAGES, SIGNAL> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: taken exactly once, here.
        let stage = unsafe { ManuallyDrop::take(&mut self.stage) };
        if SIGNAL {
            stage.release()
        } else {
            stage.release_without_signal()
        }
    }
}
