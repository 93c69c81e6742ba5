//! `EpiLoadPipeline`: the epilogue-load warp feeds source tiles `C` to the
//! epilogue warps, for `D = accum + beta·C`; and `LoadOrderBarrier`, which
//! lets the main-loop load warp hold the epilogue-load warp back until its
//! prologue loads are issued.
//!
//! ```text
//! main-loop load warp      epilogue-load warp          epilogue warps (4)
//!   prologue TMA loads
//!   order.arrive() ───────▶ order.wait()
//!                           produce_explicit():
//!                             TMA load C, arrive_expect_tx ─▶ consume():
//!                                                           read C[stage], write D
//!                                                           (drop: 128 arrivals on empty)
//! ```

use super::pipeline::{
    ConsumerGuard, ConsumerStage, PipelineBarriers, ProducerConsumerPipeline, ProducerGuard,
    ProducerStage,
};
use crate::arch::current::{BarrierRef, MbarrierCell};
use crate::smem::SharedRef;
use core::ffi::CStr;

/// Default producer arrive count: one elected thread's `arrive_expect_tx`
/// per stage (the TMA load of the C tile completes the bytes).
pub const EPI_LOAD_PRODUCER_ARRIVALS: u32 = 1;
/// Default consumer arrive count: 4 epilogue warps × 32 threads.
pub const EPI_LOAD_CONSUMER_ARRIVALS: u32 = 128;

/// Pipeline from the epilogue-load warp (producer) to the epilogue store
/// warps (consumers). The same protocol as [`ProducerConsumerPipeline`] with
/// epilogue defaults; everything else forwards to it.
///
/// ```
/// use baton::arch::cpu::{CpuBlock, elect_one};
/// use baton::epi_load::EpiLoadPipeline;
/// use baton::pipeline::PipelineBarriers;
///
/// let block = CpuBlock::new(PipelineBarriers::<2>::new());
/// // warp 0: epilogue-load; warps 1..=4: epilogue (4 × 32 = 128 arrivals)
/// block.run_warps(5, |warp, bars| {
///     let mut epi = EpiLoadPipeline::new(bars, c"epi-load");
///     if warp.index() == 0 {
///         elect_one(|| epi.init_barriers_default());
///     }
///     warp.sync_block();
///     for _tile in 0..4 {
///         if warp.index() == 0 {
///             elect_one(|| drop(epi.produce())); // one arrival, as the TMA thread
///         } else {
///             let c = epi.consume(); // read C[c.index()] …
///             let _ = c.index();
///         }
///     }
/// });
/// ```
pub struct EpiLoadPipeline<'a, const STAGES: usize> {
    pipeline: ProducerConsumerPipeline<'a, STAGES>,
}

impl<'a, const STAGES: usize> EpiLoadPipeline<'a, STAGES> {
    /// A pipeline over `barriers`, named `name` in hang reports.
    #[inline(always)]
    pub fn new(barriers: SharedRef<'a, PipelineBarriers<STAGES>>, name: &'static CStr) -> Self {
        Self {
            pipeline: ProducerConsumerPipeline::new(barriers, name),
        }
    }

    /// Initializes the barriers with explicit counts (one thread; then sync).
    #[inline(always)]
    pub fn init_barriers(&self, producer_arrive_count: u32, consumer_arrive_count: u32) {
        self.pipeline
            .init_barriers(producer_arrive_count, consumer_arrive_count);
    }

    /// Initializes with the defaults: [`EPI_LOAD_PRODUCER_ARRIVALS`] (1) and
    /// [`EPI_LOAD_CONSUMER_ARRIVALS`] (128).
    #[inline(always)]
    pub fn init_barriers_default(&self) {
        self.init_barriers(EPI_LOAD_PRODUCER_ARRIVALS, EPI_LOAD_CONSUMER_ARRIVALS);
    }

    /// The underlying pipeline (direct API).
    #[inline(always)]
    pub fn pipeline(&mut self) -> &mut ProducerConsumerPipeline<'a, STAGES> {
        &mut self.pipeline
    }

    /// Scoped production (arrive + step on drop).
    #[inline(always)]
    pub fn produce(&mut self) -> ProducerGuard<'_, 'a, STAGES, true> {
        self.pipeline.produce()
    }

    /// Scoped production whose signal is the TMA's `arrive_expect_tx` (step
    /// only on drop).
    #[inline(always)]
    pub fn produce_explicit(&mut self) -> ProducerGuard<'_, 'a, STAGES, false> {
        self.pipeline.produce_explicit()
    }

    /// Linear producer stage.
    #[inline(always)]
    pub fn acquire_producer(&mut self) -> ProducerStage<'_, 'a, STAGES> {
        self.pipeline.acquire_producer()
    }

    /// Producer: wait for the current stage to be free.
    #[inline(always)]
    pub fn wait_consumer(&self) {
        self.pipeline.wait_consumer()
    }

    /// The barrier the producer signals for its current stage.
    #[inline(always)]
    pub fn producer_mbar(&self) -> BarrierRef<'a> {
        self.pipeline.producer_mbar(self.pipeline.producer_stage())
    }

    /// Producer's current stage.
    #[inline(always)]
    pub fn producer_stage(&self) -> u32 {
        self.pipeline.producer_stage()
    }

    /// Advance the producer.
    #[inline(always)]
    pub fn producer_step(&mut self) {
        self.pipeline.producer_step()
    }

    /// Producer tail: wait until the epilogue released every stage.
    #[inline(always)]
    pub fn drain(&mut self) {
        self.pipeline.drain()
    }

    /// Scoped consumption (arrive + step on drop).
    #[inline(always)]
    pub fn consume(&mut self) -> ConsumerGuard<'_, 'a, STAGES, true> {
        self.pipeline.consume()
    }

    /// Scoped consumption with explicit signalling (step only on drop).
    #[inline(always)]
    pub fn consume_explicit(&mut self) -> ConsumerGuard<'_, 'a, STAGES, false> {
        self.pipeline.consume_explicit()
    }

    /// Linear consumer stage.
    #[inline(always)]
    pub fn acquire_consumer(&mut self) -> ConsumerStage<'_, 'a, STAGES> {
        self.pipeline.acquire_consumer()
    }

    /// Consumer: wait for the current stage to be full.
    #[inline(always)]
    pub fn wait_producer(&self) {
        self.pipeline.wait_producer()
    }

    /// Consumer's current stage.
    #[inline(always)]
    pub fn consumer_stage(&self) -> u32 {
        self.pipeline.consumer_stage()
    }

    /// Advance the consumer.
    #[inline(always)]
    pub fn consumer_step(&mut self) {
        self.pipeline.consumer_step()
    }
}

/// One barrier ordering the main-loop load warp before the epilogue-load
/// warp, once per output tile: the main-loop warp [`arrive`](Self::arrive)s
/// after its prologue loads, the epilogue-load warp [`wait`](Self::wait)s;
/// both [`step`](Self::step) (flip the phase) per tile.
///
/// Contract: the main-loop warp may run **at most one tile ahead**: it must
/// not arrive for tile `t + 1` before the epilogue-load warp has waited for
/// tile `t`. A single barrier has only a phase bit, so two arrivals ahead
/// bring the parity back to where the waiter expects it and the wait hangs
/// or skips a tile (the loom test `load_order_barrier_two_tiles_ahead_is_caught`
/// shows it). Kernels whose main loop can run further ahead should arrive
/// only for the first tile, as CUTLASS does, or use a
/// [`ProducerConsumerPipeline`] with more stages.
///
/// ```
/// use baton::epi_load::LoadOrderBarrier;
/// use baton::arch::cpu::MbarrierCell;
/// use baton::smem::SharedRef;
///
/// let cell = MbarrierCell::new();
/// let mut main = LoadOrderBarrier::new(SharedRef::from_ref(&cell), c"order");
/// let mut epi = LoadOrderBarrier::new(SharedRef::from_ref(&cell), c"order");
/// main.init(1);
/// for _tile in 0..3 {
///     assert!(!epi.try_wait());
///     main.arrive_and_step();
///     epi.wait_and_step();
/// }
/// ```
pub struct LoadOrderBarrier<'a> {
    barrier: BarrierRef<'a>,
    phase: u32,
    name: &'static CStr,
}

impl<'a> LoadOrderBarrier<'a> {
    /// A handle at phase 0 over `cell`.
    #[inline(always)]
    pub fn new(cell: SharedRef<'a, MbarrierCell>, name: &'static CStr) -> Self {
        Self {
            barrier: BarrierRef::new(cell),
            phase: 0,
            name,
        }
    }

    /// Initializes with `arrive_count` arrivals per tile (one thread; then
    /// sync). Usually 1: the main-loop warp's elected thread.
    #[inline(always)]
    pub fn init(&self, arrive_count: u32) {
        // SAFETY: contract documented above.
        unsafe { self.barrier.init(arrive_count) };
        crate::arch::current::fence_barrier_init();
    }

    /// Main-loop side: prologue loads are issued.
    #[inline(always)]
    pub fn arrive(&self) {
        self.barrier.arrive();
    }

    /// Epilogue-load side: wait for the main-loop warp's signal this tile.
    #[inline(always)]
    pub fn wait(&self) {
        let (phase, name) = (self.phase, self.name);
        self.barrier
            .wait_parity(phase, move || super::diag::WaitSite {
                pipeline: name,
                role: super::diag::Role::Consumer,
                stage: 0,
                phase,
            });
    }

    /// Non-blocking [`wait`](Self::wait).
    #[inline(always)]
    pub fn try_wait(&self) -> bool {
        self.barrier.try_wait_parity(self.phase)
    }

    /// Next tile: flip the phase.
    #[inline(always)]
    pub fn step(&mut self) {
        self.phase ^= 1;
    }

    /// `arrive` then `step`.
    #[inline(always)]
    pub fn arrive_and_step(&mut self) {
        self.arrive();
        self.step();
    }

    /// `wait` then `step`.
    #[inline(always)]
    pub fn wait_and_step(&mut self) {
        self.wait();
        self.step();
    }
}
