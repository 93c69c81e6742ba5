//! `TmemOutputPipeline`: accumulator stages in **tensor memory** (Blackwell),
//! handed from the MMA thread to the epilogue warps.
//!
//! Stage `s` is the TMEM column range `[base + s·COLS, base + (s+1)·COLS)`
//! of the allocation at `base` (all 128 lanes); only the `full`/`empty`
//! mbarriers live in shared memory ([`PipelineBarriers`]). The phase logic
//! is [`ProducerConsumerPipeline`]'s.
//!
//! | role | waits on | signals | arrivals per phase |
//! |---|---|---|---|
//! | MMA ([`TmemMmaProducer`], one thread of the leader CTA) | `empty[s]`, then `tcgen05.fence::after_thread_sync` | `full[s]` by **one** `tcgen05.commit` ([`TmemMmaStage::commit`]); CTA pairs: the multicast commit reaches `full[s]` of both CTAs | [`TMEM_OUTPUT_PRODUCER_ARRIVALS`] = 1 |
//! | epilogue ([`TmemEpilogueConsumer`], 128 threads per CTA) | `full[s]` of its own CTA, then `tcgen05.fence::after_thread_sync` | `tcgen05.fence::before_thread_sync`, then every thread arrives on `empty[s]` **of the leader CTA** (remote arrive from the peer of a pair) | [`output_consumer_arrivals`]`(cta_group)` = `cta_group × 128` |
//!
//! The per-K form (one partial accumulator per K block, promoted by the
//! epilogue — as [`OutputKPipeline`](super::OutputKPipeline)) uses the same
//! ring: [`TmemMmaProducer::acquire_k`] and [`TmemEpilogueConsumer::tile`].
//!
//! Stages are linear as in [`output`](super::OutputTilePipeline): a stage
//! that is neither committed nor released is a build error on the GPU
//! (ptxas: `Unresolved extern function 'baton_error__…'`) and a panic on
//! the CPU.

use super::output::{OutputStage, ScopedRelease, output_consumer_arrivals, sealed};
use crate::arch::current::BarrierRef;
use crate::arch::tmem_addr::{TMEM_COLUMNS, TmemAddr};
use crate::pipeline::{ConsumerStage, PipelineBarriers, ProducerConsumerPipeline, ProducerStage};
use crate::smem::SharedRef;
use core::ffi::CStr;
use core::mem::ManuallyDrop;

/// `full` count of a TMEM output pipeline: one `tcgen05.commit`.
pub const TMEM_OUTPUT_PRODUCER_ARRIVALS: u32 = 1;

use crate::arch::tcgen05::{
    fence_after_thread_sync as tc_fence_after_thread_sync,
    fence_before_thread_sync as tc_fence_before_thread_sync,
};

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    fn baton_error__TmemMmaStage_dropped_without_release();
    fn baton_error__TmemMmaKStage_dropped_without_release();
    fn baton_error__TmemEpilogueStage_dropped_without_release();
    fn baton_error__TmemPerKStage_dropped_without_release();
}

/// Accumulator stages in tensor memory: `STAGES` ranges of `COLS` TMEM
/// columns from `base`, guarded by `full`/`empty` barriers in shared memory.
///
/// Build one per CTA with [`new`](Self::new) (`cta_group::1`) or
/// [`pair`](Self::pair) (`cta_group::2`: both CTAs of the pair, naming the
/// leader, i.e. the CTA whose thread issues the MMAs); one thread per CTA
/// calls [`init`](Self::init), then a CTA (pairs: cluster) barrier.
///
/// ```
/// use baton::arch::cpu::{CpuBlock, elect_one};
/// use baton::arch::tmem_addr::TmemAddr;
/// use baton::pipeline::PipelineBarriers;
/// use baton::tile_pipeline::*;
/// use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
///
/// // Stand-in for TMEM row 0: one word per column.
/// let tmem: Vec<AtomicU32> = (0..512).map(|_| AtomicU32::new(0)).collect();
/// let block = CpuBlock::new(PipelineBarriers::<2>::new());
/// // warp 0: MMA; warps 1..=4: the epilogue warpgroup.
/// block.run_warps(5, |warp, bars| {
///     let pipe = TmemOutputPipeline::<2, 256>::new(bars, TmemAddr(0), c"acc");
///     if warp.index() == 0 {
///         elect_one(|| pipe.init()); // full: 1 commit, empty: 128 threads
///     }
///     warp.sync_block();
///     if warp.index() == 0 {
///         let mut mma = pipe.producer();
///         elect_one(|| {
///             for tile in 0..6u32 {
///                 let stage = mma.acquire_stage(); // waits empty
///                 let col = stage.tmem().column(); // 0 or 256
///                 tmem[col as usize].store(tile, Relaxed); // "MMAs"
///                 // The GPU passes `|bar| unsafe { tcgen05 commit(bar) }`.
///                 stage.commit(|bar| bar.arrive());
///             }
///             mma.drain(); // before TMEM dealloc
///         });
///     } else {
///         let mut epi = pipe.consumer();
///         for tile in 0..6u32 {
///             let stage = epi.acquire(); // waits full
///             assert_eq!(stage.tmem().column(), 256 * (tile % 2));
///             assert_eq!(tmem[stage.tmem().column() as usize].load(Relaxed), tile);
///         } // drop: every thread arrives on empty + steps
///     }
/// });
/// ```
pub struct TmemOutputPipeline<'a, const STAGES: usize, const COLS: u32> {
    barriers: SharedRef<'a, PipelineBarriers<STAGES>>,
    base: TmemAddr,
    /// CTA whose `empty` barriers the epilogue arrives on (`None`: its own).
    leader: Option<u32>,
    name: &'static CStr,
}

impl<const STAGES: usize, const COLS: u32> Clone for TmemOutputPipeline<'_, STAGES, COLS> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<const STAGES: usize, const COLS: u32> Copy for TmemOutputPipeline<'_, STAGES, COLS> {}

impl<'a, const STAGES: usize, const COLS: u32> TmemOutputPipeline<'a, STAGES, COLS> {
    const FITS: () = assert!(
        COLS > 0 && STAGES > 0 && STAGES as u64 * COLS as u64 <= TMEM_COLUMNS as u64,
        "TmemOutputPipeline: STAGES × COLS must be within the 512 TMEM columns"
    );

    /// A `cta_group::1` pipeline over `barriers`, stages from the TMEM
    /// address `base` (the allocation's base: lane 0, first column), named
    /// `name` in hang reports. `STAGES × COLS ≤ 512` is checked at compile
    /// time.
    ///
    /// ```
    /// use baton::arch::tmem_addr::TmemAddr;
    /// use baton::pipeline::PipelineBarriers;
    /// use baton::smem::SharedRef;
    /// use baton::tile_pipeline::TmemOutputPipeline;
    ///
    /// let bars = PipelineBarriers::<2>::new();
    /// let pipe = TmemOutputPipeline::<2, 128>::new(SharedRef::from_ref(&bars), TmemAddr(64), c"acc");
    /// assert_eq!(pipe.stage_tmem(1).column(), 64 + 128);
    /// assert_eq!(pipe.cta_group(), 1);
    /// ```
    #[inline(always)]
    pub fn new(
        barriers: SharedRef<'a, PipelineBarriers<STAGES>>,
        base: TmemAddr,
        name: &'static CStr,
    ) -> Self {
        let () = Self::FITS;
        Self {
            barriers,
            base,
            leader: None,
            name,
        }
    }

    /// A `cta_group::2` pipeline, built by **both** CTAs of the pair with
    /// the same `leader_rank` (the cluster rank of the CTA whose thread
    /// issues the pair MMAs and commits with the multicast form to `full[s]`
    /// of both CTAs). Every epilogue thread of both CTAs arrives on the
    /// leader's `empty[s]` (`cta_group × 128` = 256 arrivals); only the
    /// leader runs [`producer`](Self::producer).
    ///
    /// ```
    /// use baton::arch::tmem_addr::TmemAddr;
    /// use baton::pipeline::PipelineBarriers;
    /// use baton::smem::SharedRef;
    /// use baton::tile_pipeline::TmemOutputPipeline;
    ///
    /// let bars = PipelineBarriers::<2>::new();
    /// let pipe = TmemOutputPipeline::<2, 256>::pair(SharedRef::from_ref(&bars), TmemAddr(0), 0, c"acc");
    /// assert_eq!(pipe.cta_group(), 2);
    /// ```
    #[inline(always)]
    pub fn pair(
        barriers: SharedRef<'a, PipelineBarriers<STAGES>>,
        base: TmemAddr,
        leader_rank: u32,
        name: &'static CStr,
    ) -> Self {
        let () = Self::FITS;
        Self {
            barriers,
            base,
            leader: Some(leader_rank),
            name,
        }
    }

    /// 1 ([`new`](Self::new)) or 2 ([`pair`](Self::pair)).
    #[inline(always)]
    pub fn cta_group(&self) -> u32 {
        if self.leader.is_some() { 2 } else { 1 }
    }

    /// The barrier array.
    #[inline(always)]
    pub fn barriers(&self) -> SharedRef<'a, PipelineBarriers<STAGES>> {
        self.barriers
    }

    /// TMEM address (lane 0) of stage `i`'s first column: `base + i·COLS`.
    #[inline(always)]
    pub fn stage_tmem(&self, i: u32) -> TmemAddr {
        self.base.offset(0, i * COLS)
    }

    /// One thread per CTA, before the CTA (cluster) barrier that precedes
    /// any use: `full[s]` ← [`TMEM_OUTPUT_PRODUCER_ARRIVALS`] (one commit),
    /// `empty[s]` ← [`output_consumer_arrivals`]`(cta_group)`.
    #[inline(always)]
    pub fn init(&self) {
        ProducerConsumerPipeline::new(self.barriers, self.name).init_barriers(
            TMEM_OUTPUT_PRODUCER_ARRIVALS,
            output_consumer_arrivals(self.cta_group()),
        );
    }

    /// The MMA role (one thread; on a pair, of the leader CTA only).
    #[inline(always)]
    pub fn producer(&self) -> TmemMmaProducer<'a, STAGES, COLS> {
        TmemMmaProducer {
            pipe: ProducerConsumerPipeline::new(self.barriers, self.name),
            base: self.base,
        }
    }

    /// The epilogue role (every epilogue thread of every CTA of the group).
    #[inline(always)]
    pub fn consumer(&self) -> TmemEpilogueConsumer<'a, STAGES, COLS> {
        TmemEpilogueConsumer {
            pipe: ProducerConsumerPipeline::new(self.barriers, self.name),
            base: self.base,
            leader: self.leader,
        }
    }
}

// ----- MMA role ------------------------------------------------------------------

/// The MMA role of a [`TmemOutputPipeline`]: one thread.
///
/// ```
/// # use baton::arch::tmem_addr::TmemAddr;
/// # use baton::pipeline::PipelineBarriers;
/// # use baton::smem::SharedRef;
/// # use baton::tile_pipeline::TmemOutputPipeline;
/// let bars = PipelineBarriers::<1>::new();
/// let pipe = TmemOutputPipeline::<1, 32>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"acc");
/// pipe.init();
/// let mut mma = pipe.producer();
/// assert!(mma.try_acquire()); // a fresh ring is free
/// mma.acquire_stage().commit(|bar| bar.arrive());
/// assert!(!mma.try_acquire()); // stage 0 waits for the epilogue
/// ```
pub struct TmemMmaProducer<'a, const STAGES: usize, const COLS: u32> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    base: TmemAddr,
}

impl<'a, const STAGES: usize, const COLS: u32> TmemMmaProducer<'a, STAGES, COLS> {
    /// Linear: waits until the epilogue freed the current stage
    /// (`empty[s]`, all `cta_group × 128` arrivals), then
    /// `tcgen05.fence::after_thread_sync`. Issue MMAs into
    /// [`TmemMmaStage::tmem`], then [`TmemMmaStage::commit`].
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> TmemMmaStage<'_, 'a, STAGES, COLS> {
        let base = self.base;
        let stage = self.pipe.acquire_producer();
        tc_fence_after_thread_sync();
        let tmem = base.offset(0, stage.index() * COLS);
        TmemMmaStage {
            stage: ManuallyDrop::new(stage),
            tmem,
        }
    }

    /// Linear, per K block: as [`acquire_stage`](Self::acquire_stage) for
    /// the partial accumulator of K block `k`.
    #[inline(always)]
    pub fn acquire_k(&mut self, k: u32) -> TmemMmaKStage<'_, 'a, STAGES, COLS> {
        let base = self.base;
        let stage = self.pipe.acquire_producer();
        tc_fence_after_thread_sync();
        let tmem = base.offset(0, stage.index() * COLS);
        TmemMmaKStage {
            stage: ManuallyDrop::new(stage),
            tmem,
            k,
        }
    }

    /// Non-blocking: is the current stage free? (no state change).
    #[inline(always)]
    pub fn try_acquire(&self) -> bool {
        self.pipe.try_wait_consumer()
    }

    /// Waits until the epilogue released every stage: call before the
    /// TMEM columns are deallocated.
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

macro_rules! tmem_mma_stage {
    ($(#[$doc:meta])* $name:ident, $symbol:ident $(, $field:ident : $fty:ty)*) => {
        $(#[$doc])*
        #[must_use = "commit the stage's MMAs to its full barrier: stage.commit(..)"]
        pub struct $name<'p, 'a, const STAGES: usize, const COLS: u32> {
            stage: ManuallyDrop<ProducerStage<'p, 'a, STAGES>>,
            tmem: TmemAddr,
            $($field: $fty,)*
        }

        super::linear_stage!($name ['p, 'a, const STAGES: usize, const COLS: u32] ['p, 'a, STAGES, COLS], ProducerStage, $symbol);

        impl<'p, 'a, const STAGES: usize, const COLS: u32> $name<'p, 'a, STAGES, COLS> {
            /// TMEM address of the stage: lane 0, its first column (the MMA's
            /// `d` operand); `COLS` columns are the stage's.
            #[inline(always)]
            pub fn tmem(&self) -> TmemAddr {
                self.tmem
            }

            /// The barrier the stage's commit arrives on: `full[index]` of
            /// this CTA (a pair's multicast commit also reaches the peer's
            /// `full[index]`, same offset).
            #[inline(always)]
            pub fn barrier(&self) -> BarrierRef<'a> {
                self.stage.mbar()
            }

            /// Hands the stage to the epilogue: `commit(barrier)` must issue
            /// exactly **one** arrival on `full[index]` that completes once
            /// this thread's MMAs into the stage are done — on the GPU one
            /// `tcgen05.commit` (pairs: its multicast form), on the CPU
            /// simulation its commit — then the producer steps.
            #[inline(always)]
            pub fn commit(self, commit: impl FnOnce(BarrierRef<'a>)) {
                commit(self.barrier());
                self.take().release_without_signal();
            }

            /// Steps without signalling: the caller already committed to
            /// [`barrier`](Self::barrier).
            #[inline(always)]
            pub fn release_without_signal(self) {
                self.take().release_without_signal();
            }
        }
    };
}

tmem_mma_stage!(
    /// The MMA thread's claim on a free TMEM accumulator stage (linear; from
    /// [`TmemMmaProducer::acquire_stage`]): issue MMAs into
    /// [`tmem`](Self::tmem), then [`commit`](Self::commit).
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// let bars = PipelineBarriers::<2>::new();
    /// let pipe = TmemOutputPipeline::<2, 256>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"acc");
    /// pipe.init();
    /// let mut mma = pipe.producer();
    /// mma.acquire_stage().commit(|bar| bar.arrive());
    /// let stage = mma.acquire_stage();
    /// assert_eq!((stage.index(), stage.tmem().column()), (1, 256));
    /// stage.commit(|bar| bar.arrive());
    /// ```
    TmemMmaStage, baton_error__TmemMmaStage_dropped_without_release
);

tmem_mma_stage!(
    /// The MMA thread's claim on a free TMEM stage for the partial
    /// accumulator of K block [`k`](Self::k) (linear; from
    /// [`TmemMmaProducer::acquire_k`]).
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// let bars = PipelineBarriers::<2>::new();
    /// let pipe = TmemOutputPipeline::<2, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"per-k");
    /// pipe.init();
    /// let mut mma = pipe.producer();
    /// let stage = mma.acquire_k(3);
    /// assert_eq!(stage.k(), 3);
    /// stage.commit(|bar| bar.arrive());
    /// ```
    TmemMmaKStage, baton_error__TmemMmaKStage_dropped_without_release, k: u32
);

impl<const STAGES: usize, const COLS: u32> TmemMmaKStage<'_, '_, STAGES, COLS> {
    /// The K block this partial belongs to.
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// # let bars = PipelineBarriers::<1>::new();
    /// # let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"k");
    /// # pipe.init();
    /// let mut mma = pipe.producer();
    /// let stage = mma.acquire_k(5);
    /// assert_eq!(stage.k(), 5);
    /// # stage.commit(|bar| bar.arrive());
    /// ```
    #[inline(always)]
    pub fn k(&self) -> u32 {
        self.k
    }
}

// ----- epilogue role ---------------------------------------------------------------

/// The epilogue role of a [`TmemOutputPipeline`]: every epilogue thread
/// (128 per CTA, lane quarter `warp % 4`).
///
/// ```
/// # use baton::arch::tmem_addr::TmemAddr;
/// # use baton::pipeline::PipelineBarriers;
/// # use baton::smem::SharedRef;
/// # use baton::tile_pipeline::TmemOutputPipeline;
/// let bars = PipelineBarriers::<1>::new();
/// let pipe = TmemOutputPipeline::<1, 32>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"acc");
/// pipe.init();
/// let mut epi = pipe.consumer();
/// assert!(!epi.try_acquire()); // nothing committed yet
/// pipe.producer().acquire_stage().commit(|bar| bar.arrive());
/// assert!(epi.try_acquire());
/// ```
pub struct TmemEpilogueConsumer<'a, const STAGES: usize, const COLS: u32> {
    pipe: ProducerConsumerPipeline<'a, STAGES>,
    base: TmemAddr,
    leader: Option<u32>,
}

impl<'a, const STAGES: usize, const COLS: u32> TmemEpilogueConsumer<'a, STAGES, COLS> {
    /// Linear: waits until the MMAs of the current stage are done
    /// (`full[s]` of this CTA), then `tcgen05.fence::after_thread_sync`.
    /// Read it with `tcgen05.ld`, then [`TmemEpilogueStage::release`].
    #[inline(always)]
    pub fn acquire_stage(&mut self) -> TmemEpilogueStage<'_, 'a, STAGES, COLS> {
        let (base, leader) = (self.base, self.leader);
        let stage = self.pipe.acquire_consumer();
        tc_fence_after_thread_sync();
        let tmem = base.offset(0, stage.index() * COLS);
        TmemEpilogueStage {
            stage: ManuallyDrop::new(stage),
            tmem,
            leader,
        }
    }

    /// Scoped: as [`acquire_stage`](Self::acquire_stage); drop = this thread
    /// releases the stage ([`TmemEpilogueStage::release`]).
    #[inline(always)]
    pub fn acquire(&mut self) -> OutputStage<TmemEpilogueStage<'_, 'a, STAGES, COLS>> {
        OutputStage::new(self.acquire_stage())
    }

    /// Non-blocking: are the current stage's MMAs done? (no state change).
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
    ) -> OutputStage<TmemEpilogueStage<'_, 'a, STAGES, COLS>> {
        self.pipe.wait_producer_if_needed(ready);
        self.acquire()
    }

    /// Linear, per K block: waits for the partial of K block `k` (of
    /// `k_blocks`).
    #[inline(always)]
    pub fn acquire_k(&mut self, k: u32, k_blocks: u32) -> TmemPerKStage<'_, 'a, STAGES, COLS> {
        let (base, leader) = (self.base, self.leader);
        let stage = self.pipe.acquire_consumer();
        tc_fence_after_thread_sync();
        let tmem = base.offset(0, stage.index() * COLS);
        TmemPerKStage {
            stage: ManuallyDrop::new(stage),
            tmem,
            leader,
            k,
            k_blocks,
        }
    }

    /// Walks the `k_blocks` partials of one output tile
    /// ([`TmemEpilogueKStage::next_k`]).
    #[inline(always)]
    pub fn tile(&mut self, k_blocks: u32) -> TmemEpilogueKStage<'_, 'a, STAGES, COLS> {
        TmemEpilogueKStage {
            consumer: self,
            k: 0,
            k_blocks,
        }
    }

    /// Current stage index.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.pipe.consumer_stage()
    }
}

macro_rules! tmem_epilogue_stage {
    ($(#[$doc:meta])* $name:ident, $symbol:ident $(, $field:ident : $fty:ty)*) => {
        $(#[$doc])*
        #[must_use = "a linear stage must be released"]
        pub struct $name<'p, 'a, const STAGES: usize, const COLS: u32> {
            stage: ManuallyDrop<ConsumerStage<'p, 'a, STAGES>>,
            tmem: TmemAddr,
            leader: Option<u32>,
            $($field: $fty,)*
        }

        super::linear_stage!($name ['p, 'a, const STAGES: usize, const COLS: u32] ['p, 'a, STAGES, COLS], ConsumerStage, $symbol);

        impl<'p, 'a, const STAGES: usize, const COLS: u32> $name<'p, 'a, STAGES, COLS> {
            /// TMEM address of the stage: lane 0, its first column.
            #[inline(always)]
            pub fn tmem(&self) -> TmemAddr {
                self.tmem
            }

            /// Where warp `warp` reads the stage: the first lane of its
            /// quarter (`32 · (warp % 4)`), the stage's first column.
            #[inline(always)]
            pub fn warp_tmem(&self, warp: u32) -> TmemAddr {
                self.tmem.warp_quarter(warp)
            }

            /// After this thread's last `tcgen05.ld` of the stage (waited):
            /// `tcgen05.fence::before_thread_sync`, one arrival on
            /// `empty[index]` of the leader CTA (a remote arrive from a
            /// pair's peer), and step.
            #[inline(always)]
            pub fn release(self) {
                tc_fence_before_thread_sync();
                match self.leader {
                    None => self.stage.arrive(),
                    Some(rank) => self.stage.arrive_cluster(rank),
                }
                self.take().release_without_signal();
            }
        }

        impl<const STAGES: usize, const COLS: u32> sealed::Sealed for $name<'_, '_, STAGES, COLS> {}
        impl<const STAGES: usize, const COLS: u32> ScopedRelease for $name<'_, '_, STAGES, COLS> {
            #[inline(always)]
            fn release_scoped(self) {
                self.release();
            }
        }
    };
}

tmem_epilogue_stage!(
    /// An epilogue thread's claim on a finished TMEM accumulator stage
    /// (linear; from [`TmemEpilogueConsumer::acquire_stage`]): read it with
    /// `tcgen05.ld` at [`warp_tmem`](Self::warp_tmem), then
    /// [`release`](Self::release).
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// let bars = PipelineBarriers::<2>::new();
    /// let pipe = TmemOutputPipeline::<2, 128>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"acc");
    /// pipe.init();
    /// pipe.producer().acquire_stage().commit(|bar| bar.arrive());
    /// let mut epi = pipe.consumer();
    /// let stage = epi.acquire_stage();
    /// assert_eq!(stage.warp_tmem(6).lane(), 64);
    /// stage.release(); // one arrival of 128 on empty[0]
    /// ```
    TmemEpilogueStage, baton_error__TmemEpilogueStage_dropped_without_release
);

tmem_epilogue_stage!(
    /// An epilogue thread's claim on the partial accumulator of K block
    /// [`k`](Self::k) of a tile with [`k_blocks`](Self::k_blocks) blocks
    /// (linear; from [`TmemEpilogueConsumer::acquire_k`], or scoped through
    /// [`TmemEpilogueKStage::next_k`]).
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// let bars = PipelineBarriers::<1>::new();
    /// let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"per-k");
    /// pipe.init();
    /// pipe.producer().acquire_k(1).commit(|bar| bar.arrive());
    /// let mut epi = pipe.consumer();
    /// let stage = epi.acquire_k(1, 2);
    /// assert!(stage.is_last_k());
    /// stage.release();
    /// ```
    TmemPerKStage, baton_error__TmemPerKStage_dropped_without_release, k: u32, k_blocks: u32
);

impl<const STAGES: usize, const COLS: u32> TmemPerKStage<'_, '_, STAGES, COLS> {
    /// The K block of this partial.
    ///
    /// ```
    /// # use baton::arch::tmem_addr::TmemAddr;
    /// # use baton::pipeline::PipelineBarriers;
    /// # use baton::smem::SharedRef;
    /// # use baton::tile_pipeline::TmemOutputPipeline;
    /// # let bars = PipelineBarriers::<1>::new();
    /// # let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"k");
    /// # pipe.init();
    /// # pipe.producer().acquire_k(0).commit(|bar| bar.arrive());
    /// let mut epi = pipe.consumer();
    /// let stage = epi.acquire_k(0, 4);
    /// assert_eq!((stage.k(), stage.k_blocks()), (0, 4));
    /// # stage.release();
    /// ```
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

/// One output tile's walk over its K-block partials in TMEM (from
/// [`TmemEpilogueConsumer::tile`]): [`next_k`](Self::next_k) waits for the
/// next partial and returns a scoped [`TmemEpilogueKContext`] that releases
/// it on drop.
///
/// ```
/// # use baton::arch::tmem_addr::TmemAddr;
/// # use baton::pipeline::PipelineBarriers;
/// # use baton::smem::SharedRef;
/// # use baton::tile_pipeline::TmemOutputPipeline;
/// let bars = PipelineBarriers::<2>::new();
/// let pipe = TmemOutputPipeline::<2, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"per-k");
/// pipe.init();
/// let mut mma = pipe.producer();
/// mma.acquire_k(0).commit(|bar| bar.arrive());
/// mma.acquire_k(1).commit(|bar| bar.arrive());
/// let mut epi = pipe.consumer();
/// let mut tile = epi.tile(2);
/// let mut cols = vec![];
/// while let Some(ctx) = tile.next_k() {
///     cols.push(ctx.tmem().column());
/// }
/// assert_eq!(cols, [0, 64]);
/// ```
pub struct TmemEpilogueKStage<'c, 'a, const STAGES: usize, const COLS: u32> {
    consumer: &'c mut TmemEpilogueConsumer<'a, STAGES, COLS>,
    k: u32,
    k_blocks: u32,
}

/// Scoped claim on one K-block partial in TMEM: derefs to
/// [`TmemPerKStage`]; drop = [`TmemPerKStage::release`] by every dropping
/// thread.
pub type TmemEpilogueKContext<'p, 'a, const STAGES: usize, const COLS: u32> =
    OutputStage<TmemPerKStage<'p, 'a, STAGES, COLS>>;

impl<'a, const STAGES: usize, const COLS: u32> TmemEpilogueKStage<'_, 'a, STAGES, COLS> {
    /// The next K block's partial, or `None` after the last one.
    #[inline(always)]
    pub fn next_k(&mut self) -> Option<TmemEpilogueKContext<'_, 'a, STAGES, COLS>> {
        if self.k == self.k_blocks {
            return None;
        }
        let k = self.k;
        self.k += 1;
        Some(OutputStage::new(self.consumer.acquire_k(k, self.k_blocks)))
    }

    /// K blocks left.
    #[inline(always)]
    pub fn remaining(&self) -> u32 {
        self.k_blocks - self.k
    }
}
