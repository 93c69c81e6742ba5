//! The role table of a Hopper GEMM CTA (which warp runs which role, with
//! how many registers) and its dispatch; the CTA's setup before the roles
//! start.

use crate::trace::{self, Event};
use baton::arch::ptx::{
    cluster_sync, grid_dependency_launch_dependents, grid_dependency_wait, sync_threads,
    thread_idx_x,
};
// For `dispatch_roles!` (expanded in the kernel crate).
#[doc(hidden)]
pub use baton::arch::ptx::wgmma::{setmaxnreg_dec, setmaxnreg_inc};
#[doc(hidden)]
pub use baton::arch::ptx::{elect_one, warp_idx};

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
/// dispatch_roles!(GEMM_ROLES, c_load_active: beta != 0.0, producer => { … }, c_load => { … }, consumer(wg) => { … });
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
    /// This table with `consumer_warpgroups` consumer warpgroups (the
    /// same single-lane roles in warpgroup 0): one for the kernels whose
    /// tile is one `wgmma` row block of 64 (the narrow swap-AB and 64-row
    /// FP8 tiles, 256 threads).
    ///
    /// ```ignore
    /// assert_eq!(GEMM_ROLES.with_consumer_warpgroups(1).threads(), 256);
    /// ```
    #[inline(always)]
    pub const fn with_consumer_warpgroups(self, consumer_warpgroups: u32) -> Self {
        Self {
            consumer_warpgroups,
            ..self
        }
    }

    /// Threads per CTA.
    ///
    /// ```ignore
    /// assert_eq!(GEMM_ROLES.threads(), 384);
    /// ```
    #[inline(always)]
    pub const fn threads(&self) -> u32 {
        128 * (1 + self.consumer_warpgroups)
    }
}

/// Runs this thread's role of a [`RoleTable`] (a macro: the role bodies
/// are compiled exactly as if written inline in the kernel's `if`/`else`
/// — passing them as closures cost up to 7 instructions per main-loop
/// iteration in the two-wave FP8 kernels, and folding the role into an
/// enum first made ptxas spill: both measured):
///
/// * warpgroup 0 releases its registers to [`PRODUCER_REGISTERS`]
///   (`setmaxnreg.dec`, warpgroup-collective); the producer warp's elected
///   lane runs `producer`, the C-load warp's elected lane `c_load` (only
///   when `c_load_active`), the rest of the warpgroup nothing;
/// * every other warpgroup raises its registers to [`CONSUMER_REGISTERS`]
///   and runs `consumer` with `$wg` bound to its consumer index (0, 1, …).
///
/// Every thread of the CTA must reach it (the register reallocation is
/// warpgroup-collective).
///
/// ```ignore
/// baton_kernel_roles::dispatch_roles!(GEMM_ROLES, c_load_active: beta != 0.0,
///     producer => { TmaProducer { input, work, rows }.run(loader) },
///     c_load => { unsafe { c_load.run() } },
///     consumer(wg) => { /* main loop, stream-K fixup, epilogue */ },
/// );
/// ```
#[macro_export]
macro_rules! dispatch_roles {
    ($table:expr, c_load_active: $active:expr,
     producer => $producer:block,
     c_load => $c_load:block,
     consumer($wg:ident) => $consumer:block $(,)?) => {{
        let table: $crate::sm90::dispatch::RoleTable = $table;
        let warpgroup = $crate::sm90::dispatch::warp_idx() / 4;
        if warpgroup == 0 {
            $crate::sm90::dispatch::setmaxnreg_dec::<{ $crate::sm90::dispatch::PRODUCER_REGISTERS }>();
            if $crate::sm90::dispatch::warp_idx() == table.producer_warp
                && $crate::sm90::dispatch::elect_one()
            $producer
            else if $crate::sm90::dispatch::warp_idx() == table.c_load_warp
                && $active
                && $crate::sm90::dispatch::elect_one()
            $c_load
        } else {
            $crate::sm90::dispatch::setmaxnreg_inc::<{ $crate::sm90::dispatch::CONSUMER_REGISTERS }>();
            let $wg: u32 = warpgroup - 1;
            $consumer
        }
    }};
}

/// The warp whose lane 0 runs the barrier initialization of
/// [`init_then_sync_scheduled`]: warp 3, idle in warpgroup 0 (the
/// producer is warp 0, the C-load role warp 1: [`GEMM_ROLES`]).
pub const INIT_WARP: u32 = 3;

/// [`init_then_sync`] overlapped with the CTA's schedule: lane 0 of
/// [`INIT_WARP`] runs `init` while every other warp computes `schedule()`
/// (the schedule every role walks, ~500–1000 cycles of integer divisions
/// that ran after the barrier, on the producer's way to its first load:
/// session 18's traces, "synced → producer start"); the init warp computes
/// it after the barrier, where it does not delay the first load. Returns
/// the schedule. `schedule` must be pure arithmetic on kernel parameters
/// and special registers (each thread computes its own copy, the same in
/// every thread of the CTA), and `init` as [`init_then_sync`]'s.
///
/// Protocol: the barrier (CTA or cluster) orders the initialization before
/// every role's first use of the barriers, as in [`init_then_sync`]; the
/// two barrier instructions (one per branch) are one barrier: each warp
/// reaches exactly one of them, converged.
///
/// Only for kernels with registers to spare: in the two-wave and
/// ping-pong kernels (at their register limit) ptxas spilled with this
/// form (session 19), so they keep [`init_then_sync`].
///
/// ```ignore
/// let work = init_then_sync_scheduled::<CLUSTER_M, _>(|| input.init(2), || ClusterWork::<1>::new(tm, tn, kb, 8, (0, 0)));
/// ```
#[inline(always)]
pub fn init_then_sync_scheduled<const CLUSTER_M: u32, W>(
    init: impl FnOnce(),
    schedule: impl Fn() -> W,
) -> W {
    if thread_idx_x() == 0 {
        stamp_entry();
    }
    let work = if warp_idx() == INIT_WARP {
        if thread_idx_x() == 32 * INIT_WARP {
            init();
        }
        cta_or_cluster_sync::<CLUSTER_M>();
        schedule()
    } else {
        let work = schedule();
        cta_or_cluster_sync::<CLUSTER_M>();
        work
    };
    after_setup_barrier();
    work
}

/// Thread 0's trace stamps at the CTA's entry (no-ops untraced).
#[inline(always)]
fn stamp_entry() {
    trace::stamp(Event::Entry, false);
    trace::stamp_sm_id();
}

/// The setup barrier: the CTA's, or the cluster's when `CLUSTER_M > 1`.
#[inline(always)]
fn cta_or_cluster_sync<const CLUSTER_M: u32>() {
    if CLUSTER_M > 1 {
        cluster_sync();
    } else {
        sync_threads();
    }
}

/// What every thread does right after the setup barrier: wait for the
/// kernels before this one on the stream and let the next be scheduled
/// (programmatic dependent launch; see [`init_then_sync`]), then thread 0
/// stamps [`Event::Synced`].
#[inline(always)]
fn after_setup_barrier() {
    grid_dependency_wait();
    grid_dependency_launch_dependents();
    if thread_idx_x() == 0 {
        trace::stamp(Event::Synced, false);
    }
}

/// CTA setup before the roles start: thread 0 runs `init` (barrier
/// initialization, tensor-map prefetches), then every thread of the CTA —
/// of the whole cluster when `CLUSTER_M > 1`, because peers arrive on and
/// multicast into this CTA's barriers — waits until all are initialized.
///
/// Then every thread waits for the kernels before this one on the stream
/// (`griddepcontrol.wait`) and lets the next one be scheduled
/// (`griddepcontrol.launch_dependents`): `init` must not touch global
/// memory but the read-only tensor maps, and the roles touch it only after
/// this returns, so a kernel built on it may be launched with programmatic
/// stream serialization (its setup then overlaps its predecessor's tail;
/// `LaunchConfig::programmatic` on the host). Without that launch
/// attribute both instructions return at once.
///
/// ```ignore
/// init_then_sync::<CLUSTER_M>(|| input.init(2 * CLUSTER_M));
/// ```
#[inline(always)]
pub fn init_then_sync<const CLUSTER_M: u32>(init: impl FnOnce()) {
    if thread_idx_x() == 0 {
        stamp_entry();
        init();
    }
    cta_or_cluster_sync::<CLUSTER_M>();
    after_setup_barrier();
}
