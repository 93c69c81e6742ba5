//! `OutputTilePipeline`: the MMA warps hand accumulator stages to the
//! epilogue warps; `OutputKPipeline`: the same ring used once per K block
//! (the MMA hands a partial accumulator per K block to promotion/epilogue
//! warps — blockwise-scaled FP8).
//!
//! | role | waits on | signals | arrivals per phase (defaults) |
//! |---|---|---|---|
//! | MMA ([`OutputProducer`], [`OutputKProducer`]) | `empty[s]` | `full[s]`: an arrive per MMA thread, or an MMA commit to [`MmaStage::barrier`] | `producer_arrivals` ([`OUTPUT_PRODUCER_ARRIVALS`] = 1: one elected thread / one commit) |
//! | epilogue ([`OutputConsumer`], [`OutputKConsumer`]) | `full[s]` | arrive on `empty[s]` (every epilogue thread) | [`output_consumer_arrivals`]`(cta_group)` = `cta_group × 128` |
//!
//! `Acc` is the accumulator storage of one stage: shared-memory tiles on
//! Hopper (TMEM columns come with Blackwell). The phase logic is
//! [`ProducerConsumerPipeline`]'s.

use crate::arch::current::BarrierRef;
use crate::pipeline::{ConsumerStage, PipelineBarriers, ProducerConsumerPipeline, ProducerStage};
use crate::smem::SharedRef;
use core::ffi::CStr;
use core::mem::ManuallyDrop;
use core::ops::Deref;

/// Default `full` count: one elected MMA thread arrives (or one commit).
pub const OUTPUT_PRODUCER_ARRIVALS: u32 = 1;

/// Default `empty` count: every thread of the epilogue warpgroup, in each CTA
/// of the CTA group, arrives: `cta_group × 128`.
///
/// ```
/// assert_eq!(baton::tile_pipeline::output_consumer_arrivals(2), 256);
/// ```
pub const fn output_consumer_arrivals(cta_group: u32) -> u32 {
    cta_group * 128
}

/// Shared-memory layout of an output pipeline: barriers, then the
/// accumulator stages.
#[repr(C)]
pub struct OutputTileStorage<Acc, const STAGES: usize> {
    /// `full[0..STAGES)` then `empty[0..STAGES)`.
    pub barriers: PipelineBarriers<STAGES>,
    /// Accumulator stages.
    pub stages: [Acc; STAGES],
}

#[cfg(not(target_arch = "nvptx64"))]
impl<Acc: Default, const STAGES: usize> OutputTileStorage<Acc, STAGES> {
    /// Fresh storage in host memory (CPU backend).
    pub fn new() -> Self {
        Self {
            barriers: PipelineBarriers::new(),
            stages: core::array::from_fn(|_| Acc::default()),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<Acc: Default, const STAGES: usize> Default for OutputTileStorage<Acc, STAGES> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn acc_of<'a, Acc, const STAGES: usize>(
    storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
    i: u32,
) -> SharedRef<'a, Acc> {
    let stages = crate::smem_field!(storage, OutputTileStorage<Acc, STAGES>, stages);
    // SAFETY: `i` comes from a PipelineState (< STAGES).
    unsafe { stages.at_unchecked(i as usize) }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    fn baton_error__MmaStage_dropped_without_release();
    fn baton_error__EpilogueStage_dropped_without_release();
    fn baton_error__MmaKStage_dropped_without_release();
    fn baton_error__PerKConsumerStage_dropped_without_release();
}

macro_rules! output_pipeline {
    ($(#[$doc:meta])* $name:ident, $producer:ident, $consumer:ident) => {
        $(#[$doc])*
        pub struct $name<'a, Acc, const STAGES: usize> {
            storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
            name: &'static CStr,
        }

        impl<Acc, const STAGES: usize> Clone for $name<'_, Acc, STAGES> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<Acc, const STAGES: usize> Copy for $name<'_, Acc, STAGES> {}

        impl<'a, Acc, const STAGES: usize> $name<'a, Acc, STAGES> {
            /// A pipeline over `storage`, named `name` in hang reports.
            #[inline(always)]
            pub fn new(storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>, name: &'static CStr) -> Self {
                Self { storage, name }
            }

            /// The barrier array.
            #[inline(always)]
            pub fn barriers(&self) -> SharedRef<'a, PipelineBarriers<STAGES>> {
                crate::smem_field!(self.storage, OutputTileStorage<Acc, STAGES>, barriers)
            }

            /// Accumulator stage `i` (panics/traps if `i >= STAGES`).
            #[inline(always)]
            pub fn stage(&self, i: u32) -> SharedRef<'a, Acc> {
                crate::smem_field!(self.storage, OutputTileStorage<Acc, STAGES>, stages).at(i as usize)
            }

            /// Initializes the barriers (one thread; then a block barrier):
            /// `full` with `producer_arrivals`, `empty` with
            /// `consumer_arrivals`.
            #[inline(always)]
            pub fn init(&self, producer_arrivals: u32, consumer_arrivals: u32) {
                ProducerConsumerPipeline::new(self.barriers(), self.name).init_barriers(producer_arrivals, consumer_arrivals);
            }

            /// The MMA (producer) role.
            #[inline(always)]
            pub fn producer(&self) -> $producer<'a, Acc, STAGES> {
                $producer { pipe: ProducerConsumerPipeline::new(self.barriers(), self.name), storage: self.storage }
            }

            /// The epilogue (consumer) role.
            #[inline(always)]
            pub fn consumer(&self) -> $consumer<'a, Acc, STAGES> {
                $consumer { pipe: ProducerConsumerPipeline::new(self.barriers(), self.name), storage: self.storage }
            }
        }
    };
}

output_pipeline!(
    /// Accumulator stages from the MMA warps to the epilogue warps, one stage
    /// per output tile.
    ///
    /// ```
    /// use baton::arch::cpu::{CpuBlock, elect_one};
    /// use baton::tile_pipeline::*;
    /// use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    ///
    /// // The "accumulator" is one word per stage here.
    /// let block = CpuBlock::new(OutputTileStorage::<AtomicU32, 2>::new());
    /// // warp 0: MMA; warps 1..=4: epilogue warpgroup (128 arrivals).
    /// block.run_warps(5, |warp, smem| {
    ///     let pipe = OutputTilePipeline::new(smem, c"acc");
    ///     if warp.index() == 0 {
    ///         elect_one(|| pipe.init(OUTPUT_PRODUCER_ARRIVALS, output_consumer_arrivals(1)));
    ///     }
    ///     warp.sync_block();
    ///     if warp.index() == 0 {
    ///         let mut mma = pipe.producer();
    ///         elect_one(|| {
    ///             for tile in 0..6u32 {
    ///                 let stage = mma.acquire(); // waits empty
    ///                 stage.acc().get().store(tile, Relaxed);
    ///             } // drop: arrive on full + step
    ///         });
    ///     } else {
    ///         let mut epi = pipe.consumer();
    ///         for tile in 0..6u32 {
    ///             let stage = epi.acquire(); // waits full
    ///             assert_eq!(stage.acc().get().load(Relaxed), tile);
    ///         } // drop: arrive on empty + step
    ///     }
    /// });
    /// ```
    OutputTilePipeline,
    OutputProducer,
    OutputConsumer
);

output_pipeline!(
    /// Per-K accumulator stages: for each output tile the MMA warp hands one
    /// partial accumulator per K block to the promotion/epilogue warps
    /// (blockwise-scaled FP8 promotes `acc += partial × scale_a × scale_b`
    /// outside the tensor core). Same protocol as [`OutputTilePipeline`];
    /// the stages carry their K index.
    ///
    /// ```
    /// use baton::arch::cpu::{CpuBlock, elect_one};
    /// use baton::tile_pipeline::*;
    /// use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    ///
    /// let block = CpuBlock::new(OutputTileStorage::<AtomicU32, 2>::new());
    /// block.run_warps(5, |warp, smem| {
    ///     let pipe = OutputKPipeline::new(smem, c"per-k");
    ///     if warp.index() == 0 {
    ///         elect_one(|| pipe.init(1, output_consumer_arrivals(1)));
    ///     }
    ///     warp.sync_block();
    ///     let k_blocks = 4;
    ///     if warp.index() == 0 {
    ///         let mut mma = pipe.producer();
    ///         elect_one(|| {
    ///             for k in 0..k_blocks {
    ///                 let stage = mma.acquire_k(k);
    ///                 stage.acc().get().store(10 + k, Relaxed); // partial of block k
    ///                 stage.release(); // arrive on full + step
    ///             }
    ///         });
    ///     } else {
    ///         let mut epi = pipe.consumer();
    ///         let mut total = 0;
    ///         let mut tile = epi.tile(k_blocks);
    ///         while let Some(ctx) = tile.next_k() {
    ///             total += ctx.acc().get().load(Relaxed); // promote
    ///             if ctx.is_last_k() {
    ///                 assert_eq!(ctx.k(), k_blocks - 1);
    ///             }
    ///         } // each context: arrive on empty + step
    ///         assert_eq!(total, 10 + 11 + 12 + 13);
    ///     }
    /// });
    /// ```
    OutputKPipeline,
    OutputKProducer,
    OutputKConsumer
);

// ----- whole-tile roles ------------------------------------------------------

/// The MMA role of an [`OutputTilePipeline`].
pub struct OutputProducer<'a, Acc, const STAGES: usize> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
}

impl<'a, Acc, const STAGES: usize> OutputProducer<'a, Acc, STAGES> {
    /// Linear: waits until the epilogue freed the current accumulator stage
    /// (`empty[s]`); the stage must be released.
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> MmaStage<'_, 'a, Acc, STAGES> {
        let storage = self.storage;
        let stage = self.pipe.acquire_producer();
        let acc = acc_of(storage, stage.index());
        MmaStage {
            stage: ManuallyDrop::new(stage),
            acc,
        }
    }

    /// Scoped: as [`acquire_stage`](Self::acquire_stage); drop = this thread
    /// arrives on `full[s]` and steps ([`MmaStage::release`]).
    #[inline(always)]
    pub fn acquire(&mut self) -> OutputStage<MmaStage<'_, 'a, Acc, STAGES>> {
        OutputStage {
            stage: ManuallyDrop::new(self.acquire_stage()),
        }
    }

    /// Non-blocking: is the current stage free? (no state change).
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_consumer()
    }

    /// Waits until the epilogue released every stage (call before tearing
    /// down accumulator storage — TMEM dealloc on Blackwell).
    #[inline(always)]
    pub fn drain(&mut self) {
        self.pipe.drain();
    }

    /// Current stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.producer_stage()
    }
}

/// The epilogue role of an [`OutputTilePipeline`].
pub struct OutputConsumer<'a, Acc, const STAGES: usize> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
}

impl<'a, Acc, const STAGES: usize> OutputConsumer<'a, Acc, STAGES> {
    /// Linear: waits until the MMA filled the current stage (`full[s]`).
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> EpilogueStage<'_, 'a, Acc, STAGES> {
        let storage = self.storage;
        let stage = self.pipe.acquire_consumer();
        let acc = acc_of(storage, stage.index());
        EpilogueStage {
            stage: ManuallyDrop::new(stage),
            acc,
        }
    }

    /// Scoped: drop = this thread arrives on `empty[s]` and steps.
    #[inline(always)]
    pub fn acquire(&mut self) -> OutputStage<EpilogueStage<'_, 'a, Acc, STAGES>> {
        OutputStage {
            stage: ManuallyDrop::new(self.acquire_stage()),
        }
    }

    /// Non-blocking: is the current stage filled? (no state change).
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_producer()
    }

    /// Scoped, skipping the blocking wait when `ready` (from
    /// [`try_acquire`](Self::try_acquire)).
    #[inline(always)]
    pub fn acquire_if_needed(
        &mut self,
        ready: bool,
    ) -> OutputStage<EpilogueStage<'_, 'a, Acc, STAGES>> {
        self.pipe.wait_producer_if_needed(ready);
        self.acquire()
    }

    /// Current stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.consumer_stage()
    }
}

pub(super) mod sealed {
    pub trait Sealed {}
}

/// A linear output stage that a scoped [`OutputStage`] releases on drop.
pub trait ScopedRelease: sealed::Sealed {
    /// The release the scope performs (arrive + step).
    fn release_scoped(self);
}

/// Scoped output stage: derefs to the linear stage `S` ([`MmaStage`],
/// [`EpilogueStage`], [`PerKConsumerStage`]) and releases it on drop.
#[must_use = "the stage is released as soon as the guard drops"]
pub struct OutputStage<S: ScopedRelease> {
    stage: ManuallyDrop<S>,
}

impl<S: ScopedRelease> OutputStage<S> {
    /// Scopes a linear stage.
    #[inline(always)]
    pub(super) fn new(stage: S) -> Self {
        Self {
            stage: ManuallyDrop::new(stage),
        }
    }
}

impl<S: ScopedRelease> Deref for OutputStage<S> {
    type Target = S;
    #[inline(always)]
    fn deref(&self) -> &S {
        &self.stage
    }
}

impl<S: ScopedRelease> Drop for OutputStage<S> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: taken exactly once, here.
        unsafe { ManuallyDrop::take(&mut self.stage) }.release_scoped();
    }
}

macro_rules! linear_output_stage {
    ($(#[$doc:meta])* $name:ident, $inner:ident, $symbol:ident, $signal:literal $(, $field:ident : $fty:ty)*) => {
        $(#[$doc])*
        #[must_use = "a linear stage must be released"]
        pub struct $name<'p, 'a, Acc, const STAGES: usize> {
            stage: ManuallyDrop<$inner<'p, 'a, STAGES>>,
            acc: SharedRef<'a, Acc>,
            $($field: $fty,)*
        }

        super::linear_stage!($name ['p, 'a, Acc, const STAGES: usize] ['p, 'a, Acc, STAGES], $inner, $symbol);

        impl<'p, 'a, Acc, const STAGES: usize> $name<'p, 'a, Acc, STAGES> {
            /// The stage's accumulator storage.
            #[inline(always)]
            pub fn acc(&self) -> SharedRef<'a, Acc> {
                self.acc
            }

            #[doc = concat!("The barrier this stage signals (`", $signal, "[index]`): hand it to an MMA commit.")]
            #[inline(always)]
            pub fn barrier(&self) -> BarrierRef<'a> {
                self.stage.mbar()
            }

            #[doc = concat!("This thread arrives on `", $signal, "[index]` (no step).")]
            #[inline(always)]
            pub fn arrive(&self) {
                self.stage.arrive();
            }

            #[doc = concat!("One arrival on `", $signal, "[index]` of CTA `cta_rank` (CTA pairs).")]
            #[inline(always)]
            pub fn arrive_cluster(&self, cta_rank: u32) {
                self.stage.mbar().arrive_cluster(cta_rank);
            }

            #[doc = concat!("Arrive on `", $signal, "[index]` (this thread) and step.")]
            #[inline(always)]
            pub fn release(self) {
                self.take().release();
            }

            /// Step only (the signal was a commit or an explicit arrive).
            #[inline(always)]
            pub fn release_without_signal(self) {
                self.take().release_without_signal();
            }
        }

        impl<Acc, const STAGES: usize> sealed::Sealed for $name<'_, '_, Acc, STAGES> {}
        impl<Acc, const STAGES: usize> ScopedRelease for $name<'_, '_, Acc, STAGES> {
            #[inline(always)]
            fn release_scoped(self) {
                self.release();
            }
        }

    };
}

linear_output_stage!(
    /// The MMA's claim on a free accumulator stage (linear; from
    /// [`OutputProducer::acquire_stage`]). Fill [`acc`](Self::acc), then
    /// [`release`](Self::release) (arrive on `full` + step) or commit to
    /// [`barrier`](Self::barrier) and
    /// [`release_without_signal`](Self::release_without_signal).
    MmaStage, ProducerStage, baton_error__MmaStage_dropped_without_release, "full"
);

linear_output_stage!(
    /// The epilogue's claim on a filled accumulator stage (linear; from
    /// [`OutputConsumer::acquire_stage`]). Read [`acc`](Self::acc), then
    /// [`release`](Self::release) (arrive on `empty` + step).
    EpilogueStage, ConsumerStage, baton_error__EpilogueStage_dropped_without_release, "empty"
);

linear_output_stage!(
    /// The MMA's claim on a free stage for the partial accumulator of K block
    /// [`k`](Self::k) (linear; from [`OutputKProducer::acquire_k`]).
    MmaKStage, ProducerStage, baton_error__MmaKStage_dropped_without_release, "full", k: u32
);

linear_output_stage!(
    /// The promotion/epilogue warps' claim on the partial accumulator of K
    /// block [`k`](Self::k) of a tile with [`k_blocks`](Self::k_blocks)
    /// blocks (linear; from [`OutputKConsumer::acquire_k`]).
    PerKConsumerStage, ConsumerStage, baton_error__PerKConsumerStage_dropped_without_release, "empty", k: u32, k_blocks: u32
);

impl<Acc, const STAGES: usize> MmaKStage<'_, '_, Acc, STAGES> {
    /// The K block this partial belongs to.
    #[inline(always)]
    pub fn k(&self) -> u32 {
        self.k
    }
}

impl<Acc, const STAGES: usize> PerKConsumerStage<'_, '_, Acc, STAGES> {
    /// The K block of this partial.
    #[inline(always)]
    pub fn k(&self) -> u32 {
        self.k
    }

    /// K blocks of the output tile.
    #[inline(always)]
    pub fn k_blocks(&self) -> u32 {
        self.k_blocks
    }

    /// Is this the tile's last K block (time to run the epilogue)?
    #[inline(always)]
    pub fn is_last_k(&self) -> bool {
        self.k + 1 == self.k_blocks
    }
}

// ----- per-K roles -------------------------------------------------------------

/// The MMA role of an [`OutputKPipeline`].
pub struct OutputKProducer<'a, Acc, const STAGES: usize> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
}

impl<'a, Acc, const STAGES: usize> OutputKProducer<'a, Acc, STAGES> {
    /// Linear: waits for a free stage for K block `k`.
    #[inline(always)]
    pub fn acquire_k(&mut self, k: u32) -> MmaKStage<'_, 'a, Acc, STAGES> {
        let storage = self.storage;
        let stage = self.pipe.acquire_producer();
        let acc = acc_of(storage, stage.index());
        MmaKStage {
            stage: ManuallyDrop::new(stage),
            acc,
            k,
        }
    }

    /// Non-blocking: is the current stage free?
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_consumer()
    }

    /// Waits until every stage was released.
    #[inline(always)]
    pub fn drain(&mut self) {
        self.pipe.drain();
    }
}

/// The promotion/epilogue role of an [`OutputKPipeline`].
pub struct OutputKConsumer<'a, Acc, const STAGES: usize> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    storage: SharedRef<'a, OutputTileStorage<Acc, STAGES>>,
}

impl<'a, Acc, const STAGES: usize> OutputKConsumer<'a, Acc, STAGES> {
    /// Linear: waits for the partial of K block `k` (of `k_blocks`).
    #[inline(always)]
    pub fn acquire_k(&mut self, k: u32, k_blocks: u32) -> PerKConsumerStage<'_, 'a, Acc, STAGES> {
        let storage = self.storage;
        let stage = self.pipe.acquire_consumer();
        let acc = acc_of(storage, stage.index());
        PerKConsumerStage {
            stage: ManuallyDrop::new(stage),
            acc,
            k,
            k_blocks,
        }
    }

    /// Non-blocking: is the next partial ready?
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_producer()
    }

    /// Walks the `k_blocks` partials of one output tile
    /// ([`EpilogueKStage::next_k`]).
    #[inline(always)]
    pub fn tile(&mut self, k_blocks: u32) -> EpilogueKStage<'_, 'a, Acc, STAGES> {
        EpilogueKStage {
            consumer: self,
            k: 0,
            k_blocks,
        }
    }
}

/// One output tile's walk over its K-block partials (from
/// [`OutputKConsumer::tile`]): [`next_k`](Self::next_k) waits for the next
/// partial and returns a scoped [`EpilogueKContext`] that releases it on
/// drop.
pub struct EpilogueKStage<'c, 'a, Acc, const STAGES: usize> {
    consumer: &'c mut OutputKConsumer<'a, Acc, STAGES>,
    k: u32,
    k_blocks: u32,
}

/// Scoped claim on one K-block partial: derefs to [`PerKConsumerStage`];
/// drop = every dropping thread arrives on `empty[s]` and steps.
pub type EpilogueKContext<'p, 'a, Acc, const STAGES: usize> =
    OutputStage<PerKConsumerStage<'p, 'a, Acc, STAGES>>;

impl<'a, Acc, const STAGES: usize> EpilogueKStage<'_, 'a, Acc, STAGES> {
    /// The next K block's partial, or `None` after the last one.
    #[inline(always)]
    pub fn next_k(&mut self) -> Option<EpilogueKContext<'_, 'a, Acc, STAGES>> {
        if self.k == self.k_blocks {
            return None;
        }
        let k = self.k;
        self.k += 1;
        Some(OutputStage {
            stage: ManuallyDrop::new(self.consumer.acquire_k(k, self.k_blocks)),
        })
    }

    /// K blocks left.
    #[inline(always)]
    pub fn remaining(&self) -> u32 {
        self.k_blocks - self.k
    }
}
