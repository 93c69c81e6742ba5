//! The role table of a Hopper GEMM CTA (which warp runs which role, with
//! how many registers) and its dispatch; the CTA's setup before the roles
//! start.

use baton::arch::sm90::wgmma::{setmaxnreg_dec, setmaxnreg_inc};
use baton::arch::sm90::{cluster_sync, elect_one, sync_threads, thread_idx_x, warp_idx};

/// Which warps of a Hopper GEMM CTA run which role: warpgroup 0 holds the
/// single-lane roles and releases its registers to 40; the other
/// warpgroups are consumers (main loop + epilogue) with 232.
///
/// | warps | role | registers |
/// |---|---|---|
/// | `producer_warp` (elected lane) | [`TmaProducer`](super::producer::TmaProducer) | 40 |
/// | `c_load_warp` (elected lane, only when C is read) | [`CLoad`](super::c_load::CLoad) | 40 |
/// | the rest of warpgroup 0 | idle | 40 |
/// | 4–7, 8–11, … | consumer warpgroup 0, 1, …: main loop, stream-K fixup, [`StoreEpilogue`](super::epilogue::StoreEpilogue) | 232 |
///
/// ```ignore
/// GEMM_ROLES.dispatch(beta != 0.0, || producer.run(load), || unsafe { c_load.run() }, |wg| consumer(wg));
/// ```
#[derive(Clone, Copy)]
pub struct RoleTable {
    /// Warp whose elected lane runs the TMA producer.
    pub producer_warp: u32,
    /// Warp whose elected lane runs the C-load role.
    pub c_load_warp: u32,
    /// Consumer warpgroups (after warpgroup 0).
    pub consumer_warpgroups: u32,
}

/// The table of baton's Hopper GEMMs: producer warp 0, C-load warp 1, two
/// consumer warpgroups (384 threads).
///
/// ```ignore
/// assert_eq!(GEMM_ROLES.threads(), 384);
/// ```
pub const GEMM_ROLES: RoleTable = RoleTable {
    producer_warp: 0,
    c_load_warp: 1,
    consumer_warpgroups: 2,
};

/// Registers per thread of warpgroup 0 (`setmaxnreg.dec`).
pub const PRODUCER_REGISTERS: u32 = 40;
/// Registers per thread of the consumer warpgroups (`setmaxnreg.inc`).
pub const CONSUMER_REGISTERS: u32 = 232;

impl RoleTable {
    /// Threads per CTA.
    ///
    /// ```ignore
    /// assert_eq!(GEMM_ROLES.threads(), 384);
    /// ```
    #[inline(always)]
    pub const fn threads(&self) -> u32 {
        128 * (1 + self.consumer_warpgroups)
    }

    /// Runs this thread's role: `producer` in the producer warp's elected
    /// lane, `c_load` in the C-load warp's (only when `c_load_active`),
    /// `consumer(wg)` in every thread of consumer warpgroup `wg`; the other
    /// threads of warpgroup 0 return at once. Warpgroup 0 first releases
    /// registers to [`PRODUCER_REGISTERS`], the consumers raise theirs to
    /// [`CONSUMER_REGISTERS`] (each warpgroup-collective).
    ///
    /// ```ignore
    /// GEMM_ROLES.dispatch(residual, || { /* producer */ }, || { /* C load */ }, |wg| { /* consumer */ });
    /// ```
    #[inline(always)]
    pub fn dispatch(
        &self,
        c_load_active: bool,
        producer: impl FnOnce(),
        c_load: impl FnOnce(),
        consumer: impl FnOnce(u32),
    ) {
        let warpgroup = warp_idx() / 4;
        if warpgroup == 0 {
            setmaxnreg_dec::<PRODUCER_REGISTERS>();
            if warp_idx() == self.producer_warp && elect_one() {
                producer();
            } else if warp_idx() == self.c_load_warp && c_load_active && elect_one() {
                c_load();
            }
        } else {
            setmaxnreg_inc::<CONSUMER_REGISTERS>();
            consumer(warpgroup - 1);
        }
    }
}

/// CTA setup before the roles start: thread 0 runs `init` (barrier
/// initialization, tensor-map prefetches), then every thread of the CTA —
/// of the whole cluster when `CLUSTER_M > 1`, because peers arrive on and
/// multicast into this CTA's barriers — waits until all are initialized.
///
/// ```ignore
/// init_then_sync::<CLUSTER_M>(|| input.init(2 * CLUSTER_M));
/// ```
#[inline(always)]
pub fn init_then_sync<const CLUSTER_M: u32>(init: impl FnOnce()) {
    if thread_idx_x() == 0 {
        init();
    }
    if CLUSTER_M > 1 {
        cluster_sync();
    } else {
        sync_threads();
    }
}
