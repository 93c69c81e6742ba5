//! Simulated thread-block clusters: N CTAs, each with its own shared memory
//! and warps (host threads), that reach each other's shared memory the way
//! `mapa` / `.shared::cluster` addressing does on the GPU.
//!
//! Every warp thread started by [`CpuCluster::run_warps`] (or
//! [`CpuBlock::run_warps`](super::CpuBlock::run_warps), a cluster of one)
//! carries a thread-local *CTA context*: its CTA's rank, and every CTA's
//! shared-memory window (host base address and length) plus its simulated
//! tensor memory. Cluster-aware operations read it implicitly, so they keep
//! the GPU backend's signatures:
//!
//! * [`cluster_cta_rank`] / [`cluster_size`] / [`cluster_sync`]
//!   (`%cluster_ctarank`, `%cluster_nctarank`, `barrier.cluster`);
//! * [`BarrierRef::arrive_cluster`](super::BarrierRef::arrive_cluster) and
//!   [`arrive_remote_if`](super::BarrierRef::arrive_remote_if) arrive on the
//!   barrier at the same offset in the peer CTA's shared memory;
//! * the multicast TMA loads ([`super::tma`]) write the box into every CTA of
//!   the mask and complete the bytes on each one's barrier;
//! * the `tcgen05` simulation ([`super::tcgen05`]) uses the CTA's TMEM.
//!
//! A thread outside any runner (a plain test thread, a loom model) is CTA 0
//! of a cluster of one: `arrive_cluster(0)` works, other ranks panic.

use super::block::BlockBarrier;
// The cluster runner's (not built under loom, whose models run no cluster).
#[cfg(not(loom))]
use super::block::Warp;
use super::sync::thread_local;
use super::tcgen05::TmemState;
use crate::smem::SharedRef;
use core::cell::Cell;

/// Largest simulated cluster (the non-portable hardware maximum).
pub const MAX_CLUSTER_SIZE: u32 = 16;

/// One CTA as the cluster sees it.
pub(crate) struct CtaWindow {
    /// Host address of the CTA's shared memory (its window's offset 0).
    pub(crate) base: usize,
    /// Bytes of shared memory.
    pub(crate) len: usize,
    /// The CTA's tensor memory.
    pub(crate) tmem: TmemState,
}

/// What every thread of a simulated cluster shares.
pub(crate) struct ClusterShared {
    pub(crate) ctas: Vec<CtaWindow>,
    barrier: BlockBarrier,
}

thread_local! {
    #[allow(clippy::missing_const_for_thread_local)]
    static CURRENT: Cell<(*const ClusterShared, u32)> = Cell::new((core::ptr::null(), 0));
}

/// Runs `f` with the calling thread's CTA context, `None` outside a runner.
pub(crate) fn with_context<R>(f: impl FnOnce(Option<(&ClusterShared, u32)>) -> R) -> R {
    let (p, rank) = CURRENT.with(|c| c.get());
    if p.is_null() {
        f(None)
    } else {
        // SAFETY: set by `run_ctas` for the lifetime of the warp thread's
        // body; the `ClusterShared` outlives every thread of the scope.
        f(Some((unsafe { &*p }, rank)))
    }
}

/// The calling thread's CTA context, to be entered by threads it starts
/// and joins (the 128 threads of a simulated warpgroup, `cpu::wgmma`).
#[cfg(not(loom))]
#[derive(Clone, Copy)]
pub(crate) struct ContextHandle(*const ClusterShared, u32);

// SAFETY: the pointer is only dereferenced by `with_context` on threads
// that `enter_context` runs inside a scope the starting thread joins before
// its own context (and the `ClusterShared` behind it) ends.
#[cfg(not(loom))]
unsafe impl Send for ContextHandle {}
// SAFETY: as for `Send`; the handle is read-only.
#[cfg(not(loom))]
unsafe impl Sync for ContextHandle {}

/// The calling thread's context (null outside a runner).
#[cfg(not(loom))]
pub(crate) fn current_context() -> ContextHandle {
    let (p, rank) = CURRENT.with(|c| c.get());
    ContextHandle(p, rank)
}

/// Runs `f` on the calling thread in context `h` (taken by
/// [`current_context`] on a thread that joins this one before its context
/// ends), restoring the previous context afterwards (also on panic).
#[cfg(not(loom))]
pub(crate) fn enter_context<R>(h: ContextHandle, f: impl FnOnce() -> R) -> R {
    struct Restore((*const ClusterShared, u32));
    impl Drop for Restore {
        fn drop(&mut self) {
            let v = self.0;
            CURRENT.with(|c| c.set(v));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace((h.0, h.1))));
    f()
}

/// Runs `f` with the calling thread's CTA (and its rank); panics outside a
/// runner, naming `what` needs one.
pub(crate) fn with_cta<R>(what: &str, f: impl FnOnce(&CtaWindow, &ClusterShared, u32) -> R) -> R {
    with_context(|c| {
        let (cluster, rank) = c.unwrap_or_else(|| {
            panic!(
                "baton cpu: {what} needs a simulated CTA (run the code in CpuBlock::run_warps or CpuCluster::run_warps)"
            )
        });
        f(&cluster.ctas[rank as usize], cluster, rank)
    })
}

/// Rank of the calling thread's CTA in its cluster (`%cluster_ctarank`); 0
/// outside a runner.
///
/// ```
/// use baton::arch::cpu::{CpuCluster, cluster_cta_rank, cluster_size};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let cluster = CpuCluster::new([AtomicU32::new(0), AtomicU32::new(0)]);
/// cluster.run_warps(1, |warp, smem| {
///     assert_eq!(cluster_size(), 2);
///     assert_eq!(cluster_cta_rank(), warp.cta_rank());
///     smem.get().store(10 + cluster_cta_rank(), Ordering::Relaxed);
/// });
/// assert_eq!(cluster.smem(1).get().load(Ordering::Relaxed), 11);
/// ```
pub fn cluster_cta_rank() -> u32 {
    with_context(|c| c.map_or(0, |(_, r)| r))
}

/// CTAs in the calling thread's cluster (`%cluster_nctarank`); 1 outside a
/// runner.
///
/// ```
/// assert_eq!(baton::arch::cpu::cluster_size(), 1);
/// ```
pub fn cluster_size() -> u32 {
    with_context(|c| c.map_or(1, |(cl, _)| cl.ctas.len() as u32))
}

/// Cluster-wide barrier over every warp of every CTA (`barrier.cluster.arrive`
/// then `barrier.cluster.wait`; acquire-release like the GPU's). In a
/// [`CpuBlock`](super::CpuBlock) it is a block barrier; outside a runner, a
/// no-op (one thread).
///
/// ```
/// use baton::arch::cpu::{CpuCluster, cluster_cta_rank, cluster_sync};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let cluster = CpuCluster::new([AtomicU32::new(0), AtomicU32::new(0)]);
/// cluster.run_warps(2, |_warp, smem| {
///     smem.get().fetch_add(1, Ordering::Relaxed);
///     cluster_sync();
///     // Every warp of both CTAs has added before anyone gets here.
///     let peer = baton::arch::cpu::map_shared(smem, 1 - cluster_cta_rank());
///     assert_eq!(peer.get().load(Ordering::Relaxed), 2);
/// });
/// ```
pub fn cluster_sync() {
    with_context(|c| {
        if let Some((cl, _)) = c {
            cl.barrier.sync()
        }
    })
}

/// The object at `r`'s shared-memory offset in CTA `cta_rank` of the
/// calling thread's cluster — the CPU form of `mapa.shared::cluster`.
/// `r` may point into any CTA of the cluster.
///
/// Panics when `cta_rank` is not a CTA of the cluster, or `r` is not in any
/// CTA's shared memory (outside a runner: unless `cta_rank` is 0, which maps
/// `r` to itself).
///
/// ```
/// use baton::arch::cpu::{CpuCluster, cluster_cta_rank, cluster_sync, map_shared};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let cluster = CpuCluster::new((0..2).map(|_| [AtomicU32::new(0), AtomicU32::new(0)]));
/// cluster.run_warps(1, |_warp, smem| {
///     let rank = cluster_cta_rank();
///     // Write my rank into word 1 of the *other* CTA.
///     map_shared(smem.at(1), 1 - rank).get().store(rank + 1, Ordering::Relaxed);
/// });
/// assert_eq!(cluster.smem(0).get()[1].load(Ordering::Relaxed), 2);
/// assert_eq!(cluster.smem(1).get()[1].load(Ordering::Relaxed), 1);
/// ```
pub fn map_shared<'a, T>(r: SharedRef<'a, T>, cta_rank: u32) -> SharedRef<'a, T> {
    with_context(|c| {
        let Some((cl, _)) = c else {
            assert_eq!(
                cta_rank, 0,
                "baton cpu: CTA rank {cta_rank} outside a simulated cluster (this thread is CTA 0 of a cluster of one)"
            );
            return r;
        };
        let size = cl.ctas.len() as u32;
        assert!(
            cta_rank < size,
            "baton cpu: CTA rank {cta_rank} is not in the cluster of {size} CTAs"
        );
        let offset = shared_offset_in(cl, r.addr(), core::mem::size_of::<T>());
        let peer = &cl.ctas[cta_rank as usize];
        // SAFETY: `offset + size_of::<T>() <= len` of every CTA's window (all
        // CTAs share one type of shared memory), so the peer address holds
        // the peer's `T` at the same offset — the same field of the same
        // type, aligned as in this CTA (bases are aligned for the struct).
        // The peer's shared memory lives until the cluster run ends, which
        // outlives every reference handed to its warps.
        SharedRef::from_ref(unsafe { &*((peer.base + offset) as *const T) })
    })
}

/// Offset of the `size` bytes at host address `addr` in whichever CTA's
/// window holds them; panics when none does.
pub(crate) fn shared_offset_in(cl: &ClusterShared, addr: usize, size: usize) -> usize {
    cl.ctas
        .iter()
        .find(|w| addr >= w.base && addr + size <= w.base + w.len)
        .map(|w| addr - w.base)
        .unwrap_or_else(|| {
            panic!(
                "baton cpu: address {addr:#x} is not in the shared memory of any CTA of the cluster"
            )
        })
}

/// A simulated thread-block cluster: `size` CTAs, each owning its shared
/// memory `S` (one value per CTA) and running the same warps.
///
/// ```
/// use baton::arch::cpu::{BarrierRef, CpuCluster, MbarrierCell, cluster_sync};
/// use baton::smem::SharedRef;
///
/// // Each CTA's barrier expects one arrival from the *other* CTA.
/// let cluster = CpuCluster::new([MbarrierCell::new(), MbarrierCell::new()]);
/// cluster.run_warps(1, |warp, smem| {
///     let bar = BarrierRef::new(smem);
///     unsafe { bar.init(1) };
///     cluster_sync(); // peers initialized before any remote arrive
///     baton::arch::cpu::elect_one(|| bar.arrive_cluster(1 - warp.cta_rank()));
///     bar.wait_parity(0, || unreachable!("the peer arrives"));
/// });
/// ```
pub struct CpuCluster<S> {
    ctas: Vec<S>,
}

impl<S: Sync> CpuCluster<S> {
    /// A cluster with one CTA per item of `ctas` (item `i` is CTA rank `i`'s
    /// shared memory). Panics unless there are `1..=16` CTAs.
    pub fn new(ctas: impl IntoIterator<Item = S>) -> Self {
        let ctas: Vec<S> = ctas.into_iter().collect();
        assert!(
            (1..=MAX_CLUSTER_SIZE as usize).contains(&ctas.len()),
            "baton cpu: a cluster has 1..=16 CTAs, got {}",
            ctas.len()
        );
        Self { ctas }
    }

    /// CTAs in the cluster.
    pub fn size(&self) -> u32 {
        self.ctas.len() as u32
    }

    /// CTA `rank`'s shared memory (panics when out of range).
    pub fn smem(&self, rank: u32) -> SharedRef<'_, S> {
        SharedRef::from_ref(&self.ctas[rank as usize])
    }

    /// Runs `warps` warps in every CTA (`size × warps` host threads, each
    /// standing for 32 lanes) and joins them; a panic in any warp is
    /// re-raised. Each warp gets its [`Warp`] (index in its CTA, CTA rank)
    /// and its CTA's shared memory. When every warp returned, each CTA must
    /// have freed its simulated TMEM (panics otherwise, naming the CTA).
    #[cfg(not(loom))]
    pub fn run_warps<F>(&self, warps: u32, body: F)
    where
        F: Fn(Warp<'_>, SharedRef<'_, S>) + Sync,
    {
        let refs: Vec<&S> = self.ctas.iter().collect();
        run_ctas(&refs, warps, &body);
    }
}

/// Runs `warps` warps per CTA of `ctas` as one cluster (shared by
/// [`CpuCluster`] and [`CpuBlock`](super::CpuBlock)).
#[cfg(not(loom))]
pub(crate) fn run_ctas<S: Sync, F>(ctas: &[&S], warps: u32, body: &F)
where
    F: Fn(Warp<'_>, SharedRef<'_, S>) + Sync,
{
    use super::lanes::{WARP_SIZE, with_lanes};
    assert!(warps > 0, "baton cpu: a CTA needs at least one warp");
    let shared = ClusterShared {
        ctas: ctas
            .iter()
            .map(|s| CtaWindow {
                base: *s as *const S as usize,
                len: core::mem::size_of::<S>(),
                tmem: TmemState::new(),
            })
            .collect(),
        barrier: BlockBarrier::new(warps * ctas.len() as u32),
    };
    let blocks: Vec<BlockBarrier> = ctas.iter().map(|_| BlockBarrier::new(warps)).collect();
    let single = ctas.len() == 1;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (rank, smem) in ctas.iter().enumerate() {
            for index in 0..warps {
                let (shared, block, smem) = (&shared, &blocks[rank], SharedRef::from_ref(*smem));
                let name = if single {
                    format!("warp{index}")
                } else {
                    format!("cta{rank}.warp{index}")
                };
                let handle = std::thread::Builder::new()
                    .name(name)
                    .spawn_scoped(scope, move || {
                        struct Reset;
                        impl Drop for Reset {
                            fn drop(&mut self) {
                                CURRENT.with(|c| c.set((core::ptr::null(), 0)));
                            }
                        }
                        CURRENT.with(|c| c.set((shared as *const ClusterShared, rank as u32)));
                        let _reset = Reset;
                        let cluster = if single { None } else { Some(&shared.barrier) };
                        let warp = Warp::in_cluster(index, block, rank as u32, cluster);
                        with_lanes(WARP_SIZE, || body(warp, smem))
                    })
                    .expect("spawn warp thread");
                handles.push(handle);
            }
        }
        let mut first_panic = None;
        for h in handles {
            if let Err(p) = h.join() {
                first_panic.get_or_insert(p);
            }
        }
        if let Some(p) = first_panic {
            std::panic::resume_unwind(p);
        }
    });
    for (rank, cta) in shared.ctas.iter().enumerate() {
        cta.tmem.check_exit(rank as u32);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arch::cpu::{BarrierRef, MbarrierCell, elect_one};
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn each_cta_has_its_own_smem_and_warps() {
        let cluster = CpuCluster::new((0..3).map(|_| AtomicU32::new(0)));
        cluster.run_warps(4, |warp, smem| {
            smem.get()
                .fetch_add(1 << (8 * warp.cta_rank()), Ordering::Relaxed);
            warp.sync_block();
            assert_eq!(
                smem.get().load(Ordering::Relaxed),
                4 << (8 * warp.cta_rank()),
                "a block barrier orders only this CTA's 4 warps"
            );
        });
        for r in 0..3 {
            assert_eq!(cluster.smem(r).get().load(Ordering::Relaxed), 4 << (8 * r));
        }
    }

    #[test]
    fn remote_arrivals_land_in_the_peer_barrier() {
        // CTA 0's barrier expects 2 warps × 1 elected arrival from CTA 1 and
        // one arrive_remote_if; CTA 1's expects 2 whole-warp remote arrivals.
        let cluster = CpuCluster::new([MbarrierCell::new(), MbarrierCell::new()]);
        cluster.run_warps(2, |warp, smem| {
            let bar = BarrierRef::new(smem);
            if warp.index() == 0 {
                unsafe { bar.init(if warp.cta_rank() == 0 { 3 } else { 64 }) };
            }
            warp.sync_cluster();
            if warp.cta_rank() == 1 {
                elect_one(|| bar.arrive_cluster(0));
                bar.arrive_remote_if(0, warp.index() == 1);
                bar.arrive_remote_if(0, false);
            } else {
                bar.arrive_cluster(1); // 32 lanes
            }
            bar.wait_parity(0, || unreachable!());
            assert_eq!(bar.current_parity(), 1, "exactly one phase completed");
        });
    }

    #[test]
    #[should_panic(expected = "CTA rank 2 is not in the cluster of 2 CTAs")]
    fn arrive_on_a_rank_outside_the_cluster_panics() {
        let cluster = CpuCluster::new([MbarrierCell::new(), MbarrierCell::new()]);
        cluster.run_warps(1, |_warp, smem| {
            let bar = BarrierRef::new(smem);
            unsafe { bar.init(1) };
            bar.arrive_cluster(2);
        });
    }

    #[test]
    #[should_panic(expected = "outside a simulated cluster")]
    fn remote_rank_outside_a_runner_panics() {
        let cell = MbarrierCell::new();
        let bar = BarrierRef::new(SharedRef::from_ref(&cell));
        unsafe { bar.init(1) };
        bar.arrive_cluster(1);
    }

    #[test]
    fn a_block_is_a_cluster_of_one() {
        let block = crate::arch::cpu::CpuBlock::new(MbarrierCell::new());
        block.run_warps(2, |warp, smem| {
            assert_eq!(
                (cluster_cta_rank(), cluster_size(), warp.cta_rank()),
                (0, 1, 0)
            );
            let bar = BarrierRef::new(smem);
            if warp.index() == 0 {
                unsafe { bar.init(2) };
            }
            cluster_sync();
            elect_one(|| bar.arrive_cluster(0));
            bar.wait_parity(0, || unreachable!());
        });
    }

    #[test]
    fn multicast_tma_writes_every_cta_of_the_mask_byte_exactly() {
        use crate::arch::cpu::tma::{self, TensorMap};
        use crate::tensor_map::{ElemType, Swizzle, TensorMapDesc};
        use crate::tile_pipeline::Tile;
        type T = Tile<u16, 16, 64>; // 16 rows of 128 bytes: SWIZZLE_128B atoms
        let src: Vec<u16> = (0..40 * 64).map(|i| (i * 7 + 3) as u16).collect();
        let desc = TensorMapDesc::matrix_2d(
            ElemType::BF16,
            src.as_ptr() as u64,
            40,
            64,
            128,
            16,
            64,
            Swizzle::B128,
        );
        let map = unsafe { TensorMap::new(desc) }.unwrap();
        // Reference: a plain single-CTA load of the box at row 30 (hangs off
        // the bottom edge, so the zero fill is compared too).
        let (want, cell) = (T::new(), MbarrierCell::new());
        let bar = BarrierRef::new(SharedRef::from_ref(&cell));
        unsafe { bar.init(1) };
        bar.arrive_expect_tx(T::BYTES);
        unsafe { tma::load_2d(&map, SharedRef::from_ref(&want), bar, 0, 30) };
        let bytes = |t: &T| unsafe {
            t.with_ptr(|p| std::slice::from_raw_parts(p, T::BYTES as usize).to_vec())
        };
        let want = bytes(&want);
        // Cluster of 3; CTA 1 multicasts to CTAs 0 and 2 only.
        let cluster = CpuCluster::new((0..3).map(|_| (T::new(), MbarrierCell::new())));
        cluster.run_warps(1, |warp, smem| {
            let (tile, cell) = smem.get();
            let bar = BarrierRef::new(SharedRef::from_ref(cell));
            unsafe { bar.init(1) };
            if warp.cta_rank() != 1 {
                elect_one(|| bar.arrive_expect_tx(T::BYTES));
            }
            cluster_sync();
            if warp.cta_rank() == 1 {
                unsafe {
                    tma::load_2d_multicast(&map, SharedRef::from_ref(tile), bar, 0, 30, 0b101)
                };
            } else {
                bar.wait_parity(0, || unreachable!());
            }
        });
        for rank in [0, 2] {
            assert_eq!(bytes(&cluster.smem(rank).get().0), want, "CTA {rank}");
        }
        assert!(
            bytes(&cluster.smem(1).get().0).iter().all(|&b| b == 0),
            "CTA 1 is not in the mask"
        );
    }
}
