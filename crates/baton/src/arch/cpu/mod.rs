//! Host backend: the same protocol code on atomics, a host thread standing
//! for a warp.
//!
//! * [`MbarrierCell`]/[`BarrierRef`]: an `mbarrier` with PTX semantics
//!   (arrival count, transaction count, phase parity) on one atomic word.
//! * [`CpuBlock`]: a simulated thread block — its shared memory (any `Sync`
//!   value) and warps run as scoped threads.
//! * [`CpuCluster`]: a simulated cluster of CTAs, each with its own shared
//!   memory and warps; remote barrier arrivals, cluster barrier, TMA
//!   multicast into every CTA of a mask ([`cluster`](self::cluster_cta_rank)).
//! * [`run_warpgroup`]: a warpgroup as 128 host threads (one per GPU
//!   thread) for collective operations: [`shfl_xor`] and [`wgmma`], Hopper's
//!   warpgroup MMA (SS and RS BF16 shapes).
//! * [`elect_one`]: the CPU form of `elect.sync`.
//!
//! Under `--cfg loom` the atomics are loom's, so `loom::model` explores every
//! interleaving of the protocol (see `crates/baton/tests/loom_pipeline.rs`).

mod block;
mod cluster;
mod lanes;
mod mbarrier;
mod sync;
pub mod tcgen05;
pub mod tma;
#[cfg(not(loom))]
mod warpgroup;
#[cfg(not(loom))]
pub mod wgmma;

pub use block::{BlockBarrier, CpuBlock, Warp};
pub use cluster::{
    CpuCluster, MAX_CLUSTER_SIZE, cluster_cta_rank, cluster_size, cluster_sync, map_shared,
};
pub use lanes::{WARP_SIZE, active_lanes, with_lanes};
pub use mbarrier::{
    BarrierRef, MAX_COUNT, MbarrierCell, fence_barrier_init, fence_proxy_async_shared,
};
#[cfg(not(loom))]
pub use warpgroup::{WARPGROUP_THREADS, run_warpgroup, shfl_xor};

/// Runs `f` as the warp's single elected lane (the CPU form of
/// `if elect_one() { … }`): barrier arrivals inside count once, not 32 times.
///
/// ```
/// use baton::arch::cpu::{active_lanes, elect_one, with_lanes};
/// with_lanes(32, || {
///     assert_eq!(active_lanes(), 32);
///     elect_one(|| assert_eq!(active_lanes(), 1));
/// });
/// ```
pub fn elect_one<R>(f: impl FnOnce() -> R) -> R {
    with_lanes(1, f)
}
