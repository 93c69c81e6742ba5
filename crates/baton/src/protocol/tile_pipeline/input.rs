//! `InputTilePipeline`: the TMA load warp feeds tile stages to the MMA /
//! consumer warpgroups.
//!
//! | role | waits on | for | signals | arrivals that complete a phase |
//! |---|---|---|---|---|
//! | [`InputProducer`] (one elected thread) | `empty[s]` | a free stage | `arrive_expect_tx(EXPECT_BYTES)` on `full[s]`; the TMA loads complete the bytes | 1 |
//! | [`InputConsumer`] (consumer threads) | `full[s]` | loaded tiles | arrive on `empty[s]` (every thread), or one `arrive_cluster` per CTA in a multicast mask (one signalling thread per warpgroup) | the constructor's `consumer_arrivals` ([`consumer_arrivals_per_thread`], [`consumer_arrivals_multicast`]) |
//!
//! The phase logic is [`ProducerConsumerPipeline`]'s (each role owns one);
//! this module adds the stage storage, the byte count derived from the
//! payload, linear handles and the producer tail.

use super::payload::TilePayload;
#[cfg(not(target_arch = "nvptx64"))]
use super::tile::{Tile, TileView, TileViewMut};
use crate::arch::current::BarrierRef;
use crate::arch::current::tma::validate_cta_mask;
use crate::pipeline::{
    ConsumerGuard, ConsumerStage, PipelineBarriers, ProducerConsumerPipeline, ProducerGuard,
    ProducerStage,
};
use crate::smem::SharedRef;
#[cfg(not(target_arch = "nvptx64"))]
use crate::tensor_map::Swizzle;
use core::ffi::CStr;
use core::mem::ManuallyDrop;

/// Threads in a warpgroup.
pub const THREADS_PER_WARPGROUP: u32 = 128;

/// Empty-barrier arrive count when every consumer thread arrives (the
/// scoped [`ConsumerTiles`] of [`InputConsumer::acquire`]): 128 per
/// consumer warpgroup.
///
/// ```
/// assert_eq!(baton::tile_pipeline::consumer_arrivals_per_thread(2), 256);
/// ```
pub const fn consumer_arrivals_per_thread(consumer_warpgroups: u32) -> u32 {
    consumer_warpgroups * THREADS_PER_WARPGROUP
}

/// Empty-barrier arrive count for multicast input stages on Hopper
/// (PROTOCOL-NOTES, CUTLASS `PipelineTmaAsync`): a stage of CTA `(m, n)` is
/// read by the CTAs of its cluster row and column, each releasing it once
/// per consumer warpgroup: `(cluster_m + cluster_n − 1) × warpgroups`. Use
/// with [`InputConsumer::acquire_multicast`], whose mask names exactly those
/// CTAs and whose signalling thread is one per warpgroup.
///
/// ```
/// use baton::tile_pipeline::consumer_arrivals_multicast;
/// assert_eq!(consumer_arrivals_multicast(2, 2, 1), 4);
/// assert_eq!(consumer_arrivals_multicast(1, 1, 1), 1);
/// ```
pub const fn consumer_arrivals_multicast(
    consumer_warpgroups: u32,
    cluster_m: u32,
    cluster_n: u32,
) -> u32 {
    (cluster_m + cluster_n - 1) * consumer_warpgroups
}

/// Shared-memory layout of an input pipeline: barriers, then the stages
/// (each 1024-byte aligned by its tiles).
#[repr(C)]
pub struct InputTileStorage<P: TilePayload, const STAGES: usize> {
    /// `full[0..STAGES)` then `empty[0..STAGES)`.
    pub barriers: PipelineBarriers<STAGES>,
    /// The stage ring.
    pub stages: [P::Stage; STAGES],
}

#[cfg(not(target_arch = "nvptx64"))]
impl<P: TilePayload, const STAGES: usize> InputTileStorage<P, STAGES>
where
    P::Stage: Default,
{
    /// Fresh storage in host memory (CPU backend).
    pub fn new() -> Self {
        Self {
            barriers: PipelineBarriers::new(),
            stages: core::array::from_fn(|_| Default::default()),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<P: TilePayload, const STAGES: usize> Default for InputTileStorage<P, STAGES>
where
    P::Stage: Default,
{
    fn default() -> Self {
        Self::new()
    }
}

/// An input tile pipeline over an [`InputTileStorage`]: hands out the
/// producer and consumer roles. Holds no state of its own (each role owns
/// its stage/phase), so it is `Copy`.
///
/// `CTA_GROUP` multiplies the expect-tx bytes (Blackwell CTA pairs: 2; 1 on
/// Hopper).
///
/// ```
/// use baton::arch::cpu::{CpuBlock, elect_one};
/// use baton::tile_pipeline::*;
///
/// type P = StandardTilePayload<u16, u16, 16, 16, 8>;
/// let block = CpuBlock::new(InputTileStorage::<P, 2>::new());
/// // warp 0: producer; warps 1..=4: one consumer warpgroup.
/// block.run_warps(5, |warp, smem| {
///     let pipe = InputTilePipeline::<P, 2>::new(smem, c"mainloop");
///     if warp.index() == 0 {
///         elect_one(|| pipe.init(consumer_arrivals_per_thread(1)));
///     }
///     warp.sync_block();
///     if warp.index() == 0 {
///         elect_one(|| {
///             let mut producer = pipe.producer();
///             for _k in 0..5 {
///                 let tiles = producer.acquire();
///                 tiles.arrive_expect_tx();
///                 // TMA loads into tiles.tiles() complete the bytes; here we
///                 // play the copy engine:
///                 tiles.barrier().complete_tx(tiles.expect_bytes());
///             }
///             producer.drain();
///         });
///     } else {
///         let mut consumer = pipe.consumer();
///         for _k in 0..5 {
///             let tiles = consumer.acquire(); // read tiles.tiles() …
///             let _ = tiles.index();
///         }
///     }
/// });
/// ```
pub struct InputTilePipeline<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32 = 1> {
    storage: SharedRef<'a, InputTileStorage<P, STAGES>>,
    name: &'static CStr,
}

impl<P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> Clone
    for InputTilePipeline<'_, P, STAGES, CTA_GROUP>
{
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> Copy
    for InputTilePipeline<'_, P, STAGES, CTA_GROUP>
{
}

impl<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32>
    InputTilePipeline<'a, P, STAGES, CTA_GROUP>
{
    /// Bytes the producer's `arrive_expect_tx` announces per stage:
    /// `CTA_GROUP × P::TMA_BYTES`.
    pub const EXPECT_BYTES: u32 = ExpectBytes::<P, CTA_GROUP>::VALUE;

    /// A pipeline over `storage`, named `name` in hang reports.
    #[inline(always)]
    pub fn new(storage: SharedRef<'a, InputTileStorage<P, STAGES>>, name: &'static CStr) -> Self {
        Self { storage, name }
    }

    /// The barrier array.
    #[inline(always)]
    pub fn barriers(&self) -> SharedRef<'a, PipelineBarriers<STAGES>> {
        crate::smem_field!(self.storage, InputTileStorage<P, STAGES>, barriers)
    }

    /// Stage `i` of the ring (panics/traps if `i >= STAGES`).
    #[inline(always)]
    pub fn stage(&self, i: u32) -> SharedRef<'a, P::Stage> {
        crate::smem_field!(self.storage, InputTileStorage<P, STAGES>, stages).at(i as usize)
    }

    /// Initializes the barriers: `full` with producer count 1 (the elected
    /// thread's `arrive_expect_tx`), `empty` with `consumer_arrivals`.
    ///
    /// Contract: one thread, before any role is used; then a block barrier
    /// (a cluster barrier when consumers in other CTAs arrive remotely).
    #[inline(always)]
    pub fn init(&self, consumer_arrivals: u32) {
        let _ = Self::EXPECT_BYTES; // evaluates the payload checks
        ProducerConsumerPipeline::new(self.barriers(), self.name)
            .init_barriers(1, consumer_arrivals);
    }

    /// The producer role (one per producer thread). It must be consumed by
    /// [`InputProducer::drain`].
    #[inline(always)]
    pub fn producer(&self) -> InputProducer<'a, P, STAGES, CTA_GROUP> {
        InputProducer {
            pipe: ProducerConsumerPipeline::new(self.barriers(), self.name),
            storage: self.storage,
        }
    }

    /// The consumer role (one per consumer thread).
    #[inline(always)]
    pub fn consumer(&self) -> InputConsumer<'a, P, STAGES, CTA_GROUP> {
        InputConsumer {
            pipe: ProducerConsumerPipeline::new(self.barriers(), self.name),
            storage: self.storage,
        }
    }
}

/// `CTA_GROUP × P::TMA_BYTES`, checked against the mbarrier's tx-count range.
struct ExpectBytes<P, const CTA_GROUP: u32>(core::marker::PhantomData<P>);

impl<P: TilePayload, const CTA_GROUP: u32> ExpectBytes<P, CTA_GROUP> {
    const VALUE: u32 = {
        assert!(
            CTA_GROUP == 1 || CTA_GROUP == 2,
            "CTA_GROUP is 1 (Hopper) or 2 (Blackwell CTA pair)"
        );
        assert!(P::TMA_BYTES > 0, "a payload moves at least one byte");
        assert!(
            (P::TMA_BYTES as u64 * CTA_GROUP as u64) < (1 << 20),
            "a stage's transaction bytes exceed the mbarrier tx-count limit (2^20 - 1)"
        );
        P::TMA_BYTES * CTA_GROUP
    };
}

#[inline(always)]
fn stage_of<'a, P: TilePayload, const STAGES: usize>(
    storage: SharedRef<'a, InputTileStorage<P, STAGES>>,
    index: u32,
) -> SharedRef<'a, P::Stage> {
    let stages = crate::smem_field!(storage, InputTileStorage<P, STAGES>, stages);
    // SAFETY: `index` comes from a PipelineState, always < STAGES.
    unsafe { stages.at_unchecked(index as usize) }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    // Never defined: referenced only by the drop glue of linear handles, so
    // a kernel that can drop one fails to assemble, naming the mistake.
    fn baton_error__InputProducer_dropped_without_drain();
    fn baton_error__InputProducerStage_dropped_without_release();
    fn baton_error__InputConsumerStage_dropped_without_release();
}

// ----- producer ---------------------------------------------------------------

/// The TMA producer role: one elected thread loads every stage.
///
/// **Linear**: it must be consumed by [`drain`](Self::drain) (the producer
/// tail), so a CTA cannot exit while consumers — possibly in other CTAs of
/// the cluster — still arrive on or read its stages. Dropping it instead
/// fails to assemble on the GPU (`baton_error__InputProducer_dropped_without_drain`)
/// and panics on the CPU backend.
///
/// Single-threaded walk-through (the TMA is played by `complete_tx`):
///
/// ```
/// use baton::smem::SharedRef;
/// use baton::tile_pipeline::*;
///
/// struct P;
/// impl TilePayload for P {
///     type Stage = Tile<u8, 1, 16>;
///     const TMA_BYTES: u32 = 16;
/// }
/// let storage = InputTileStorage::<P, 2>::new();
/// let pipe = InputTilePipeline::<P, 2>::new(SharedRef::from_ref(&storage), c"doc");
/// pipe.init(1); // one consumer thread (this one) releases each stage
/// let (mut producer, mut consumer) = (pipe.producer(), pipe.consumer());
///
/// assert!(producer.try_acquire(), "fresh stages are free");
/// let s = producer.acquire_stage(); // linear
/// s.arrive_expect_tx(); // 16 bytes expected on full[0]
/// assert!(!consumer.try_acquire(), "bytes not landed yet");
/// s.barrier().complete_tx(16); // what the copy engine does
/// s.release(); // step only
/// assert!(consumer.try_acquire());
/// consumer.acquire_stage().release(); // arrive on empty[0]
///
/// let s = producer.acquire(); // scoped: stage 1
/// assert_eq!(s.index(), 1);
/// s.arrive_expect_tx();
/// s.barrier().complete_tx(s.expect_bytes());
/// drop(s); // step only
/// drop(consumer.acquire()); // arrive on empty[1]
///
/// producer.drain(); // both stages released: returns at once
/// ```
pub struct InputProducer<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32 = 1> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, InputTileStorage<P, STAGES>>,
}

impl<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32>
    InputProducer<'a, P, STAGES, CTA_GROUP>
{
    /// Bytes announced per stage (see [`InputTilePipeline::EXPECT_BYTES`]).
    pub const EXPECT_BYTES: u32 = ExpectBytes::<P, CTA_GROUP>::VALUE;

    /// Scoped: waits until the consumers freed the current stage
    /// (`empty[s]`); the guard exposes the tiles and the `full` barrier.
    /// Call [`ProducerTiles::arrive_expect_tx`] and issue the TMA loads to
    /// [`ProducerTiles::barrier`]; dropping the guard only steps (the copies
    /// complete the phase).
    #[inline(always)]
    pub fn acquire(&mut self) -> ProducerTiles<'_, 'a, P, STAGES, CTA_GROUP> {
        let storage = self.storage;
        let guard = self.pipe.produce_explicit();
        let tiles = stage_of(storage, guard.index());
        ProducerTiles {
            guard,
            tiles,
            #[cfg(not(target_arch = "nvptx64"))]
            signalled: core::cell::Cell::new(false),
        }
    }

    /// Linear: waits for the current stage like [`acquire`](Self::acquire)
    /// and returns a stage that must be consumed by
    /// [`InputProducerStage::release`].
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> InputProducerStage<'_, 'a, P, STAGES, CTA_GROUP> {
        let storage = self.storage;
        let stage = self.pipe.acquire_producer();
        let tiles = stage_of(storage, stage.index());
        InputProducerStage {
            stage: ManuallyDrop::new(stage),
            tiles,
            #[cfg(not(target_arch = "nvptx64"))]
            signalled: core::cell::Cell::new(false),
        }
    }

    /// Non-blocking: is the current stage free? (one `try_wait`, no state
    /// change).
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_consumer()
    }

    /// Current stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.producer_stage()
    }

    /// Current phase parity.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.pipe.producer_phase()
    }

    /// Producer tail: waits until the consumers released every stage (the
    /// next `STAGES` waits on `empty`), consuming the role. Call it after the
    /// last load, before the CTA may exit.
    #[inline(always)]
    pub fn drain(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used again and its drop is suppressed.
        let mut pipe = unsafe { core::ptr::read(&this.pipe) };
        pipe.drain();
    }
}

impl<P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> Drop
    for InputProducer<'_, P, STAGES, CTA_GROUP>
{
    #[inline(always)]
    fn drop(&mut self) {
        super::forgotten!(
            baton_error__InputProducer_dropped_without_drain,
            "baton: InputProducer of pipeline {:?} (stage {}, phase {}) dropped without drain()",
            self.pipe.name(),
            self.pipe.producer_stage(),
            self.pipe.producer_phase()
        );
    }
}

/// Scoped producer claim on one free stage (from [`InputProducer::acquire`]).
///
/// Contract: the elected producer thread calls
/// [`arrive_expect_tx`](Self::arrive_expect_tx) exactly once (the only
/// arrival on `full[s]`, count 1) and issues TMA loads of exactly
/// [`expect_bytes`](Self::expect_bytes) bytes to [`barrier`](Self::barrier).
/// Drop steps to the next stage; it does not arrive. On the CPU backend a
/// guard dropped without `arrive_expect_tx` panics (it would hang on the GPU).
#[must_use = "the stage is released as soon as the guard drops"]
pub struct ProducerTiles<'p, 'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> {
    guard: ProducerGuard<'p, 'a, STAGES, false>,
    tiles: SharedRef<'a, P::Stage>,
    #[cfg(not(target_arch = "nvptx64"))]
    signalled: core::cell::Cell<bool>,
}

impl<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32>
    ProducerTiles<'_, 'a, P, STAGES, CTA_GROUP>
{
    /// The stage's tiles in shared memory (TMA destinations).
    #[inline(always)]
    pub fn tiles(&self) -> SharedRef<'a, P::Stage> {
        self.tiles
    }

    /// Stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.guard.index()
    }

    /// Phase parity waited for.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.guard.phase()
    }

    /// `full[stage]`: the barrier the TMA loads complete on.
    #[inline(always)]
    pub fn barrier(&self) -> BarrierRef<'a> {
        self.guard.mbar()
    }

    /// Bytes this stage's loads must complete (`CTA_GROUP × P::TMA_BYTES`).
    #[inline(always)]
    pub fn expect_bytes(&self) -> u32 {
        ExpectBytes::<P, CTA_GROUP>::VALUE
    }

    /// The producer's only arrival on `full[stage]`, announcing
    /// [`expect_bytes`](Self::expect_bytes) transaction bytes.
    #[inline(always)]
    pub fn arrive_expect_tx(&self) {
        self.guard.arrive_expect_tx(self.expect_bytes());
        #[cfg(not(target_arch = "nvptx64"))]
        self.signalled.set(true);
    }

    /// [`arrive_expect_tx`](Self::arrive_expect_tx) for a stage whose loads
    /// are trimmed: announces `bytes` (at most
    /// [`expect_bytes`](Self::expect_bytes)), and the loads issued to
    /// [`barrier`](Self::barrier) must complete exactly that many. For a
    /// ragged last tile loaded with a smaller TMA box instead of a full box
    /// that TMA zero-fills (zero fill is slow): the rows left unloaded hold
    /// stale data, so the consumer must discard whatever they produce.
    /// Debug builds panic (CPU) or trap (GPU) when `bytes` exceeds
    /// `expect_bytes()`.
    ///
    /// ```
    /// use baton::smem::SharedRef;
    /// use baton::tile_pipeline::*;
    ///
    /// struct P;
    /// impl TilePayload for P {
    ///     type Stage = Tile<u8, 4, 16>;
    ///     const TMA_BYTES: u32 = 64;
    /// }
    /// let storage = InputTileStorage::<P, 1>::new();
    /// let pipe = InputTilePipeline::<P, 1>::new(SharedRef::from_ref(&storage), c"doc");
    /// pipe.init(1);
    /// let (mut producer, mut consumer) = (pipe.producer(), pipe.consumer());
    /// let s = producer.acquire();
    /// s.arrive_expect_tx_bytes(32); // only 2 of the 4 rows are loaded
    /// s.barrier().complete_tx(32);
    /// drop(s);
    /// assert!(consumer.try_acquire(), "full after 32 bytes");
    /// # drop(consumer.acquire());
    /// # producer.drain();
    /// ```
    #[inline(always)]
    pub fn arrive_expect_tx_bytes(&self, bytes: u32) {
        debug_assert!(
            bytes <= self.expect_bytes(),
            "trimmed stage announces more than a full stage"
        );
        self.guard.arrive_expect_tx(bytes);
        #[cfg(not(target_arch = "nvptx64"))]
        self.signalled.set(true);
    }

    /// CPU backend: write access to one tile of the stage (tests, or a
    /// producer that fills tiles without TMA).
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn view_mut<T: Copy, const R: usize, const C: usize>(
        &mut self,
        swizzle: Swizzle,
        tile: fn(&P::Stage) -> &Tile<T, R, C>,
    ) -> TileViewMut<'_, T, R, C> {
        // SAFETY: the producer holds the stage while the guard lives.
        unsafe { TileViewMut::new(tile(self.tiles.get()), swizzle) }
    }
}

impl<P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> Drop
    for ProducerTiles<'_, '_, P, STAGES, CTA_GROUP>
{
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(not(target_arch = "nvptx64"))]
        if !self.signalled.get() && !std::thread::panicking() {
            panic!(
                "baton: ProducerTiles (stage {}, phase {}) dropped without arrive_expect_tx(): the full barrier would never complete",
                self.index(),
                self.phase()
            );
        }
    }
}

/// Linear producer claim on one free stage (from
/// [`InputProducer::acquire_stage`]): must be consumed by
/// [`release`](Self::release) (step; the signal was
/// [`arrive_expect_tx`](Self::arrive_expect_tx) and the TMA bytes). Dropping
/// it fails to assemble on the GPU
/// (`baton_error__InputProducerStage_dropped_without_release`) and panics on
/// the CPU.
#[must_use = "an InputProducerStage must be consumed by release()"]
pub struct InputProducerStage<'p, 'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> {
    stage: ManuallyDrop<ProducerStage<'p, 'a, STAGES>>,
    tiles: SharedRef<'a, P::Stage>,
    #[cfg(not(target_arch = "nvptx64"))]
    signalled: core::cell::Cell<bool>,
}

impl<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32>
    InputProducerStage<'_, 'a, P, STAGES, CTA_GROUP>
{
    /// The stage's tiles (TMA destinations).
    #[inline(always)]
    pub fn tiles(&self) -> SharedRef<'a, P::Stage> {
        self.tiles
    }

    /// Stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.stage.index()
    }

    /// `full[stage]`.
    #[inline(always)]
    pub fn barrier(&self) -> BarrierRef<'a> {
        self.stage.mbar()
    }

    /// `CTA_GROUP × P::TMA_BYTES`.
    #[inline(always)]
    pub fn expect_bytes(&self) -> u32 {
        ExpectBytes::<P, CTA_GROUP>::VALUE
    }

    /// The producer's only arrival on `full[stage]`, with the stage's bytes.
    #[inline(always)]
    pub fn arrive_expect_tx(&self) {
        self.stage.arrive_expect_tx(self.expect_bytes());
        #[cfg(not(target_arch = "nvptx64"))]
        self.signalled.set(true);
    }

    /// Steps to the next stage (the TMA completes the phase). On the CPU
    /// backend, panics if [`arrive_expect_tx`](Self::arrive_expect_tx) was
    /// not called.
    #[inline(always)]
    pub fn release(self) {
        #[cfg(not(target_arch = "nvptx64"))]
        assert!(
            self.signalled.get(),
            "baton: InputProducerStage (stage {}) released without arrive_expect_tx(): the full barrier would never complete",
            self.index()
        );
        let mut this = ManuallyDrop::new(self);
        // SAFETY: taken once; `this` is never dropped.
        let stage = unsafe { ManuallyDrop::take(&mut this.stage) };
        stage.release_without_signal();
    }
}

impl<P: TilePayload, const STAGES: usize, const CTA_GROUP: u32> Drop
    for InputProducerStage<'_, '_, P, STAGES, CTA_GROUP>
{
    #[inline(always)]
    fn drop(&mut self) {
        super::forgotten!(
            baton_error__InputProducerStage_dropped_without_release,
            "baton: InputProducerStage (stage {}, phase {}) dropped without release()",
            self.stage.index(),
            self.stage.phase()
        );
    }
}

// ----- consumer ---------------------------------------------------------------

/// The consumer role: waits for loaded stages and releases them.
///
/// ```
/// use baton::smem::SharedRef;
/// use baton::tile_pipeline::*;
///
/// struct P;
/// impl TilePayload for P {
///     type Stage = Tile<u8, 1, 16>;
///     const TMA_BYTES: u32 = 16;
/// }
/// let storage = InputTileStorage::<P, 2>::new();
/// let pipe = InputTilePipeline::<P, 2>::new(SharedRef::from_ref(&storage), c"doc");
/// pipe.init(1); // one consumer thread (this one) releases each stage
/// let (mut producer, mut consumer) = (pipe.producer(), pipe.consumer());
/// for _ in 0..2 {
///     let s = producer.acquire();
///     s.arrive_expect_tx();
///     s.barrier().complete_tx(16);
/// }
/// // Poll instead of blocking, then take the stage without a second wait.
/// let ready = consumer.try_acquire();
/// assert!(ready);
/// let tiles = consumer.acquire_if_needed(ready);
/// assert_eq!((tiles.index(), tiles.phase()), (0, 0));
/// drop(tiles); // arrive on empty[0], step
/// // The linear form, with an explicit signal.
/// let s = consumer.acquire_stage();
/// s.arrive();
/// s.release_without_signal();
/// assert_eq!((consumer.index(), consumer.phase()), (0, 1));
/// producer.drain();
/// ```
pub struct InputConsumer<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32 = 1> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, InputTileStorage<P, STAGES>>,
}

impl<'a, P: TilePayload, const STAGES: usize, const CTA_GROUP: u32>
    InputConsumer<'a, P, STAGES, CTA_GROUP>
{
    /// Scoped: waits until the current stage is loaded (`full[s]`); on drop
    /// every thread that drops it arrives on `empty[s]` (count:
    /// [`consumer_arrivals_per_thread`]) and steps.
    #[inline(always)]
    pub fn acquire(&mut self) -> ConsumerTiles<'_, 'a, P, STAGES> {
        let storage = self.storage;
        let guard = self.pipe.consume();
        let tiles = stage_of(storage, guard.index());
        ConsumerTiles { guard, tiles }
    }

    /// Scoped, when [`try_acquire`](Self::try_acquire) already said the
    /// stage is loaded: skips the blocking wait when `ready` (the stage
    /// cannot un-complete while this consumer holds it, so the remaining
    /// check is one successful `try_wait`).
    #[inline(always)]
    pub fn acquire_if_needed(&mut self, ready: bool) -> ConsumerTiles<'_, 'a, P, STAGES> {
        self.pipe.wait_producer_if_needed(ready);
        self.acquire()
    }

    /// Scoped multicast release: waits like [`acquire`](Self::acquire); on
    /// drop, if `signaller`, arrives once (`mbarrier.arrive.release.cluster`)
    /// on `empty[s]` of every CTA in `cta_mask` — the CTAs whose TMA
    /// multicast wrote into this stage, this CTA included — then steps.
    ///
    /// Contract: exactly one thread per consumer warpgroup passes
    /// `signaller = true`; the empty count is then
    /// [`consumer_arrivals_multicast`]. The signaller's guard must drop only
    /// after **every thread of its warpgroup has passed its wait and
    /// finished reading** the stage — a named barrier over the warpgroup (or
    /// a warpgroup-collective `wgmma.wait_group`) before the drop. Besides
    /// protecting the reads, this keeps non-signalling threads from being
    /// lapped: they do not arrive, so once the signallers released a stage
    /// the producer may refill it, and a thread that had not yet observed
    /// the phase would see its parity flip twice and wait forever.
    ///
    /// The mask is checked against the cluster size (GPU debug builds trap;
    /// the CPU backend's cluster has one CTA, so its only valid mask is
    /// `0b1`).
    #[inline(always)]
    pub fn acquire_multicast(
        &mut self,
        cta_mask: u16,
        signaller: bool,
    ) -> ConsumerTilesMulticast<'_, 'a, P, STAGES> {
        validate_cta_mask(cta_mask);
        let storage = self.storage;
        let guard = self.pipe.consume_explicit();
        let tiles = stage_of(storage, guard.index());
        ConsumerTilesMulticast {
            guard,
            tiles,
            cta_mask,
            signaller,
        }
    }

    /// Linear: waits like [`acquire`](Self::acquire) and returns a stage
    /// that must be consumed by a `release*` method.
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> InputConsumerStage<'_, 'a, P, STAGES> {
        let storage = self.storage;
        let stage = self.pipe.acquire_consumer();
        let tiles = stage_of(storage, stage.index());
        InputConsumerStage {
            stage: ManuallyDrop::new(stage),
            tiles,
        }
    }

    /// Non-blocking: is the current stage loaded? One `try_wait.parity` on
    /// `full[stage]`; no state change.
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_producer()
    }

    /// Skips `n` stages that another consumer group takes, without waiting
    /// or releasing them ([`ProducerConsumerPipeline::consumer_skip`], whose
    /// contract applies: each stage has exactly one consuming group, and the
    /// `empty` count counts only its arrivals).
    ///
    /// ```
    /// use baton::smem::SharedRef;
    /// use baton::tile_pipeline::*;
    ///
    /// struct P;
    /// impl TilePayload for P {
    ///     type Stage = Tile<u8, 1, 16>;
    ///     const TMA_BYTES: u32 = 16;
    /// }
    /// let storage = InputTileStorage::<P, 2>::new();
    /// let pipe = InputTilePipeline::<P, 2>::new(SharedRef::from_ref(&storage), c"doc");
    /// pipe.init(1);
    /// let (mut producer, mut wg0, mut wg1) = (pipe.producer(), pipe.consumer(), pipe.consumer());
    /// for _ in 0..2 {
    ///     let s = producer.acquire();
    ///     s.arrive_expect_tx();
    ///     s.barrier().complete_tx(16);
    /// }
    /// drop(wg0.acquire()); // stage 0: warpgroup 0's tile
    /// wg1.skip(1);
    /// drop(wg1.acquire()); // stage 1: warpgroup 1's tile
    /// producer.drain();
    /// ```
    #[inline(always)]
    pub fn skip(&mut self, n: u32) {
        self.pipe.consumer_skip(n);
    }

    /// Current stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.consumer_stage()
    }

    /// Current phase parity.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.pipe.consumer_phase()
    }
}

/// Scoped consumer claim on a loaded stage (from [`InputConsumer::acquire`]):
/// drop = arrive on `empty[s]` (this thread) + step.
#[must_use = "the stage is released as soon as the guard drops"]
pub struct ConsumerTiles<'p, 'a, P: TilePayload, const STAGES: usize> {
    guard: ConsumerGuard<'p, 'a, STAGES, true>,
    tiles: SharedRef<'a, P::Stage>,
}

impl<'a, P: TilePayload, const STAGES: usize> ConsumerTiles<'_, 'a, P, STAGES> {
    /// The stage's tiles (wgmma descriptors, `ld.shared`, TMA store source).
    #[inline(always)]
    pub fn tiles(&self) -> SharedRef<'a, P::Stage> {
        self.tiles
    }

    /// Stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.guard.index()
    }

    /// Phase parity waited for.
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.guard.phase()
    }

    /// `empty[stage]`: the barrier this claim signals on drop.
    #[inline(always)]
    pub fn barrier(&self) -> BarrierRef<'a> {
        self.guard.mbar()
    }

    /// CPU backend: read access to one tile of the held stage.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn view<T: Copy, const R: usize, const C: usize>(
        &self,
        swizzle: Swizzle,
        tile: fn(&P::Stage) -> &Tile<T, R, C>,
    ) -> TileView<'_, T, R, C> {
        // SAFETY: the stage is held while the guard lives.
        unsafe { TileView::new(tile(self.tiles.get()), swizzle) }
    }
}

/// Scoped consumer claim released to a multicast mask (from
/// [`InputConsumer::acquire_multicast`]): on drop the signalling thread
/// arrives once on `empty[s]` of every CTA in the mask; every thread steps.
///
/// ```
/// use baton::smem::SharedRef;
/// use baton::tile_pipeline::*;
///
/// struct P;
/// impl TilePayload for P {
///     type Stage = Tile<u8, 1, 16>;
///     const TMA_BYTES: u32 = 16;
/// }
/// let storage = InputTileStorage::<P, 2>::new();
/// let pipe = InputTilePipeline::<P, 2>::new(SharedRef::from_ref(&storage), c"doc");
/// // Hopper, 1 consumer warpgroup, cluster 1 × 1: one arrival per stage.
/// pipe.init(consumer_arrivals_multicast(1, 1, 1));
/// let (mut producer, mut consumer) = (pipe.producer(), pipe.consumer());
/// let s = producer.acquire();
/// s.arrive_expect_tx();
/// s.barrier().complete_tx(16);
/// drop(s);
/// {
///     let tiles = consumer.acquire_multicast(0b1, true); // this thread signals
///     assert_eq!(tiles.cta_mask(), 0b1);
///     // (on the GPU: named barrier over the warpgroup here)
/// } // arrive_cluster(0) on empty[0], step
/// producer.drain();
/// ```
#[must_use = "the stage is released as soon as the guard drops"]
pub struct ConsumerTilesMulticast<'p, 'a, P: TilePayload, const STAGES: usize> {
    guard: ConsumerGuard<'p, 'a, STAGES, false>,
    tiles: SharedRef<'a, P::Stage>,
    cta_mask: u16,
    signaller: bool,
}

impl<'a, P: TilePayload, const STAGES: usize> ConsumerTilesMulticast<'_, 'a, P, STAGES> {
    /// The stage's tiles.
    #[inline(always)]
    pub fn tiles(&self) -> SharedRef<'a, P::Stage> {
        self.tiles
    }

    /// Stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.guard.index()
    }

    /// The CTAs released on drop.
    #[inline(always)]
    pub fn cta_mask(&self) -> u16 {
        self.cta_mask
    }

    /// CPU backend: read access to one tile of the held stage.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn view<T: Copy, const R: usize, const C: usize>(
        &self,
        swizzle: Swizzle,
        tile: fn(&P::Stage) -> &Tile<T, R, C>,
    ) -> TileView<'_, T, R, C> {
        // SAFETY: the stage is held while the guard lives.
        unsafe { TileView::new(tile(self.tiles.get()), swizzle) }
    }
}

#[inline(always)]
/// One arrival by the signalling lane on `bar` in every CTA of `mask`.
/// CTA-scope release (`arrive_remote_if`): handing back a stage publishes no
/// data, and a cluster-scope release would wait for the thread's in-flight
/// work (see `BarrierRef::arrive_remote_if`).
fn release_to_mask(bar: BarrierRef<'_>, mut mask: u16) {
    while mask != 0 {
        let rank = mask.trailing_zeros();
        bar.arrive_remote_if(rank, true);
        mask &= mask - 1;
    }
}

impl<P: TilePayload, const STAGES: usize> Drop for ConsumerTilesMulticast<'_, '_, P, STAGES> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.signaller {
            release_to_mask(self.guard.mbar(), self.cta_mask);
        }
        // the guard field then steps
    }
}

/// Linear consumer claim (from [`InputConsumer::acquire_stage`]): must be
/// consumed by [`release`](Self::release),
/// [`release_multicast`](Self::release_multicast) or
/// [`release_without_signal`](Self::release_without_signal). Dropping it
/// fails to assemble on the GPU and panics on the CPU.
#[must_use = "an InputConsumerStage must be released"]
pub struct InputConsumerStage<'p, 'a, P: TilePayload, const STAGES: usize> {
    stage: ManuallyDrop<ConsumerStage<'p, 'a, STAGES>>,
    tiles: SharedRef<'a, P::Stage>,
}

impl<'p, 'a, P: TilePayload, const STAGES: usize> InputConsumerStage<'p, 'a, P, STAGES> {
    /// The stage's tiles.
    #[inline(always)]
    pub fn tiles(&self) -> SharedRef<'a, P::Stage> {
        self.tiles
    }

    /// Stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.stage.index()
    }

    /// `empty[stage]`.
    #[inline(always)]
    pub fn barrier(&self) -> BarrierRef<'a> {
        self.stage.mbar()
    }

    /// This thread arrives on `empty[stage]` (no step).
    #[inline(always)]
    pub fn arrive(&self) {
        self.stage.arrive();
    }

    /// CPU backend: read access to one tile of the held stage.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn view<T: Copy, const R: usize, const C: usize>(
        &self,
        swizzle: Swizzle,
        tile: fn(&P::Stage) -> &Tile<T, R, C>,
    ) -> TileView<'_, T, R, C> {
        // SAFETY: the stage is held while `self` lives.
        unsafe { TileView::new(tile(self.tiles.get()), swizzle) }
    }

    #[inline(always)]
    fn take(self) -> ConsumerStage<'p, 'a, STAGES> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: taken once; `this` is never dropped.
        unsafe { ManuallyDrop::take(&mut this.stage) }
    }

    /// Arrive on `empty[stage]` (this thread) and step.
    #[inline(always)]
    pub fn release(self) {
        self.take().release();
    }

    /// Step now, signal later: the MMA warpgroup's pattern (the `wgmma`s
    /// reading this stage are still in flight; release the returned
    /// [`PendingRelease`](crate::pipeline::PendingRelease) after
    /// `wgmma.wait_group` retired them).
    #[inline(always)]
    pub fn defer_release(self) -> crate::pipeline::PendingRelease<'a> {
        self.take().defer_release()
    }

    /// If `signaller`, arrive once on `empty[stage]` of every CTA in
    /// `cta_mask`; step (contract of [`InputConsumer::acquire_multicast`]).
    #[inline(always)]
    pub fn release_multicast(self, cta_mask: u16, signaller: bool) {
        validate_cta_mask(cta_mask);
        let stage = self.take();
        if signaller {
            release_to_mask(stage.mbar(), cta_mask);
        }
        stage.release_without_signal();
    }

    /// Step only (the signal was an explicit [`arrive`](Self::arrive) or an
    /// MMA commit to [`barrier`](Self::barrier)).
    #[inline(always)]
    pub fn release_without_signal(self) {
        self.take().release_without_signal();
    }
}

impl<P: TilePayload, const STAGES: usize> Drop for InputConsumerStage<'_, '_, P, STAGES> {
    #[inline(always)]
    fn drop(&mut self) {
        super::forgotten!(
            baton_error__InputConsumerStage_dropped_without_release,
            "baton: InputConsumerStage (stage {}, phase {}) dropped without release()",
            self.stage.index(),
            self.stage.phase()
        );
    }
}
