//! The smoke kernels: one `mbarrier` handoff in a block, and a cluster
//! launch whose barriers complete by remote arrivals.

use baton::arch::current::MbarrierCell;
use baton::kernel::{KernelParams, KernelSpec};

/// Words [`SMOKE`] moves at most (one per producer lane).
pub const SMOKE_MAX_N: u32 = 32;

/// Parameters of [`SMOKE`]: `input` holds `n <= 32` words, `out` `n + 4`.
///
/// ```
/// let p = baton_kernels_abi::smoke::SmokeParams { out: core::ptr::null_mut(), input: core::ptr::null(), n: 32 };
/// assert_eq!(p.n, 32);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SmokeParams {
    /// `n` transformed words, then four parity probes.
    pub out: *mut u32,
    /// The words warp 0 hands over.
    pub input: *const u32,
    /// How many (at most [`SMOKE_MAX_N`]).
    pub n: u32,
}
// SAFETY: repr(C) of raw pointers and an integer.
unsafe impl KernelParams for SmokeParams {}

/// Shared-memory layout of [`SMOKE`].
#[repr(C)]
pub struct SmokeLayout {
    /// The barrier warp 1 waits on.
    pub bar: MbarrierCell,
    /// The words warp 0 hands over.
    pub data: [u32; 32],
}

/// `baton_smoke_mbarrier`: grid 1, two warps.
///
/// ```
/// assert_eq!(baton_kernels_abi::smoke::SMOKE.cluster_size(), 1);
/// ```
pub const SMOKE: KernelSpec<SmokeParams> = KernelSpec::new("baton_smoke_mbarrier", 64)
    .with_dynamic_smem::<SmokeLayout>()
    .hot();

/// Parameters of [`SMOKE_CLUSTER`]: `out` holds `grid.x * 4` words.
///
/// ```
/// let p = baton_kernels_abi::smoke::ClusterSmokeParams { out: core::ptr::null_mut() };
/// assert!(p.out.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClusterSmokeParams {
    /// `[cluster rank, cluster size, block, 1]` per block.
    pub out: *mut u32,
}
// SAFETY: repr(C) of a raw pointer.
unsafe impl KernelParams for ClusterSmokeParams {}

/// Shared-memory layout of [`SMOKE_CLUSTER`]: one barrier per CTA.
#[repr(C)]
pub struct ClusterSmokeLayout {
    /// Completed by one remote arrival from every CTA of the cluster.
    pub bar: MbarrierCell,
}

/// Words each block of [`SMOKE_CLUSTER`] writes.
pub const CLUSTER_SMOKE_WORDS: usize = 4;

/// `baton_smoke_cluster`: one-warp blocks; the host picks the cluster size
/// per launch (`TypedKernel::launch_with_cluster`), up to 16.
///
/// ```
/// assert_eq!(baton_kernels_abi::smoke::SMOKE_CLUSTER.threads, 32);
/// ```
pub const SMOKE_CLUSTER: KernelSpec<ClusterSmokeParams> =
    KernelSpec::new("baton_smoke_cluster", 32)
        .with_dynamic_smem::<ClusterSmokeLayout>()
        .hot();
