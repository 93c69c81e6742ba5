//! An `mbarrier` on host atomics, with the PTX semantics the protocol relies
//! on: pending-arrival count, transaction count, phase bit.
//!
//! State word (one `AtomicU64`, so every transition is one atomic RMW):
//!
//! | bits | field |
//! |---|---|
//! | 0..32 | pending arrivals in the current phase |
//! | 32..63 | transaction count, biased by 2^30 (it may go negative, as in PTX, when a copy completes before its `expect_tx`) |
//! | 63 | phase parity |
//!
//! A phase completes when pending arrivals and transactions both reach zero:
//! the parity flips and pending resets to the init count. Arrivals use
//! acquire-release RMWs and waits acquire loads, so everything a thread wrote
//! before arriving is visible to a thread whose wait saw the phase complete —
//! the same guarantee `mbarrier.arrive` (release) / `try_wait` (acquire) give.

use super::lanes::active_lanes;
use super::sync::{AtomicU32, AtomicU64, Ordering, yield_now};
use crate::protocol::diag::WaitSite;
use crate::smem::SharedRef;

const PENDING_MASK: u64 = 0xFFFF_FFFF;
const TX_SHIFT: u32 = 32;
const TX_BIAS: i64 = 1 << 30;
const TX_MASK: u64 = 0x7FFF_FFFF;
const PHASE_BIT: u64 = 1 << 63;
/// PTX limit on the arrival count and on the transaction count magnitude.
pub const MAX_COUNT: u32 = (1 << 20) - 1;

/// Storage of one simulated `mbarrier`.
pub struct MbarrierCell {
    state: AtomicU64,
    expected: AtomicU32,
}

impl Default for MbarrierCell {
    fn default() -> Self {
        Self::new()
    }
}

impl MbarrierCell {
    /// An uninitialized barrier (call [`BarrierRef::init`] before use).
    pub fn new() -> Self {
        Self {
            state: AtomicU64::new(0),
            expected: AtomicU32::new(0),
        }
    }
}

fn pack(phase: u64, pending: u32, tx: i64) -> u64 {
    phase | (((tx + TX_BIAS) as u64 & TX_MASK) << TX_SHIFT) | pending as u64
}

fn unpack(s: u64) -> (u64, u32, i64) {
    (
        s & PHASE_BIT,
        (s & PENDING_MASK) as u32,
        ((s >> TX_SHIFT) & TX_MASK) as i64 - TX_BIAS,
    )
}

/// How long a CPU wait may spin before it reports a hang, in milliseconds
/// (`BATON_CPU_WAIT_TIMEOUT_MS`, default 10 000).
#[cfg(not(loom))]
fn wait_bound() -> std::time::Duration {
    use std::sync::OnceLock;
    static BOUND: OnceLock<std::time::Duration> = OnceLock::new();
    *BOUND.get_or_init(|| {
        let ms = std::env::var("BATON_CPU_WAIT_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000);
        std::time::Duration::from_millis(ms)
    })
}

/// A handle to one simulated `mbarrier` in the block's shared memory.
#[derive(Clone, Copy)]
pub struct BarrierRef<'a>(SharedRef<'a, MbarrierCell>);

impl<'a> BarrierRef<'a> {
    /// Wraps a barrier cell.
    #[inline]
    pub fn new(cell: SharedRef<'a, MbarrierCell>) -> Self {
        Self(cell)
    }

    #[inline]
    fn cell(self) -> &'a MbarrierCell {
        self.0.get()
    }

    /// Host address (diagnostics only).
    pub fn addr(self) -> usize {
        self.0.addr()
    }

    /// Expects `count` arrivals per phase; phase 0.
    ///
    /// # Safety
    /// Same contract as the GPU backend: one thread initializes before any
    /// other uses the barrier (the CPU backend would not misbehave in memory,
    /// but the protocol would).
    ///
    /// # Panics
    /// If `count` is 0 or above 2^20 - 1 (the PTX limit).
    pub unsafe fn init(self, count: u32) {
        assert!(
            (1..=MAX_COUNT).contains(&count),
            "mbarrier arrive count must be in 1..=2^20-1, got {count}"
        );
        self.cell().expected.store(count, Ordering::Relaxed);
        self.cell()
            .state
            .store(pack(0, count, 0), Ordering::Release);
    }

    fn update(self, arrivals: u32, tx_delta: i64) {
        let cell = self.cell();
        let expected = cell.expected.load(Ordering::Relaxed);
        let mut cur = cell.state.load(Ordering::Relaxed);
        loop {
            let (phase, pending, tx) = unpack(cur);
            assert!(expected != 0, "baton: arrive on an uninitialized mbarrier");
            assert!(
                arrivals <= pending,
                "baton: {arrivals} arrival(s) on an mbarrier with only {pending} pending (init count {expected}): arrive count mismatch"
            );
            let (pending, tx) = (pending - arrivals, tx + tx_delta);
            assert!(
                tx.unsigned_abs() <= MAX_COUNT as u64,
                "baton: mbarrier transaction count out of range ({tx})"
            );
            let next = if pending == 0 && tx == 0 {
                pack(phase ^ PHASE_BIT, expected, 0)
            } else {
                pack(phase, pending, tx)
            };
            match cell
                .state
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }

    /// One arrival per active lane of the calling simulated warp (32 in a
    /// warp thread, 1 inside [`elect_one`](super::elect_one) or in a plain
    /// thread) — what `mbarrier.arrive` executed by those lanes does.
    #[inline]
    pub fn arrive(self) {
        self.update(active_lanes(), 0);
    }

    /// One arrival if `pred` — the signal of the single lane whose predicate
    /// holds (the GPU form is a predicated arrive without a branch).
    #[inline]
    pub fn arrive_if(self, pred: bool) {
        if pred {
            // A predicated signal stands for the one lane whose predicate
            // holds (`thread_in_warpgroup == 0`): one arrival, whatever
            // the lanes the calling thread stands for.
            self.update(1, 0);
        }
    }

    /// `count` arrivals at once, whatever the active lanes.
    #[inline]
    pub fn arrive_count(self, count: u32) {
        self.update(count, 0);
    }

    /// Arrival plus `bytes` expected transactions, per active lane.
    #[inline]
    pub fn arrive_expect_tx(self, bytes: u32) {
        let lanes = active_lanes();
        self.update(lanes, bytes as i64 * lanes as i64);
    }

    /// `bytes` expected transactions (per active lane), no arrival.
    #[inline]
    pub fn expect_tx(self, bytes: u32) {
        self.update(0, bytes as i64 * active_lanes() as i64);
    }

    /// Completes `bytes` transactions — what the copy engine does when a TMA
    /// load lands. Used by the simulated TMA.
    #[inline]
    pub fn complete_tx(self, bytes: u32) {
        self.update(0, -(bytes as i64));
    }

    /// Arrival on the barrier at the same shared offset in CTA `cta_rank`
    /// of the calling thread's simulated cluster (see
    /// [`CpuCluster`](super::CpuCluster); the CPU form of `mapa` +
    /// `mbarrier.arrive.release.cluster`): one arrival per active lane.
    /// Panics when `cta_rank` is not in the cluster (outside a cluster
    /// runner only rank 0 exists).
    #[inline]
    pub fn arrive_cluster(self, cta_rank: u32) {
        // One arrival per active lane, as on the GPU where every executing
        // thread arrives (a signalling lane runs inside `elect_one`).
        self.in_cta(cta_rank).update(active_lanes(), 0);
    }

    /// Remote arrival without cluster-scope release, if `pred`: one arrival
    /// on the barrier at this offset in CTA `cta_rank` (see the PTX
    /// backend: only for signals that publish no data). The rank is checked
    /// whatever `pred`.
    #[inline]
    pub fn arrive_remote_if(self, cta_rank: u32, pred: bool) {
        let peer = self.in_cta(cta_rank);
        if pred {
            // A predicated signal stands for the one lane whose predicate
            // holds (`thread_in_warpgroup == 0`): one arrival.
            peer.update(1, 0);
        }
    }

    /// [`arrive_remote_if`](Self::arrive_remote_if) on CTAs 0 and 1 of a
    /// 2-CTA cluster (the PTX backend issues both in one asm block).
    #[inline]
    pub fn arrive_pair_if(self, pred: bool) {
        self.arrive_remote_if(0, pred);
        self.arrive_remote_if(1, pred);
    }

    /// The barrier at this barrier's shared offset in CTA `cta_rank` of the
    /// calling thread's cluster (`mapa`).
    #[inline]
    pub(crate) fn in_cta(self, cta_rank: u32) -> Self {
        Self(super::cluster::map_shared(self.0, cta_rank))
    }

    /// Has the phase with parity `parity` completed?
    #[inline]
    pub fn try_wait_parity(self, parity: u32) -> bool {
        let s = self.cell().state.load(Ordering::Acquire);
        ((s & PHASE_BIT != 0) as u32) != (parity & 1)
    }

    /// Current phase parity (diagnostics and tests).
    pub fn current_parity(self) -> u32 {
        (self.cell().state.load(Ordering::Acquire) >> 63) as u32
    }

    /// Blocks until the phase with parity `parity` completed.
    ///
    /// Spins with `yield_now`; if the phase has not completed after the bound
    /// (`BATON_CPU_WAIT_TIMEOUT_MS`, default 10 s) it panics with `site()` —
    /// a hung protocol fails the test instead of hanging the suite. Under loom
    /// the checker itself bounds the spin.
    pub fn wait_parity(self, parity: u32, site: impl FnOnce() -> WaitSite) {
        #[cfg(not(loom))]
        self.wait_parity_within(parity, wait_bound(), site);
        #[cfg(loom)]
        {
            let _ = site;
            let mut polls = 0u32;
            while !self.try_wait_parity(parity) {
                polls += 1;
                if polls == super::sync::LOOM_POLLS_BEFORE_SKIP {
                    // see `sync::LOOM_POLLS_BEFORE_SKIP`
                    super::sync::skip_branch();
                }
                yield_now();
            }
        }
    }

    /// [`wait_parity`](Self::wait_parity) with an explicit bound.
    #[cfg(not(loom))]
    pub fn wait_parity_within(
        self,
        parity: u32,
        bound: std::time::Duration,
        site: impl FnOnce() -> WaitSite,
    ) {
        {
            if self.try_wait_parity(parity) {
                return;
            }
            let start = std::time::Instant::now();
            let mut spins = 0u32;
            while !self.try_wait_parity(parity) {
                spins = spins.wrapping_add(1);
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    yield_now();
                }
                if spins.is_multiple_of(256) && start.elapsed() > bound {
                    panic!("baton: wait timed out after {bound:?}: {}", site());
                }
            }
        }
    }
}

/// Barrier-initialization fence: a no-op on the CPU (the block barrier that
/// follows initialization orders it).
#[inline]
pub fn fence_barrier_init() {}

/// Proxy fence: a no-op on the CPU (one proxy).
#[inline]
pub fn fence_proxy_async_shared() {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn bar(cell: &MbarrierCell) -> BarrierRef<'_> {
        BarrierRef::new(SharedRef::from_ref(cell))
    }

    #[test]
    fn fresh_barrier_passes_parity_one_and_blocks_parity_zero() {
        let cell = MbarrierCell::new();
        let b = bar(&cell);
        unsafe { b.init(2) };
        assert!(b.try_wait_parity(1));
        assert!(!b.try_wait_parity(0));
        b.arrive_count(1);
        assert!(!b.try_wait_parity(0));
        b.arrive_count(1);
        assert!(b.try_wait_parity(0));
        assert!(!b.try_wait_parity(1));
        assert_eq!(b.current_parity(), 1);
    }

    #[test]
    fn transactions_hold_the_phase_until_complete() {
        let cell = MbarrierCell::new();
        let b = bar(&cell);
        unsafe { b.init(1) };
        b.arrive_expect_tx(128);
        assert!(!b.try_wait_parity(0), "phase must wait for the bytes");
        b.complete_tx(100);
        assert!(!b.try_wait_parity(0));
        b.complete_tx(28);
        assert!(b.try_wait_parity(0));
    }

    #[test]
    fn transactions_may_complete_before_they_are_expected() {
        let cell = MbarrierCell::new();
        let b = bar(&cell);
        unsafe { b.init(1) };
        b.complete_tx(64);
        assert!(!b.try_wait_parity(0));
        b.arrive_expect_tx(64);
        assert!(b.try_wait_parity(0));
    }

    #[test]
    #[should_panic(expected = "arrive count mismatch")]
    fn too_many_arrivals_are_reported() {
        let cell = MbarrierCell::new();
        let b = bar(&cell);
        unsafe { b.init(1) };
        b.arrive_count(2);
    }

    #[test]
    #[should_panic(expected = "uninitialized")]
    fn arrive_before_init_is_reported() {
        let cell = MbarrierCell::new();
        bar(&cell).arrive_count(1);
    }

    #[test]
    fn wait_timeout_names_the_site() {
        let cell = MbarrierCell::new();
        let b = bar(&cell);
        unsafe { b.init(1) };
        let site = || WaitSite {
            pipeline: c"unit",
            role: crate::protocol::diag::Role::Consumer,
            stage: 3,
            phase: 0,
        };
        let bound = std::time::Duration::from_millis(100);
        let err = std::panic::catch_unwind(|| b.wait_parity_within(0, bound, site)).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(
            msg.contains("pipeline unit: consumer waiting on full[3] for phase parity 0"),
            "{msg}"
        );
    }
}
