//! A simulated thread block: shared memory plus warps as host threads.

use super::sync::{AtomicU32, Ordering, yield_now};
use crate::smem::SharedRef;

/// A reusable block-wide barrier (`bar.sync 0` / `__syncthreads()`) for
/// `participants` host threads.
pub struct BlockBarrier {
    participants: u32,
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl BlockBarrier {
    /// A barrier for `participants` threads.
    pub fn new(participants: u32) -> Self {
        assert!(
            participants > 0,
            "a block barrier needs at least one participant"
        );
        Self {
            participants,
            arrived: AtomicU32::new(0),
            generation: AtomicU32::new(0),
        }
    }

    /// Waits until all participants arrived (acquire-release: orders the
    /// memory of all participants, like `bar.sync`).
    pub fn sync(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.participants {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
        } else {
            #[cfg(not(loom))]
            let start = std::time::Instant::now();
            #[cfg(loom)]
            let mut polls = 0u32;
            while self.generation.load(Ordering::Acquire) == generation {
                #[cfg(loom)]
                {
                    // see `sync::LOOM_POLLS_BEFORE_SKIP`
                    polls += 1;
                    if polls == super::sync::LOOM_POLLS_BEFORE_SKIP {
                        super::sync::skip_branch();
                    }
                }
                yield_now();
                #[cfg(not(loom))]
                if start.elapsed() > std::time::Duration::from_secs(60) {
                    panic!("baton: block barrier timed out: a warp never reached sync_block()");
                }
            }
        }
    }
}

/// One simulated warp of a [`CpuBlock`] or of a CTA of a
/// [`CpuCluster`](super::CpuCluster).
pub struct Warp<'b> {
    index: u32,
    barrier: &'b BlockBarrier,
    cta_rank: u32,
    cluster: Option<&'b BlockBarrier>,
}

impl<'b> Warp<'b> {
    /// A warp handle for custom runners (loom tests build their own
    /// threads): warp `index` of CTA 0 of a cluster of one.
    ///
    /// ```
    /// use baton::arch::cpu::{BlockBarrier, Warp};
    /// let barrier = BlockBarrier::new(1);
    /// let warp = Warp::new(3, &barrier);
    /// assert_eq!((warp.index(), warp.cta_rank()), (3, 0));
    /// warp.sync_cluster(); // a block barrier in a cluster of one
    /// ```
    pub fn new(index: u32, barrier: &'b BlockBarrier) -> Self {
        Self::in_cluster(index, barrier, 0, None)
    }

    /// Warp `index` of CTA `cta_rank`, with the cluster barrier (`None`: a
    /// cluster of one, whose cluster barrier is the block barrier).
    pub(crate) fn in_cluster(
        index: u32,
        barrier: &'b BlockBarrier,
        cta_rank: u32,
        cluster: Option<&'b BlockBarrier>,
    ) -> Self {
        Self {
            index,
            barrier,
            cta_rank,
            cluster,
        }
    }

    /// Rank of this warp's CTA in its cluster (`%cluster_ctarank`).
    pub fn cta_rank(&self) -> u32 {
        self.cta_rank
    }

    /// Barrier over every warp of every CTA of the cluster
    /// (`barrier.cluster.arrive` + `wait`); the block barrier in a cluster
    /// of one.
    pub fn sync_cluster(&self) {
        self.cluster.unwrap_or(self.barrier).sync()
    }

    /// Warp index in the block (what `threadIdx.x / 32` is on the GPU).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `__syncthreads()` across the block's warps.
    pub fn sync_block(&self) {
        self.barrier.sync()
    }
}

/// A simulated thread block owning its shared memory `S`.
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// let block = CpuBlock::new(AtomicU32::new(0));
/// block.run_warps(4, |warp, smem| {
///     smem.get().fetch_add(warp.index() + 1, Ordering::Relaxed);
///     warp.sync_block();
///     assert_eq!(smem.get().load(Ordering::Relaxed), 1 + 2 + 3 + 4);
/// });
/// ```
pub struct CpuBlock<S> {
    smem: S,
}

impl<S: Sync> CpuBlock<S> {
    /// A block whose shared memory is `smem`.
    pub fn new(smem: S) -> Self {
        Self { smem }
    }

    /// The block's shared memory.
    pub fn smem(&self) -> SharedRef<'_, S> {
        SharedRef::from_ref(&self.smem)
    }

    /// Runs `warps` warps, each a host thread standing for 32 lanes, and
    /// joins them. A panic in any warp (a timed-out wait, a protocol
    /// violation) is re-raised here. The block is a cluster of one CTA (see
    /// [`CpuCluster`](super::CpuCluster)): its warps see CTA rank 0, and it
    /// must have freed its simulated TMEM when they return.
    #[cfg(not(loom))]
    pub fn run_warps<F>(&self, warps: u32, body: F)
    where
        F: Fn(Warp<'_>, SharedRef<'_, S>) + Sync,
    {
        super::cluster::run_ctas(&[&self.smem], warps, &body);
    }
}
