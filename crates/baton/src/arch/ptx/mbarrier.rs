//! PTX `mbarrier` operations on shared-memory barriers (`.shared::cta`,
//! 32-bit addresses).
//!
//! Semantics (PTX ISA, "Parallel Synchronization and Communication
//! Instructions: mbarrier"): a barrier holds a phase bit, a pending-arrival
//! count and a transaction count. A phase completes when both reach zero; the
//! pending count then resets to the init count and the phase bit flips. A
//! fresh barrier is in phase 0, so `try_wait.parity(1)` succeeds at once and
//! `try_wait.parity(0)` waits for the first completion.

use crate::protocol::diag::WaitSite;
use crate::smem::SharedRef;
use core::arch::asm;

/// Storage of one `mbarrier`: 8 bytes, 8-byte aligned, in shared memory.
/// Never read or written by Rust code, only by `mbarrier` instructions.
#[repr(C, align(8))]
pub struct MbarrierCell(u64);

/// How long a bounded wait (debug builds) may spin before reporting a hang.
pub const WAIT_BOUND_NS: u64 = 4_000_000_000;

/// A handle to one `mbarrier` in this CTA's shared memory.
#[derive(Clone, Copy)]
pub struct BarrierRef<'a>(SharedRef<'a, MbarrierCell>);

impl<'a> BarrierRef<'a> {
    /// Wraps a barrier cell.
    #[inline(always)]
    pub fn new(cell: SharedRef<'a, MbarrierCell>) -> Self {
        Self(cell)
    }

    /// Shared-window address, for instructions that complete on a barrier
    /// (TMA loads, `wgmma`/`tcgen05` commits).
    #[inline(always)]
    pub fn addr(self) -> u32 {
        self.0.addr()
    }

    /// `mbarrier.init`: expects `count` arrivals per phase; phase 0.
    ///
    /// # Safety
    /// One thread initializes, before any other thread uses the barrier, and
    /// the initialization is published with [`fence_barrier_init`] and a block
    /// (or cluster) barrier.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) {
        // SAFETY: see the contract above.
        unsafe {
            asm!("mbarrier.init.shared::cta.b64 [{a}], {c};", a = in(reg32) self.addr(), c = in(reg32) count, options(nostack))
        };
    }

    /// One arrival by this thread (release semantics at CTA scope).
    #[inline(always)]
    pub fn arrive(self) {
        // SAFETY: the barrier is initialized (pipeline contract).
        unsafe {
            asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) self.addr(), options(nostack))
        };
    }

    /// One arrival by this thread if `pred` (a predicated `mbarrier.arrive`,
    /// no branch: the lane-guarded signal of a warpgroup that must stay
    /// converged, e.g. between `wgmma` instructions).
    #[inline(always)]
    pub fn arrive_if(self, pred: bool) {
        // SAFETY: as `arrive`.
        unsafe {
            asm!(
                "{{ .reg .pred p; setp.ne.b32 p, {c}, 0; @p mbarrier.arrive.shared::cta.b64 _, [{a}]; }}",
                a = in(reg32) self.addr(), c = in(reg32) pred as u32, options(nostack)
            )
        };
    }

    /// `count` arrivals by this thread at once.
    #[inline(always)]
    pub fn arrive_count(self, count: u32) {
        // SAFETY: as `arrive`.
        unsafe {
            asm!("mbarrier.arrive.shared::cta.b64 _, [{a}], {c};", a = in(reg32) self.addr(), c = in(reg32) count, options(nostack))
        };
    }

    /// One arrival plus `bytes` of expected transactions (the TMA pattern:
    /// the elected producer thread calls this, the copy engine completes the
    /// bytes).
    #[inline(always)]
    pub fn arrive_expect_tx(self, bytes: u32) {
        // SAFETY: as `arrive`.
        unsafe {
            asm!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {b};", a = in(reg32) self.addr(), b = in(reg32) bytes, options(nostack))
        };
    }

    /// Adds `bytes` of expected transactions without arriving.
    #[inline(always)]
    pub fn expect_tx(self, bytes: u32) {
        // SAFETY: as `arrive`.
        unsafe {
            asm!("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {b};", a = in(reg32) self.addr(), b = in(reg32) bytes, options(nostack))
        };
    }

    /// One arrival on the barrier at the same shared offset in CTA `cta_rank`
    /// of the cluster (`mapa` + `mbarrier.arrive.release.cluster`).
    #[inline(always)]
    pub fn arrive_cluster(self, cta_rank: u32) {
        // SAFETY: `cta_rank` names a CTA of this cluster (callers validate
        // masks against the cluster shape); the peer's barrier is initialized
        // (cluster_sync after init).
        unsafe {
            asm!(
                "{{ .reg .b32 ra; mapa.shared::cluster.u32 ra, {a}, {r}; mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra]; }}",
                a = in(reg32) self.addr(), r = in(reg32) cta_rank, options(nostack)
            )
        };
    }

    /// One arrival, if `pred`, on the barrier at the same offset in CTA
    /// `cta_rank` of the cluster — predicated (no branch), with the default
    /// CTA-scope release (`mbarrier.arrive.shared::cluster`), not
    /// [`arrive_cluster`](Self::arrive_cluster)'s cluster-scope release.
    ///
    /// For signals that publish no data of this thread's to the peer: a
    /// consumer handing back a stage it only *read* (through `wgmma`). A
    /// cluster-scope release there orders the arrive after everything the
    /// thread has in flight — measured on H100: it serialized consecutive
    /// `wgmma` groups and halved a 2-CTA GEMM's throughput. Where the peer
    /// reads data this thread wrote, use `arrive_cluster`.
    #[inline(always)]
    pub fn arrive_remote_if(self, cta_rank: u32, pred: bool) {
        // SAFETY: as `arrive_cluster`.
        unsafe {
            asm!(
                "{{ .reg .b32 ra; .reg .pred p; setp.ne.b32 p, {c}, 0; mapa.shared::cluster.u32 ra, {a}, {r}; @p mbarrier.arrive.shared::cluster.b64 _, [ra]; }}",
                a = in(reg32) self.addr(), r = in(reg32) cta_rank, c = in(reg32) pred as u32, options(nostack)
            )
        };
    }

    /// [`arrive_remote_if`](Self::arrive_remote_if) on CTAs 0 and 1 of a
    /// 2-CTA cluster, in one asm block with the ranks as immediates: one
    /// register operand (the address) besides the predicate, where two
    /// `arrive_remote_if`s hold each rank in a register (under a
    /// two-wave FP8 consumer's 232-register budget that spilled).
    ///
    /// ```ignore
    /// stage_empty.arrive_pair_if(thread_in_warpgroup == 0);
    /// ```
    #[inline(always)]
    pub fn arrive_pair_if(self, pred: bool) {
        // SAFETY: as `arrive_cluster` (both ranks exist in a 2-CTA cluster).
        unsafe {
            asm!(
                "{{ .reg .b32 ra; .reg .pred p; setp.ne.b32 p, {c}, 0; mapa.shared::cluster.u32 ra, {a}, 0; @p mbarrier.arrive.shared::cluster.b64 _, [ra]; mapa.shared::cluster.u32 ra, {a}, 1; @p mbarrier.arrive.shared::cluster.b64 _, [ra]; }}",
                a = in(reg32) self.addr(), c = in(reg32) pred as u32, options(nostack)
            )
        };
    }

    /// Non-blocking test: has the phase with parity `parity` completed?
    #[inline(always)]
    pub fn try_wait_parity(self, parity: u32) -> bool {
        let r: u32;
        // SAFETY: as `arrive`.
        unsafe {
            asm!(
                "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph}; selp.u32 {r}, 1, 0, p; }}",
                a = in(reg32) self.addr(), ph = in(reg32) parity, r = out(reg32) r, options(nostack)
            )
        };
        r != 0
    }

    /// Blocks until the phase with parity `parity` has completed (acquire
    /// semantics: the arrivals' writes are visible afterwards).
    ///
    /// Release builds spin in the same three-instruction `try_wait` loop a
    /// hand-written kernel uses. Debug builds bound the wait by
    /// [`WAIT_BOUND_NS`] and then print `site()` and trap.
    #[inline(always)]
    pub fn wait_parity(self, parity: u32, site: impl FnOnce() -> WaitSite) {
        #[cfg(not(debug_assertions))]
        {
            let _ = site;
            // SAFETY: as `arrive`. PTX scopes the label to the braces, so the
            // block may be inlined many times into one function.
            #[allow(named_asm_labels)]
            unsafe {
                asm!(
                    "{{ .reg .pred p; BATON_WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph}; @!p bra BATON_WAIT; }}",
                    a = in(reg32) self.addr(), ph = in(reg32) parity, options(nostack)
                )
            };
        }
        #[cfg(debug_assertions)]
        {
            if self.try_wait_parity(parity) {
                return;
            }
            let start = super::global_timer_ns();
            while !self.try_wait_parity(parity) {
                if super::global_timer_ns().wrapping_sub(start) > WAIT_BOUND_NS {
                    super::report_hang(&site());
                }
            }
        }
    }
}

/// `fence.mbarrier_init.release.cluster`: publishes barrier initialization to
/// the cluster (and to the async proxy). Call after `init`, before the
/// block/cluster barrier that lets other threads use the barriers.
#[inline(always)]
pub fn fence_barrier_init() {
    // SAFETY: a fence.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) };
}

/// `fence.proxy.async.shared::cta`: orders this thread's generic-proxy shared
/// memory writes before later async-proxy accesses (TMA store, wgmma reads).
#[inline(always)]
pub fn fence_proxy_async_shared() {
    // SAFETY: a fence.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}
