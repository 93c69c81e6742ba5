//! Launch configuration, its validation (pure, testable without a GPU) and
//! kernel arguments.

use crate::error::{Error, LaunchRule, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};
use std::ffi::c_void;

/// Grid, block, optional thread-block cluster and dynamic shared memory of a
/// launch.
///
/// ```
/// use baton_runtime::LaunchConfig;
/// let cfg = LaunchConfig { grid: (132, 1, 1), block: (384, 1, 1), cluster: Some((2, 1, 1)), dynamic_smem_bytes: 200 * 1024 };
/// assert_eq!(cfg.threads_per_block(), 384);
/// assert_eq!(cfg.cluster_size(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads in a block (x, y, z).
    pub block: (u32, u32, u32),
    /// Blocks per cluster (x, y, z); `None`: no cluster attribute.
    pub cluster: Option<(u32, u32, u32)>,
    /// Bytes of dynamic shared memory per block.
    pub dynamic_smem_bytes: u32,
}

/// Device and kernel limits a launch is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchLimits {
    /// Most threads per block for this kernel (device limit, lowered by the
    /// kernel's register use).
    pub max_threads_per_block: u32,
    /// Most dynamic shared memory one block of this kernel may ask for:
    /// the device's opt-in limit minus the kernel's static shared memory.
    pub max_dynamic_smem_bytes: u32,
    /// Largest cluster (in blocks) the device allows (16 on Hopper with the
    /// non-portable attribute; 8 portable).
    pub max_cluster_size: u32,
}

impl LaunchLimits {
    /// Hopper's limits for a kernel with no static shared memory:
    /// 1024 threads, 227 KiB dynamic shared memory, clusters of up to 16.
    pub const HOPPER: LaunchLimits = LaunchLimits {
        max_threads_per_block: 1024,
        max_dynamic_smem_bytes: 227 * 1024,
        max_cluster_size: 16,
    };
}

/// Clusters larger than this need `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`.
pub const PORTABLE_CLUSTER_SIZE: u32 = 8;

impl LaunchConfig {
    /// One-dimensional grid and block, no cluster.
    pub const fn linear(blocks: u32, threads: u32, dynamic_smem_bytes: u32) -> Self {
        Self {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            cluster: None,
            dynamic_smem_bytes,
        }
    }

    /// Threads per block.
    pub const fn threads_per_block(&self) -> u64 {
        self.block.0 as u64 * self.block.1 as u64 * self.block.2 as u64
    }

    /// Blocks per cluster (1 without a cluster).
    pub const fn cluster_size(&self) -> u64 {
        match self.cluster {
            Some(c) => c.0 as u64 * c.1 as u64 * c.2 as u64,
            None => 1,
        }
    }

    /// Checks the configuration against `limits`, so that a bad launch is a
    /// typed error with the allowed range instead of a bare driver code.
    ///
    /// ```
    /// use baton_runtime::{Error, LaunchConfig, LaunchLimits};
    /// let cfg = LaunchConfig::linear(1, 64, 300_000);
    /// let err = cfg.validate("k", &LaunchLimits::HOPPER).unwrap_err();
    /// assert!(matches!(err, Error::SmemTooLarge { requested: 300_000, max: 232_448, .. }));
    /// ```
    pub fn validate(&self, kernel: &str, limits: &LaunchLimits) -> Result<()> {
        let bad = |rule| {
            Err(Error::InvalidLaunch {
                kernel: kernel.to_string(),
                rule,
            })
        };
        let (grid, block) = (self.grid, self.block);
        let (gx, gy, gz) = grid;
        let (bx, by, bz) = block;
        if gx == 0 || gy == 0 || gz == 0 {
            return bad(LaunchRule::ZeroGrid { grid });
        }
        if gx > i32::MAX as u32 || gy > 65_535 || gz > 65_535 {
            return bad(LaunchRule::GridTooLarge { grid });
        }
        if bx == 0 || by == 0 || bz == 0 {
            return bad(LaunchRule::ZeroBlock { block });
        }
        if bz > 64 {
            return bad(LaunchRule::BlockZTooLarge { block });
        }
        if self.threads_per_block() > limits.max_threads_per_block as u64 {
            return bad(LaunchRule::TooManyThreads {
                block,
                threads: self.threads_per_block(),
                max: limits.max_threads_per_block,
            });
        }
        if let Some(cluster @ (cx, cy, cz)) = self.cluster {
            if cx == 0 || cy == 0 || cz == 0 {
                return bad(LaunchRule::ZeroCluster { cluster });
            }
            if gx % cx != 0 || gy % cy != 0 || gz % cz != 0 {
                return bad(LaunchRule::ClusterDoesNotTileGrid { cluster, grid });
            }
            if self.cluster_size() > limits.max_cluster_size as u64 {
                return bad(LaunchRule::ClusterTooLarge {
                    cluster,
                    size: self.cluster_size(),
                    max: limits.max_cluster_size,
                    portable: PORTABLE_CLUSTER_SIZE,
                });
            }
        }
        if self.dynamic_smem_bytes > limits.max_dynamic_smem_bytes {
            return Err(Error::SmemTooLarge {
                kernel: kernel.to_string(),
                requested: self.dynamic_smem_bytes,
                max: limits.max_dynamic_smem_bytes,
            });
        }
        Ok(())
    }
}

#[derive(Debug)]
enum ArgVal {
    U32(u32),
    I32(i32),
    U64(u64),
    F32(f32),
}

/// Kernel parameters, in order, for [`Kernel::launch`](crate::Kernel::launch).
///
/// Device buffers are passed by their device pointer; the borrow keeps them
/// alive (and cudarc's stream-ordering events right) until the launch is
/// enqueued.
///
/// ```no_run
/// # fn f(gpu: &baton_runtime::Gpu) -> baton_runtime::Result<()> {
/// let input = gpu.stream().clone_htod(&[1u32, 2, 3])?;
/// let mut out = gpu.stream().alloc_zeros::<u32>(3)?;
/// let mut args = gpu.args();
/// args.slice_mut(&mut out).slice(&input).u32(3);
/// # Ok(()) }
/// ```
pub struct KernelArgs<'a> {
    stream: &'a CudaStream,
    vals: Vec<ArgVal>,
    guards: Vec<SyncOnDrop<'a>>,
}

impl<'a> KernelArgs<'a> {
    pub(crate) fn new(stream: &'a CudaStream) -> Self {
        Self {
            stream,
            vals: Vec::new(),
            guards: Vec::new(),
        }
    }

    /// A read-only device buffer (`*const T` in the kernel).
    pub fn slice<T: DeviceRepr>(&mut self, buf: &'a CudaSlice<T>) -> &mut Self {
        let (ptr, guard) = buf.device_ptr(self.stream);
        self.guards.push(guard);
        self.vals.push(ArgVal::U64(ptr));
        self
    }

    /// A device buffer the kernel writes (`*mut T` in the kernel).
    pub fn slice_mut<T: DeviceRepr>(&mut self, buf: &'a mut CudaSlice<T>) -> &mut Self {
        let (ptr, guard) = buf.device_ptr_mut(self.stream);
        self.guards.push(guard);
        self.vals.push(ArgVal::U64(ptr));
        self
    }

    /// A `u32` by value.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.vals.push(ArgVal::U32(v));
        self
    }

    /// An `i32` by value.
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.vals.push(ArgVal::I32(v));
        self
    }

    /// A `u64` by value.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.vals.push(ArgVal::U64(v));
        self
    }

    /// An `f32` by value.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.vals.push(ArgVal::F32(v));
        self
    }

    /// The stream the launch goes to.
    pub fn stream(&self) -> &'a CudaStream {
        self.stream
    }

    /// Number of parameters so far.
    pub fn len(&self) -> usize {
        self.vals.len()
    }

    /// True when no parameter was pushed.
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    /// The `void**` array `cuLaunchKernelEx` takes; valid while `self` is
    /// neither moved nor changed.
    pub(crate) fn param_ptrs(&mut self) -> Vec<*mut c_void> {
        self.vals
            .iter_mut()
            .map(|v| match v {
                ArgVal::U32(x) => x as *mut u32 as *mut c_void,
                ArgVal::I32(x) => x as *mut i32 as *mut c_void,
                ArgVal::U64(x) => x as *mut u64 as *mut c_void,
                ArgVal::F32(x) => x as *mut f32 as *mut c_void,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(cfg: LaunchConfig) -> Error {
        cfg.validate("k", &LaunchLimits::HOPPER)
            .expect_err("configuration must be rejected")
    }

    #[test]
    fn smem_too_large_names_both_numbers_and_a_fix() {
        let e = err(LaunchConfig::linear(1, 128, 233_472));
        assert!(
            matches!(
                e,
                Error::SmemTooLarge {
                    requested: 233_472,
                    max: 232_448,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("`k`") && msg.contains("233472") && msg.contains("232448"),
            "{msg}"
        );
        assert!(msg.contains("fewer pipeline stages"), "{msg}");
    }

    #[test]
    fn each_rule_is_its_own_variant_with_the_values() {
        let rule = |cfg: LaunchConfig| match err(cfg) {
            Error::InvalidLaunch { kernel, rule } => {
                assert_eq!(kernel, "k");
                rule
            }
            e => panic!("not an InvalidLaunch: {e:?}"),
        };
        let with = |grid, block, cluster| LaunchConfig {
            grid,
            block,
            cluster,
            dynamic_smem_bytes: 0,
        };
        assert_eq!(
            rule(with((0, 1, 1), (32, 1, 1), None)),
            LaunchRule::ZeroGrid { grid: (0, 1, 1) }
        );
        assert_eq!(
            rule(with((1, 70_000, 1), (32, 1, 1), None)),
            LaunchRule::GridTooLarge {
                grid: (1, 70_000, 1)
            }
        );
        assert_eq!(
            rule(with((1, 1, 1), (32, 0, 1), None)),
            LaunchRule::ZeroBlock { block: (32, 0, 1) }
        );
        assert_eq!(
            rule(with((1, 1, 1), (1, 1, 65), None)),
            LaunchRule::BlockZTooLarge { block: (1, 1, 65) }
        );
        assert_eq!(
            rule(with((1, 1, 1), (1056, 1, 1), None)),
            LaunchRule::TooManyThreads {
                block: (1056, 1, 1),
                threads: 1056,
                max: 1024
            }
        );
        assert_eq!(
            rule(with((2, 1, 1), (32, 1, 1), Some((0, 1, 1)))),
            LaunchRule::ZeroCluster { cluster: (0, 1, 1) }
        );
        assert_eq!(
            rule(with((3, 1, 1), (32, 1, 1), Some((2, 1, 1)))),
            LaunchRule::ClusterDoesNotTileGrid {
                cluster: (2, 1, 1),
                grid: (3, 1, 1)
            }
        );
        assert_eq!(
            rule(with((32, 1, 1), (32, 1, 1), Some((32, 1, 1)))),
            LaunchRule::ClusterTooLarge {
                cluster: (32, 1, 1),
                size: 32,
                max: 16,
                portable: PORTABLE_CLUSTER_SIZE
            }
        );
    }

    #[test]
    fn smem_at_the_limit_is_allowed() {
        LaunchConfig::linear(1, 128, 227 * 1024)
            .validate("k", &LaunchLimits::HOPPER)
            .unwrap();
    }

    #[test]
    fn zero_dimensions_are_rejected() {
        for cfg in [
            LaunchConfig::linear(0, 64, 0),
            LaunchConfig::linear(1, 0, 0),
        ] {
            let msg = err(cfg).to_string();
            assert!(
                msg.contains("zero dimension") && msg.contains("at least 1"),
                "{msg}"
            );
        }
    }

    #[test]
    fn too_many_threads_is_rejected_with_the_limit() {
        let msg = err(LaunchConfig::linear(1, 1056, 0)).to_string();
        assert!(
            msg.contains("1056 threads") && msg.contains("at most 1024"),
            "{msg}"
        );
    }

    #[test]
    fn cluster_must_tile_the_grid() {
        let mut cfg = LaunchConfig::linear(3, 128, 0);
        cfg.cluster = Some((2, 1, 1));
        let msg = err(cfg).to_string();
        assert!(msg.contains("does not tile"), "{msg}");
        cfg.grid.0 = 4;
        cfg.validate("k", &LaunchLimits::HOPPER).unwrap();
    }

    #[test]
    fn cluster_size_limit() {
        let mut cfg = LaunchConfig::linear(32, 128, 0);
        cfg.cluster = Some((32, 1, 1));
        let msg = err(cfg).to_string();
        assert!(
            msg.contains("32 blocks") && msg.contains("at most 16"),
            "{msg}"
        );
        cfg.cluster = Some((16, 1, 1));
        cfg.validate("k", &LaunchLimits::HOPPER).unwrap();
    }

    #[test]
    fn grid_y_limit() {
        let cfg = LaunchConfig {
            grid: (1, 70_000, 1),
            ..LaunchConfig::linear(1, 32, 0)
        };
        assert!(err(cfg).to_string().contains("65535"));
    }
}
