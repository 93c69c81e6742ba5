//! The rules a launch configuration must satisfy, one variant each with the
//! values that broke it. A leaf module:
//! [`LaunchConfig::validate`](crate::LaunchConfig::validate) returns them inside
//! [`Error::InvalidLaunch`](crate::Error::InvalidLaunch).

/// A launch configuration the hardware cannot run.
///
/// ```
/// use baton_runtime::{Error, LaunchConfig, LaunchLimits, error::LaunchRule};
/// let mut cfg = LaunchConfig::linear(3, 64, 0);
/// cfg.cluster = Some((2, 1, 1));
/// match cfg.validate("k", &LaunchLimits::HOPPER) {
///     Err(Error::InvalidLaunch { rule: LaunchRule::ClusterDoesNotTileGrid { .. }, .. }) => {}
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchRule {
    /// A grid dimension is zero.
    #[error("grid {grid:?} has a zero dimension; every dimension must be at least 1")]
    ZeroGrid {
        /// The grid.
        grid: (u32, u32, u32),
    },
    /// A grid dimension exceeds the hardware's.
    #[error("grid {grid:?} too large; allowed: x <= 2^31-1, y <= 65535, z <= 65535")]
    GridTooLarge {
        /// The grid.
        grid: (u32, u32, u32),
    },
    /// A block dimension is zero.
    #[error("block {block:?} has a zero dimension; every dimension must be at least 1")]
    ZeroBlock {
        /// The block.
        block: (u32, u32, u32),
    },
    /// The block's z dimension exceeds 64.
    #[error("block {block:?}: z may be at most 64")]
    BlockZTooLarge {
        /// The block.
        block: (u32, u32, u32),
    },
    /// More threads per block than the kernel allows.
    #[error("block {block:?} has {threads} threads; this kernel allows at most {max} per block")]
    TooManyThreads {
        /// The block.
        block: (u32, u32, u32),
        /// Its threads.
        threads: u64,
        /// The kernel's limit.
        max: u32,
    },
    /// A cluster dimension is zero.
    #[error("cluster {cluster:?} has a zero dimension; every dimension must be at least 1")]
    ZeroCluster {
        /// The cluster.
        cluster: (u32, u32, u32),
    },
    /// The cluster does not divide the grid.
    #[error(
        "cluster {cluster:?} does not tile grid {grid:?}: each grid dimension must be a multiple of the cluster's"
    )]
    ClusterDoesNotTileGrid {
        /// The cluster.
        cluster: (u32, u32, u32),
        /// The grid.
        grid: (u32, u32, u32),
    },
    /// More blocks per cluster than the device allows.
    #[error(
        "cluster {cluster:?} has {size} blocks; this device allows at most {max} ({portable} portably)"
    )]
    ClusterTooLarge {
        /// The cluster.
        cluster: (u32, u32, u32),
        /// Its blocks.
        size: u64,
        /// The device's limit.
        max: u32,
        /// The portable limit ([`PORTABLE_CLUSTER_SIZE`](crate::PORTABLE_CLUSTER_SIZE)).
        portable: u32,
    },
    /// A typed launch with a block other than the kernel's spec fixes.
    #[error("block {block:?}: the kernel's KernelSpec fixes it at ({threads}, 1, 1)")]
    BlockNotSpec {
        /// The block asked for.
        block: (u32, u32, u32),
        /// The spec's threads.
        threads: u32,
    },
    /// A typed launch with less dynamic shared memory than the kernel's
    /// layout (the module's baton-spec record).
    #[error("{bytes} bytes of dynamic shared memory; the kernel's shared layout needs {needed}")]
    SmemBelowLayout {
        /// Bytes asked for.
        bytes: u32,
        /// `size_of` the layout on the device.
        needed: u32,
    },
}
