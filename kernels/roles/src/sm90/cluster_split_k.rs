//! Split-K inside a cluster: the `splits` CTAs of one work unit form a
//! cluster, and the contributors hand their partial accumulators to the
//! unit's finalizer through distributed shared memory, not global memory
//! ([`ClusterSplitK`]).
//!
//! The global-memory fixup ([`StreamKFixup`](super::stream_k::StreamKFixup))
//! costs three GPU-scope round trips on the finalizer's critical path: the
//! contributor's release waits for its stores to reach L2, the flag travels
//! to the finalizer, and the finalizer loads every partial back from L2. An
//! H200 trace of 64×1024×4096 (swap-AB 64, split 5) put 3.2 µs between the
//! last main loop and the finalizer's store (session 20). In a cluster the
//! same hand-over is a store to the peer's shared memory and an `mbarrier`
//! arrival at cluster scope.
//!
//! Protocol (one phase per launch: split-K gives every worker one segment):
//!
//! | who | does |
//! |---|---|
//! | every thread, at setup | [`cluster_arrive`] once its CTA's barriers are initialized |
//! | finalizer (rank 0), both consumer warpgroups | after the main loop (all `wgmma` retired): a 256-thread named barrier, so no warpgroup still reads a stage; then one thread waits for the cluster's setup ([`cluster_wait`]) and arrives on every contributor's `ready` (release, cluster scope) |
//! | contributor (rank `r ≥ 1`), consumer warpgroup `wg` | waits on its `ready` (acquire, cluster scope); stores its `64 × BN` fp32 accumulators into slot `(r − 1, wg)` of the finalizer's input stages; a named barrier over the warpgroup; one thread arrives on the finalizer's `filled[wg]` (release, cluster scope) |
//! | finalizer, consumer warpgroup `wg` | waits on `filled[wg]` (`splits − 1` arrivals; acquire, cluster scope), adds slots `(1, wg) … (splits − 1, wg)` in rank order, then runs the epilogue |
//!
//! The sum is the one the global fixup computes — the finalizer's own
//! accumulators, then the contributors' in worker order, element by element
//! — so it has the same bits. No CTA waits for another cluster, so the
//! clusters need not all be resident at once; no CTA's shared memory is
//! accessed after it exits (contributors wait for `ready` before the
//! finalizer can be done with them; the finalizer waits for every
//! contributor's `filled` arrival before it reads and exits).

use baton::arch::ptx::{
    BarrierRef, cluster_wait, ld_shared_v4_f32, named_barrier_sync, st_shared_cluster_v4_f32,
};
use baton::protocol::diag::{Role, WaitSite};

pub use baton::arch::ptx::cluster_arrive;

/// Named barrier over both consumer warpgroups (256 threads) of the
/// finalizer, before its stages are handed to the contributors. Barriers
/// 1–2 are the warpgroups' own, 3–6 the transposed epilogue's warp pairs.
pub const CONSUMERS_BARRIER: u32 = 7;

/// One CTA's view of its cluster's split-K hand-over: its barriers and the
/// shared address of its input stages (where a finalizer receives
/// partials: slot `(r − 1, wg)` of `128 · ACC` floats, chunk `i` of thread
/// `tid` at float `(i · 128 + tid) · 4`, the layout of
/// [`StreamKFixup`](super::stream_k::StreamKFixup)'s slots).
///
/// ```ignore
/// let split = ClusterSplitK { ready, filled: [f0, f1], landing: input.stage(0).addr() };
/// ```
#[derive(Clone, Copy)]
pub struct ClusterSplitK<'a> {
    /// Contributors wait on their own; the finalizer arrives on each.
    pub ready: BarrierRef<'a>,
    /// Per consumer warpgroup: the finalizer waits on its own; contributors arrive.
    pub filled: [BarrierRef<'a>; 2],
    /// Shared address of the input stages (the landing area, `splits − 1`
    /// slots per consumer warpgroup).
    pub landing: u32,
}

impl ClusterSplitK<'_> {
    /// Initializes the barriers for `splits` CTAs per cluster (one thread,
    /// before the CTA's setup barrier and [`cluster_arrive`];
    /// `fence_barrier_init` afterwards).
    ///
    /// # Safety
    /// As `BarrierRef::init`.
    ///
    /// ```ignore
    /// unsafe { split.init(cluster_size()) };
    /// ```
    #[inline(always)]
    pub unsafe fn init(&self, splits: u32) {
        // SAFETY: forwarded.
        unsafe {
            self.ready.init(1);
            self.filled[0].init(splits - 1);
            self.filled[1].init(splits - 1);
        }
    }

    /// `filled[wg]`, selected rather than indexed (an array indexed by a
    /// run-time value would live in local memory).
    #[inline(always)]
    fn filled_of(&self, wg: u32) -> BarrierRef<'_> {
        if wg == 0 {
            self.filled[0]
        } else {
            self.filled[1]
        }
    }

    /// Slot `(contributor − 1, wg)`'s shared address (this CTA's offsets;
    /// a contributor maps it to rank 0).
    #[inline(always)]
    fn slot<const ACC: usize>(&self, contributor: u32, wg: u32) -> u32 {
        self.landing + ((contributor - 1) * 2 + wg) * (128 * ACC as u32 * 4)
    }

    /// Finalizer, both consumer warpgroups (all 256 threads): its stages
    /// are free (every `wgmma` of this warpgroup retired before the call);
    /// once both warpgroups are here, thread 0 of warpgroup 0 waits for
    /// the cluster's setup and arrives on the `ready` of ranks
    /// `1 .. splits`.
    ///
    /// ```ignore
    /// split.open(splits, wg, tid);
    /// ```
    #[inline(always)]
    pub fn open(&self, splits: u32, wg: u32, tid: u32) {
        named_barrier_sync(CONSUMERS_BARRIER, 256);
        if wg == 0 && tid == 0 {
            // Every CTA of the cluster initialized its barriers.
            cluster_wait();
            let mut r = 1;
            while r < splits {
                self.ready.arrive_cluster(r);
                r += 1;
            }
        }
    }

    /// Contributor (rank `rank ≥ 1`) consumer warpgroup `wg`, all 128
    /// threads: waits for the finalizer's `ready`, stores `acc` into its
    /// slot of the finalizer's stages, orders the warpgroup's stores before
    /// thread 0 (named barrier `1 + wg`), which arrives on the finalizer's
    /// `filled[wg]`.
    ///
    /// # Safety
    /// The launch is split-K in clusters of `splits` CTAs with
    /// `(splits − 1) · 2 · 128 · ACC · 4` bytes of input stages; `rank` is
    /// this CTA's cluster rank, ≥ 1.
    ///
    /// ```ignore
    /// unsafe { split.contribute::<8>(rank, wg, tid, &acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn contribute<const ACC: usize>(
        &self,
        rank: u32,
        wg: u32,
        tid: u32,
        acc: &[f32; ACC],
    ) {
        self.ready.wait_parity_cluster(0, || WaitSite {
            pipeline: c"cluster-split-k",
            role: Role::Producer,
            stage: rank,
            phase: 0,
        });
        let slot = self.slot::<ACC>(rank, wg);
        baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
            if (I as usize) < ACC / 4 {
                let i = 4 * I as usize;
                // SAFETY: inside slot (rank − 1, wg) of the finalizer's
                // stages (caller), which `ready` handed to this cluster's
                // contributors; the finalizer waits for `filled` before it
                // reads them or exits.
                unsafe {
                    st_shared_cluster_v4_f32(
                        slot + (I * 128 + tid) * 16,
                        0,
                        [acc[i], acc[i + 1], acc[i + 2], acc[i + 3]],
                    )
                };
            }
        });
        named_barrier_sync(1 + wg, 128);
        if tid == 0 {
            self.filled_of(wg).arrive_cluster(0);
        }
    }

    /// Finalizer consumer warpgroup `wg`, all 128 threads (after
    /// [`open`](Self::open)): waits until the `splits − 1` contributors'
    /// partials are in its stages and adds them into `acc` in rank order.
    ///
    /// # Safety
    /// As [`contribute`](Self::contribute), on rank 0.
    ///
    /// ```ignore
    /// unsafe { split.accumulate::<8>(splits, wg, tid, &mut acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn accumulate<const ACC: usize>(
        &self,
        splits: u32,
        wg: u32,
        tid: u32,
        acc: &mut [f32; ACC],
    ) {
        self.filled_of(wg).wait_parity_cluster(0, || WaitSite {
            pipeline: c"cluster-split-k",
            role: Role::Consumer,
            stage: wg,
            phase: 0,
        });
        let mut c = 1;
        while c < splits {
            let slot = self.slot::<ACC>(c, wg);
            baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
                if (I as usize) < ACC / 4 {
                    let i = 4 * I as usize;
                    // SAFETY: slot (c − 1, wg) of this CTA's stages, written
                    // by contributor c before its release arrival on
                    // `filled[wg]`, which this warpgroup acquired.
                    let v = unsafe { ld_shared_v4_f32(slot + (I * 128 + tid) * 16) };
                    acc[i] += v[0];
                    acc[i + 1] += v[1];
                    acc[i + 2] += v[2];
                    acc[i + 3] += v[3];
                }
            });
            c += 1;
        }
    }
}
