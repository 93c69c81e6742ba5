//! Launch configuration, its validation (pure, testable without a GPU) and
//! kernel arguments.

use crate::error::{Error, LaunchRule, Result};
use crate::gpu::{Kernel, Kernels};
use baton::kernel::{KernelParams, KernelSpec};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Grid, block, optional thread-block cluster, dynamic shared memory and
/// programmatic dependent launch of a launch.
///
/// ```
/// use baton_runtime::LaunchConfig;
/// let cfg = LaunchConfig { grid: (132, 1, 1), block: (384, 1, 1), cluster: Some((2, 1, 1)), dynamic_smem_bytes: 200 * 1024, programmatic: false };
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
    /// Programmatic dependent launch
    /// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): the kernel
    /// may be scheduled before the kernel ahead of it on the stream has
    /// finished (once that one's CTAs signalled or exited), so its setup
    /// overlaps the other's tail. Only for a kernel that executes
    /// `griddepcontrol.wait` before touching memory its predecessors use
    /// (the Hopper GEMMs, through `init_then_sync`); the driver does not
    /// check it.
    pub programmatic: bool,
}

/// Whether kernels that support it ([`LaunchConfig::programmatic`]: the
/// Hopper BF16 GEMM plans) are launched with programmatic dependent launch:
/// only when the environment variable `BATON_PDL` is `1` when this is first
/// called (read once per process). Off by default: on the H100 the BF16
/// sweep's launches, queued back to back, took the same time with it
/// (our time 1.002× over the 36 shapes under 30 µs, 1.003× over all 84;
/// session 17, `docs/runs/2026-11-28-s17/call6`), and a gain not measured
/// is not worth a launch attribute every caller's graph inherits.
///
/// ```
/// let _ = baton_runtime::programmatic_launch_enabled();
/// ```
pub fn programmatic_launch_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("BATON_PDL").as_deref() == Ok("1"))
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
            programmatic: false,
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
    /// A by-value parameter struct's bytes (padding included), in 8-byte
    /// words so the buffer is aligned for any `KernelParams` field.
    Struct(Vec<MaybeUninit<u64>>),
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

    /// A `#[repr(C)]` parameter struct by value (one kernel parameter of
    /// `size_of::<P>()` bytes); what [`TypedKernel::launch`] passes.
    pub fn params<P: KernelParams>(&mut self, params: &P) -> &mut Self {
        self.vals.push(ArgVal::Struct(struct_words(params)));
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
                ArgVal::Struct(words) => words.as_mut_ptr() as *mut c_void,
            })
            .collect()
    }
}

/// The bytes of `params` (padding included) in 8-byte-aligned words.
fn struct_words<P: KernelParams>(params: &P) -> Vec<MaybeUninit<u64>> {
    let words = std::mem::size_of::<P>().div_ceil(8);
    let mut buf: Vec<MaybeUninit<u64>> = vec![MaybeUninit::uninit(); words];
    // SAFETY: `buf` holds at least size_of::<P>() bytes, is 8-aligned (enough
    // for every KernelParams field) and does not overlap `params`; the bytes
    // are only read by the driver (or as a `P`), never as `u64`s.
    unsafe {
        std::ptr::copy_nonoverlapping(
            params as *const P as *const u8,
            buf.as_mut_ptr() as *mut u8,
            std::mem::size_of::<P>(),
        )
    };
    buf
}

/// `include_str!` of a PTX module that `baton_build::KernelCrate::build`
/// wrote to this crate's `OUT_DIR`: `include_ptx!("lib_name", "sm90a")`
/// (or `"sm90a_debug"`, `"sm100a"`) is
/// `include_str!(concat!(env!("OUT_DIR"), "/lib_name_sm90a.ptx"))`.
///
/// ```ignore
/// static PTX: &str = baton_runtime::include_ptx!("my_kernel", "sm90a");
/// ```
#[macro_export]
macro_rules! include_ptx {
    ($name:literal, $suffix:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/", $name, "_", $suffix, ".ptx"))
    };
}

/// A launch grid in blocks; from a `u32` (x) or an `(x, y, z)` tuple.
///
/// ```
/// use baton_runtime::Grid;
/// assert_eq!(Grid::from(132), Grid { x: 132, y: 1, z: 1 });
/// assert_eq!(Grid::from((4, 2, 1)).blocks(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Blocks along x.
    pub x: u32,
    /// Blocks along y.
    pub y: u32,
    /// Blocks along z.
    pub z: u32,
}

impl Grid {
    /// Blocks in all.
    pub const fn blocks(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Grid {
    fn from(x: u32) -> Self {
        Grid { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Grid {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Grid { x, y, z }
    }
}

/// The launch configuration `spec` gives a grid: block `(threads, 1, 1)`,
/// the spec's cluster (none when it is `[1, 1, 1]`) and dynamic shared
/// memory.
///
/// ```
/// use baton::kernel::{KernelParams, KernelSpec};
/// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u64 }
/// # unsafe impl KernelParams for P {}
/// const SPEC: KernelSpec<P> = KernelSpec::new("k", 384).with_cluster([2, 1, 1]).with_dynamic_smem_bytes(4096);
/// let cfg = baton_runtime::launch_config(&SPEC, 132);
/// assert_eq!(cfg.block, (384, 1, 1));
/// assert_eq!(cfg.cluster, Some((2, 1, 1)));
/// assert_eq!((cfg.grid, cfg.dynamic_smem_bytes), ((132, 1, 1), 4096));
/// ```
pub fn launch_config<P>(spec: &KernelSpec<P>, grid: impl Into<Grid>) -> LaunchConfig {
    let g = grid.into();
    let [cx, cy, cz] = spec.cluster;
    LaunchConfig {
        grid: (g.x, g.y, g.z),
        block: (spec.threads, 1, 1),
        cluster: (spec.cluster_size() > 1).then_some((cx, cy, cz)),
        dynamic_smem_bytes: spec.dynamic_smem_bytes,
        programmatic: false,
    }
}

/// What a module says one entry was compiled for: the `// baton-spec:` line
/// `baton-build` writes in place of the spec record `baton::kernel!` emits.
/// `dynamic_smem_bytes` is `size_of` the kernel's shared layout *on the
/// device* (barrier cells are smaller there than their host simulation), so
/// launches use it.
///
/// ```
/// let ptx = "// baton-spec: k threads=128 cluster=2,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=4096 hot=1 param_bytes=24\n";
/// let s = &baton_runtime::device_specs(ptx)[0];
/// assert_eq!((s.name.as_str(), s.threads, s.cluster, s.dynamic_smem_bytes, s.param_bytes), ("k", 128, [2, 1, 1], 4096, 24));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSpec {
    /// The entry.
    pub name: String,
    /// Threads per block (`.maxntid`).
    pub threads: u32,
    /// Blocks per cluster.
    pub cluster: [u32; 3],
    /// `.minnctapersm`.
    pub min_blocks_per_sm: u32,
    /// Dynamic shared memory per block, bytes (the device's `size_of`).
    pub dynamic_smem_bytes: u32,
    /// Held to no spills / no stack frame at build time.
    pub hot: bool,
    /// `size_of` the parameter struct on the device.
    pub param_bytes: u32,
}

/// The `// baton-spec:` lines of a module (malformed lines are skipped: the
/// entry then has no spec and [`Kernels::kernel`] says so).
pub fn device_specs(ptx: &str) -> Vec<DeviceSpec> {
    ptx.lines().filter_map(device_spec).collect()
}

fn device_spec(line: &str) -> Option<DeviceSpec> {
    let rest = line.trim().strip_prefix("// baton-spec: ")?;
    let mut words = rest.split_whitespace();
    let name = words.next()?.to_string();
    let mut s = DeviceSpec {
        name,
        threads: 0,
        cluster: [0; 3],
        min_blocks_per_sm: 0,
        dynamic_smem_bytes: 0,
        hot: false,
        param_bytes: 0,
    };
    let mut seen = 0;
    for w in words {
        let (k, v) = w.split_once('=')?;
        match k {
            "threads" => s.threads = v.parse().ok()?,
            "cluster" => {
                let mut it = v.split(',').map(|x| x.parse::<u32>());
                s.cluster = [it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?];
            }
            "min_blocks_per_sm" => s.min_blocks_per_sm = v.parse().ok()?,
            "dynamic_smem_bytes" => s.dynamic_smem_bytes = v.parse().ok()?,
            "hot" => s.hot = v == "1",
            "param_bytes" => s.param_bytes = v.parse().ok()?,
            _ => continue,
        }
        seen += 1;
    }
    (seen == 6).then_some(s)
}

/// Checks the host's `spec` (and `size_of::<P>()`) against what the module
/// was compiled with; the dynamic shared memory is the device's and not
/// compared (see [`DeviceSpec`]).
fn check_spec<P>(spec: &KernelSpec<P>, device: &DeviceSpec) -> Result<()> {
    let mismatch = |field, host: String, dev: String| {
        Err(Error::SpecMismatch {
            kernel: spec.name.to_string(),
            field,
            host,
            device: dev,
        })
    };
    if spec.threads != device.threads {
        return mismatch(
            "threads",
            spec.threads.to_string(),
            device.threads.to_string(),
        );
    }
    if spec.cluster != device.cluster {
        return mismatch(
            "cluster",
            format!("{:?}", spec.cluster),
            format!("{:?}", device.cluster),
        );
    }
    if spec.min_blocks_per_sm != device.min_blocks_per_sm {
        return mismatch(
            "min_blocks_per_sm",
            spec.min_blocks_per_sm.to_string(),
            device.min_blocks_per_sm.to_string(),
        );
    }
    let host_bytes = std::mem::size_of::<P>() as u32;
    if host_bytes != device.param_bytes {
        return mismatch(
            "param_bytes",
            host_bytes.to_string(),
            device.param_bytes.to_string(),
        );
    }
    Ok(())
}

/// A kernel looked up through its [`KernelSpec`]: launches take the
/// parameter struct the kernel was compiled against; the block and cluster
/// come from the spec and the dynamic shared memory from the module (the
/// device's `size_of` the kernel's shared layout).
///
/// ```no_run
/// use baton::kernel::{KernelParams, KernelSpec};
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// pub struct FillParams { pub out: *mut u32, pub n: u32, pub value: u32 }
/// // SAFETY: repr(C), a raw pointer and integers.
/// unsafe impl KernelParams for FillParams {}
/// pub const FILL: KernelSpec<FillParams> = KernelSpec::new("fill", 256);
///
/// # fn f(ptx: &str) -> baton_runtime::Result<()> {
/// use baton_runtime::cudarc::driver::DevicePtrMut;
/// let gpu = baton_runtime::Gpu::new(0)?;
/// let module = gpu.load_ptx(ptx, "my_kernels")?;
/// let fill = module.kernel(&FILL)?;
/// let mut out = gpu.stream().alloc_zeros::<u32>(1000)?;
/// let (ptr, _sync) = out.device_ptr_mut(gpu.stream());
/// let params = FillParams { out: ptr as *mut u32, n: 1000, value: 7 };
/// // SAFETY: `out` holds `n` words and outlives the launch (synchronized below).
/// unsafe { fill.launch(gpu.stream(), 1000u32.div_ceil(256), &params)? };
/// gpu.synchronize()?;
/// # Ok(()) }
/// ```
pub struct TypedKernel<P> {
    /// Shared with the module's other users ([`Kernels::shared`]).
    kernel: Arc<Kernel>,
    spec: KernelSpec<P>,
    device: DeviceSpec,
}

impl<P: KernelParams> TypedKernel<P> {
    /// The host's spec.
    pub fn spec(&self) -> &KernelSpec<P> {
        &self.spec
    }

    /// What the module says the entry was compiled for.
    pub fn device_spec(&self) -> &DeviceSpec {
        &self.device
    }

    /// Dynamic shared memory each launch gets (the device's `size_of` the
    /// kernel's shared layout).
    pub fn dynamic_smem_bytes(&self) -> u32 {
        self.device.dynamic_smem_bytes
    }

    /// The untyped kernel (attributes, occupancy).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The launch configuration of `grid`: block `(threads, 1, 1)`, the
    /// spec's cluster, the module's dynamic shared memory.
    pub fn launch_config(&self, grid: impl Into<Grid>) -> LaunchConfig {
        let mut cfg = launch_config(&self.spec, grid);
        cfg.dynamic_smem_bytes = self.device.dynamic_smem_bytes;
        cfg
    }

    /// Enqueues the kernel on `stream` over `grid` with `params`
    /// ([`TypedKernel::launch_config`]). Errors as [`Kernel::launch`]:
    /// [`Error::SmemTooLarge`] / [`Error::InvalidLaunch`] before anything is
    /// enqueued, [`Error::Launch`] when the driver refuses; faults surface at
    /// the next synchronization.
    ///
    /// # Safety
    /// Every pointer in `params` must be valid for what the kernel does with
    /// it over this grid, and stay valid until the kernel has finished;
    /// `stream` must belong to the context the module was loaded in.
    pub unsafe fn launch(
        &self,
        stream: &CudaStream,
        grid: impl Into<Grid>,
        params: &P,
    ) -> Result<()> {
        let cfg = self.launch_config(grid);
        let mut args = KernelArgs::new(stream);
        args.params(params);
        // SAFETY: one parameter of size_of::<P>() bytes is what the entry
        // takes (kernel! checks the type, baton-build the device size,
        // Kernels::kernel the host size); pointer validity is the caller's.
        unsafe { self.kernel.launch(&cfg, &mut args) }
    }

    /// Enqueues the kernel with an explicit configuration (e.g. a cluster
    /// size chosen per launch for a kernel whose spec has none): the block
    /// must be the spec's `(threads, 1, 1)` and the dynamic shared memory at
    /// least the module's, else [`Error::InvalidLaunch`]; otherwise as
    /// [`TypedKernel::launch`].
    ///
    /// # Safety
    /// As [`TypedKernel::launch`].
    pub unsafe fn launch_with(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        params: &P,
    ) -> Result<()> {
        let name = self.kernel.name();
        if cfg.block != (self.spec.threads, 1, 1) {
            return Err(Error::InvalidLaunch {
                kernel: name.to_string(),
                rule: LaunchRule::BlockNotSpec {
                    block: cfg.block,
                    threads: self.spec.threads,
                },
            });
        }
        if cfg.dynamic_smem_bytes < self.device.dynamic_smem_bytes {
            return Err(Error::InvalidLaunch {
                kernel: name.to_string(),
                rule: LaunchRule::SmemBelowLayout {
                    bytes: cfg.dynamic_smem_bytes,
                    needed: self.device.dynamic_smem_bytes,
                },
            });
        }
        let mut args = KernelArgs::new(stream);
        args.params(params);
        // SAFETY: as in `launch`; the block and shared memory were checked.
        unsafe { self.kernel.launch(cfg, &mut args) }
    }

    /// [`TypedKernel::launch`], then waits for `stream`; a fault while the
    /// kernel ran becomes [`Error::Launch`] naming it.
    ///
    /// # Safety
    /// As [`TypedKernel::launch`].
    pub unsafe fn launch_sync(
        &self,
        stream: &CudaStream,
        grid: impl Into<Grid>,
        params: &P,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.launch(stream, grid, params)? };
        stream.synchronize().map_err(|source| Error::Launch {
            kernel: self.kernel.name().to_string(),
            source,
        })
    }
}

impl Kernels {
    /// The kernel `spec` names, typed by its parameter struct. Errors:
    /// [`Error::UnknownKernel`] (no such entry), [`Error::NoKernelSpec`]
    /// (the module has no baton-spec line for it), [`Error::SpecMismatch`]
    /// (threads, cluster, launch bounds or `size_of::<P>()` differ from what
    /// the module was compiled with), [`Error::SmemTooLarge`] /
    /// [`Error::InvalidLaunch`] (the configuration does not fit this kernel
    /// on this device). The dynamic shared-memory attribute is raised at the
    /// first launch.
    ///
    /// ```no_run
    /// # use baton::kernel::{KernelParams, KernelSpec};
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u64 }
    /// # unsafe impl KernelParams for P {}
    /// # const SPEC: KernelSpec<P> = KernelSpec::new("k", 128);
    /// # fn f(module: &baton_runtime::Kernels) -> baton_runtime::Result<()> {
    /// let k = module.kernel(&SPEC)?;
    /// assert_eq!(k.spec().threads, 128);
    /// # Ok(()) }
    /// ```
    pub fn kernel<P: KernelParams>(&self, spec: &KernelSpec<P>) -> Result<TypedKernel<P>> {
        let kernel = self.shared(spec.name)?;
        let device = self
            .specs
            .iter()
            .find(|s| s.name == spec.name)
            .cloned()
            .ok_or_else(|| Error::NoKernelSpec {
                kernel: spec.name.to_string(),
                module: self.module_name().to_string(),
            })?;
        check_spec(spec, &device)?;
        let typed = TypedKernel {
            kernel,
            spec: *spec,
            device,
        };
        let [cx, cy, cz] = spec.cluster;
        typed
            .launch_config((cx, cy, cz))
            .validate(spec.name, &typed.kernel.limits())?;
        Ok(typed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Mixed {
        ptr: *const u8,
        a: u32,
        b: f32,
        c: u16,
    }
    // SAFETY: repr(C) of a raw pointer and numbers.
    unsafe impl KernelParams for Mixed {}

    #[test]
    fn params_are_copied_byte_for_byte_into_one_aligned_argument() {
        let seed = std::process::id();
        let p = Mixed {
            ptr: std::ptr::without_provenance(0xdead_0000 + seed as usize),
            a: seed.wrapping_mul(2_654_435_761),
            b: seed as f32 * 0.5,
            c: seed as u16,
        };
        let buf = struct_words(&p);
        assert_eq!(buf.len() * 8, std::mem::size_of::<Mixed>());
        // SAFETY: the first size_of::<Mixed>() bytes were written from `p`.
        let back: Mixed = unsafe { std::ptr::read(buf.as_ptr() as *const Mixed) };
        assert_eq!(back.ptr as usize, p.ptr as usize);
        assert_eq!(
            (back.a, back.b.to_bits(), back.c),
            (p.a, p.b.to_bits(), p.c)
        );
        assert_eq!(buf.as_ptr() as usize % 8, 0);
    }

    #[test]
    fn device_spec_lines_parse_and_are_checked_against_the_host_spec() {
        let line = "// baton-spec: k threads=128 cluster=2,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=4096 hot=0 param_bytes=24";
        let d = device_specs(&format!(".version 8.0\n{line}\n.visible .entry k(\n"));
        assert_eq!(d.len(), 1);
        const OK: KernelSpec<Mixed> = KernelSpec::new("k", 128).with_cluster([2, 1, 1]);
        check_spec(&OK, &d[0]).unwrap();
        let field = |r: Result<()>| match r {
            Err(Error::SpecMismatch { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(check_spec(
                &KernelSpec::<Mixed>::new("k", 64).with_cluster([2, 1, 1]),
                &d[0]
            )),
            "threads"
        );
        assert_eq!(
            field(check_spec(&KernelSpec::<Mixed>::new("k", 128), &d[0])),
            "cluster"
        );
        assert_eq!(
            field(check_spec(&OK.with_min_blocks_per_sm(2), &d[0])),
            "min_blocks_per_sm"
        );
        let mut other = d[0].clone();
        other.param_bytes = 32;
        assert_eq!(field(check_spec(&OK, &other)), "param_bytes");
        // Malformed or incomplete lines give no spec.
        assert!(device_specs("// baton-spec: k threads=x cluster=1,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=0 hot=0 param_bytes=8").is_empty());
        assert!(device_specs("// baton-spec: k threads=1").is_empty());
    }

    #[test]
    fn spec_gives_block_cluster_and_smem() {
        const S: KernelSpec<Mixed> = KernelSpec::new("k", 128).with_dynamic_smem_bytes(300_000);
        let cfg = launch_config(&S, (3, 2, 1));
        assert_eq!(
            (cfg.grid, cfg.block, cfg.cluster),
            ((3, 2, 1), (128, 1, 1), None)
        );
        let e = cfg.validate("k", &LaunchLimits::HOPPER).unwrap_err();
        assert!(
            matches!(
                e,
                Error::SmemTooLarge {
                    requested: 300_000,
                    ..
                }
            ),
            "{e:?}"
        );
        let c = launch_config(&S.with_cluster([2, 1, 1]), 3);
        assert_eq!(c.cluster, Some((2, 1, 1)));
        assert!(
            c.validate(
                "k",
                &LaunchLimits {
                    max_dynamic_smem_bytes: 300_000,
                    ..LaunchLimits::HOPPER
                }
            )
            .unwrap_err()
            .to_string()
            .contains("does not tile")
        );
    }

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
            programmatic: false,
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
