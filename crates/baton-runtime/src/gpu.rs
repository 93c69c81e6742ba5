//! Device, module and kernel handles over the CUDA driver API.

use crate::error::{Error, Result};
use crate::gemm::cost_model::{Machine, copy_bytes_per_s};
use crate::launch::{KernelArgs, LaunchConfig, LaunchLimits, PORTABLE_CLUSTER_SIZE};
use crate::ptx;
use crate::target::{REQUIRED_ARCH, Target, Variant};
use cudarc::driver::sys::{self, CUdevice_attribute, CUfunction_attribute, CUjit_option, CUresult};
use cudarc::driver::{CudaContext, CudaStream, DriverError};
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

fn check(r: CUresult) -> std::result::Result<(), DriverError> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(DriverError(r))
    }
}

/// One GPU baton builds for (Hopper, or Blackwell for the sm_100a kernels):
/// a cudarc context and the stream every launch and GEMM of this `Gpu` is
/// enqueued on — the device's default stream for [`Gpu::new`], or yours for
/// [`Gpu::from_stream`] / [`Gpu::with_stream`].
///
/// ```no_run
/// use baton_runtime::{Gpu, Variant};
/// let gpu = Gpu::new(0)?;
/// println!("{} ({} SMs)", gpu.name(), gpu.sm_count());
/// let kernels = gpu.load_kernels(Variant::Release)?;
/// let gemm = kernels.get("baton_gemm_bf16_128x256")?;
/// # Ok::<(), baton_runtime::Error>(())
/// ```
pub struct Gpu {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    arch: (u32, u32),
    target: Target,
    sm_count: u32,
    max_smem_optin: u32,
    max_threads_per_block: u32,
    driver_version: i32,
    dram_bytes_per_s: f64,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("arch", &self.arch)
            .field("sm_count", &self.sm_count)
            .field("dram_bytes_per_s", &self.dram_bytes_per_s)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// GPU 0 for a test, or `None` after printing `SKIPPED: no CUDA GPU
    /// (<reason>)` when this machine has none (CI) — see [`report_skip`]. Panics when a GPU is
    /// present but unusable: that is a failure, not a skip.
    ///
    /// ```
    /// if let Some(gpu) = baton_runtime::Gpu::for_test() {
    ///     println!("testing on {}", gpu.name());
    /// }
    /// ```
    ///
    /// The GPU must be a Hopper GPU ([`Target::Sm90a`]): every test written
    /// with `for_test` runs sm_90a kernels. On another supported GPU (a
    /// Blackwell B200) it prints `SKIPPED: needs sm_90a …` and returns
    /// `None`; tests of the sm_100a kernels use [`Gpu::for_test_on`].
    pub fn for_test() -> Option<Gpu> {
        Gpu::for_test_on(Target::Sm90a)
    }

    /// GPU 0 for a test of `target`'s kernels, or `None` after printing why
    /// not (`SKIPPED: no CUDA GPU …`, or `SKIPPED: needs sm_100a … this GPU
    /// is …`). Panics when a GPU is present but unusable.
    ///
    /// ```
    /// use baton_runtime::{Gpu, Target};
    /// if let Some(gpu) = Gpu::for_test_on(Target::Sm100a) {
    ///     assert_eq!(gpu.target(), Target::Sm100a);
    /// }
    /// ```
    pub fn for_test_on(target: Target) -> Option<Gpu> {
        let gpu = match Gpu::new(0) {
            Ok(g) => g,
            Err(e) if e.is_no_gpu() => {
                report_skip(&format!("no CUDA GPU ({e})"));
                return None;
            }
            Err(e @ Error::WrongArch { .. }) => {
                report_skip(&format!("needs {target}: {e}"));
                return None;
            }
            Err(e) => panic!("a GPU is present but unusable: {e}"),
        };
        if gpu.target() != target {
            report_skip(&format!(
                "needs {target}; this machine's GPU 0 is {} ({})",
                gpu.name(),
                gpu.target()
            ));
            return None;
        }
        Some(gpu)
    }

    /// Opens device `ordinal`.
    ///
    /// Errors: [`Error::NoDriver`] (no `libcuda`, or the driver failed to
    /// initialize), [`Error::NoDevice`] (no such ordinal), [`Error::WrongArch`]
    /// (not compute capability 9.0).
    pub fn new(ordinal: usize) -> Result<Gpu> {
        // SAFETY: only tries to dlopen the driver library.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver {
                detail:
                    "libcuda.so (the NVIDIA driver library) was not found by the dynamic loader"
                        .into(),
            });
        }
        if let Err(e) = cudarc::driver::result::init() {
            return Err(if e.0 == CUresult::CUDA_ERROR_NO_DEVICE {
                Error::NoDevice {
                    ordinal,
                    count: 0,
                    detail: crate::error::describe(&e),
                }
            } else {
                Error::NoDriver {
                    detail: format!("cuInit failed: {}", crate::error::describe(&e)),
                }
            });
        }
        let count = CudaContext::device_count()? as usize;
        if ordinal >= count {
            return Err(Error::NoDevice {
                ordinal,
                count,
                detail: "ordinal out of range".into(),
            });
        }
        let ctx = CudaContext::new(ordinal)?;
        let stream = ctx.default_stream();
        Gpu::open(ordinal, ctx, stream)
    }

    /// Wraps a stream of your own cudarc context: every launch and GEMM of
    /// the returned `Gpu` is enqueued on `stream` (its [`Gpu::stream`]), and
    /// buffers you allocated in that context can be passed to it directly.
    /// Use one `Gpu` per stream: `Gpu::from_stream` is cheap (a few
    /// attribute queries).
    ///
    /// Errors: [`Error::WrongArch`] (the context's device is not a GPU baton
    /// builds for), [`Error::Cuda`] (an attribute query failed).
    ///
    /// ```no_run
    /// use baton_runtime::{Gpu, Variant, cudarc::driver::CudaContext};
    /// let ctx = CudaContext::new(0)?;        // the application's context
    /// let stream = ctx.new_stream()?;        // ... and its stream
    /// let gpu = Gpu::from_stream(stream.clone())?;
    /// assert!(std::sync::Arc::ptr_eq(gpu.stream(), &stream));
    /// let kernels = gpu.load_kernels(Variant::Release)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Gpu> {
        let ctx = stream.context().clone();
        Gpu::open(ctx.ordinal(), ctx, stream)
    }

    /// The same GPU with launches enqueued on `stream`, a stream of this
    /// `Gpu`'s CUDA context (any `Arc<CudaContext>` of the same driver
    /// context). Errors: [`Error::ForeignStream`] for a stream of another
    /// context.
    ///
    /// ```no_run
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let side = gpu.with_stream(gpu.context().new_stream()?)?;
    /// assert!(std::sync::Arc::ptr_eq(side.context(), gpu.context()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_stream(&self, stream: Arc<CudaStream>) -> Result<Gpu> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::ForeignStream {
                ordinal: self.ordinal,
                stream_ordinal: stream.context().ordinal(),
            });
        }
        Ok(Gpu {
            stream,
            name: self.name.clone(),
            ctx: self.ctx.clone(),
            ..*self
        })
    }

    /// Reads the device's properties for a context and a stream of it.
    fn open(ordinal: usize, ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Gpu> {
        let (maj, min) = ctx.compute_capability()?;
        let name = ctx.name()?;
        let arch = (maj as u32, min as u32);
        let Some(target) = Target::of_compute_capability(arch) else {
            return Err(Error::WrongArch {
                ordinal,
                name,
                found: arch,
                required: REQUIRED_ARCH,
            });
        };
        let attr = |a: CUdevice_attribute| ctx.attribute(a).map(|v| v as u32);
        let sm_count = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let max_smem_optin =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let max_threads_per_block =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        // The cost model's DRAM rate for this device (the H100's when the
        // driver reports no memory clock or bus width).
        let dram_bytes_per_s = copy_bytes_per_s(
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        )
        .unwrap_or(Machine::H100_BF16.dram_bytes_per_s);
        let mut driver_version = 0;
        // SAFETY: writes one int.
        check(unsafe { sys::cuDriverGetVersion(&mut driver_version) })?;
        Ok(Gpu {
            ordinal,
            ctx,
            stream,
            name,
            arch,
            target,
            sm_count,
            max_smem_optin,
            max_threads_per_block,
            driver_version,
            dram_bytes_per_s,
        })
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
    /// Device name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Compute capability (9.0 or 10.0 for an opened `Gpu`: see [`Target`]).
    pub fn arch(&self) -> (u32, u32) {
        self.arch
    }
    /// Which kernel build this GPU runs.
    pub fn target(&self) -> Target {
        self.target
    }
    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }
    /// The DRAM bandwidth the GEMM cost model takes for this device, bytes
    /// per second: its peak (memory clock × bus width) times the share a
    /// copy reaches ([`copy_bytes_per_s`]); about 2.9e12 on an H100 SXM,
    /// 4.17e12 on an H200.
    ///
    /// ```no_run
    /// # use baton_runtime::Gpu;
    /// let gpu = Gpu::new(0)?;
    /// println!("{:.2} TB/s", gpu.dram_bytes_per_s() / 1e12);
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn dram_bytes_per_s(&self) -> f64 {
        self.dram_bytes_per_s
    }
    /// Most shared memory one block may opt in to, in bytes.
    pub fn max_smem_optin(&self) -> u32 {
        self.max_smem_optin
    }
    /// Driver API version, e.g. 13000 for CUDA 13.0.
    pub fn driver_version(&self) -> i32 {
        self.driver_version
    }
    /// The cudarc context (allocate and copy through it and [`Gpu::stream`]).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    /// The stream launches are enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    /// An empty parameter list for a launch on [`Gpu::stream`].
    pub fn args(&self) -> KernelArgs<'_> {
        KernelArgs::new(&self.stream)
    }
    /// Waits for all work on [`Gpu::stream`]; a kernel fault surfaces here.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// Loads the embedded PTX of `variant` for this GPU's [`Target`]
    /// (JIT-compiled by the driver): `baton_sm90a[_debug].ptx` on Hopper,
    /// `baton_sm100a.ptx` on Blackwell (release only: [`Error::NoBuild`]
    /// for the debug variant there).
    pub fn load_kernels(&self, variant: Variant) -> Result<Kernels> {
        match self.target {
            Target::Sm90a => self.load_ptx(ptx::get(variant)?, variant.module_name()),
            Target::Sm100a => {
                if variant != Variant::Release {
                    return Err(Error::NoBuild {
                        target: self.target,
                        variant,
                    });
                }
                let text = ptx::sm100a().ok_or(Error::NoBuild {
                    target: self.target,
                    variant,
                })?;
                self.load_ptx(text, "baton_sm100a")
            }
        }
    }

    /// Loads a PTX module from text; `module` names it in errors.
    /// Errors: [`Error::PtxRejected`] with the JIT compiler's log.
    pub fn load_ptx(&self, ptx_text: &str, module: &str) -> Result<Kernels> {
        self.ctx.bind_to_thread()?;
        let image = CString::new(ptx_text).map_err(|_| Error::PtxRejected {
            module: module.into(),
            log: "the PTX text contains a NUL byte".into(),
            source: DriverError(CUresult::CUDA_ERROR_INVALID_PTX),
        })?;
        const LOG: usize = 64 * 1024;
        let mut err_log = vec![0u8; LOG];
        let mut info_log = vec![0u8; LOG];
        let mut opts = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            CUjit_option::CU_JIT_LOG_VERBOSE,
        ];
        let mut vals: [*mut c_void; 5] = [
            err_log.as_mut_ptr() as *mut c_void,
            std::ptr::without_provenance_mut::<c_void>(LOG),
            info_log.as_mut_ptr() as *mut c_void,
            std::ptr::without_provenance_mut::<c_void>(LOG),
            std::ptr::without_provenance_mut::<c_void>(1),
        ];
        let mut module_handle: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the option arrays agree in length and types; the buffers
        // outlive the call; `image` is NUL-terminated.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module_handle,
                image.as_ptr() as *const c_void,
                opts.len() as u32,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        let text = |buf: &[u8]| {
            String::from_utf8_lossy(buf.split(|&b| b == 0).next().unwrap_or(&[])).into_owned()
        };
        if let Err(source) = check(r) {
            return Err(Error::PtxRejected {
                module: module.into(),
                log: text(&err_log),
                source,
            });
        }
        Ok(Kernels {
            module: Arc::new(Module {
                handle: module_handle,
                ctx: self.ctx.clone(),
            }),
            name: module.to_string(),
            entries: crate::ptx::entry_names(ptx_text),
            specs: crate::launch::device_specs(ptx_text),
            jit_log: text(&info_log),
            shared: Mutex::new(Vec::new()),
            max_smem_optin: self.max_smem_optin,
            max_threads_per_block: self.max_threads_per_block,
        })
    }
}

struct Module {
    handle: sys::CUmodule,
    ctx: Arc<CudaContext>,
}

// SAFETY: a CUmodule handle may be used from any thread with its context
// bound; Module only unloads it on drop.
unsafe impl Send for Module {}
// SAFETY: as above; no interior mutation through &Module.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the handle came from cuModuleLoadDataEx and is unloaded once.
            let _ = unsafe { sys::cuModuleUnload(self.handle) };
        }
    }
}

/// A loaded PTX module: kernel lookup by name.
pub struct Kernels {
    module: Arc<Module>,
    name: String,
    entries: Vec<String>,
    /// The `// baton-spec:` lines baton-build left in the PTX.
    pub(crate) specs: Vec<crate::launch::DeviceSpec>,
    jit_log: String,
    max_smem_optin: u32,
    max_threads_per_block: u32,
    /// The kernels looked up so far ([`Kernels::shared`]), so that a plan
    /// made per call repeats no driver lookup, attribute query or
    /// shared-memory attribute raise.
    shared: Mutex<Vec<Arc<Kernel>>>,
}

impl Kernels {
    /// The module's name (`baton_sm90a` or `baton_sm90a_debug` for the
    /// embedded ones).
    pub fn module_name(&self) -> &str {
        &self.name
    }
    /// Names of the module's kernels (`.entry` functions), in PTX order.
    pub fn names(&self) -> &[String] {
        &self.entries
    }
    /// The driver JIT compiler's info log from loading (registers etc.).
    pub fn jit_log(&self) -> &str {
        &self.jit_log
    }

    /// The kernel `name`, looked up once per module and shared afterwards
    /// (its attributes, the dynamic shared-memory attribute it raised and
    /// its occupancy answers with it). Errors as [`get`](Self::get).
    ///
    /// ```no_run
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// let a = kernels.shared("baton_gemm_bf16_128x256")?;
    /// let b = kernels.shared("baton_gemm_bf16_128x256")?;
    /// assert!(std::sync::Arc::ptr_eq(&a, &b));
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn shared(&self, name: &str) -> Result<Arc<Kernel>> {
        let mut cache = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = cache.iter().find(|k| k.name == name) {
            return Ok(k.clone());
        }
        let k = Arc::new(self.get(name)?);
        cache.push(k.clone());
        Ok(k)
    }

    /// The device address and size in bytes of the module's global
    /// variable `name` (`cuModuleGetGlobal`), or `None` when the module
    /// has none of that name (e.g. [`crate::trace`]'s array outside a
    /// traced build).
    ///
    /// ```no_run
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// assert!(kernels.global("no_such_global")?.is_none());
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn global(&self, name: &str) -> Result<Option<(sys::CUdeviceptr, usize)>> {
        let Ok(cname) = CString::new(name) else {
            return Ok(None);
        };
        self.module.ctx.bind_to_thread()?;
        let (mut ptr, mut bytes): (sys::CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid module handle, NUL-terminated name; writes two scalars.
        let r = unsafe {
            sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, self.module.handle, cname.as_ptr())
        };
        if r == CUresult::CUDA_ERROR_NOT_FOUND {
            return Ok(None);
        }
        check(r)?;
        Ok(Some((ptr, bytes)))
    }

    /// The kernel `name` (a fresh lookup: see [`shared`](Self::shared)).
    /// Errors: [`Error::UnknownKernel`] listing the module's kernels.
    pub fn get(&self, name: &str) -> Result<Kernel> {
        let unknown = || Error::UnknownKernel {
            name: name.into(),
            module: self.name.clone(),
            available: self.entries.clone(),
        };
        let cname = CString::new(name).map_err(|_| unknown())?;
        self.module.ctx.bind_to_thread()?;
        let mut func: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: valid module handle, NUL-terminated name.
        let r = unsafe { sys::cuModuleGetFunction(&mut func, self.module.handle, cname.as_ptr()) };
        if r == CUresult::CUDA_ERROR_NOT_FOUND {
            return Err(unknown());
        }
        check(r)?;
        let attr = |a: CUfunction_attribute| -> Result<u32> {
            let mut v = 0;
            // SAFETY: valid function handle; writes one int.
            check(unsafe { sys::cuFuncGetAttribute(&mut v, a, func) })?;
            Ok(v as u32)
        };
        let attrs = KernelAttrs {
            registers: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            static_smem_bytes: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            local_bytes: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            max_threads_per_block: attr(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )?
            .min(self.max_threads_per_block),
        };
        Ok(Kernel {
            module: self.module.clone(),
            func,
            name: name.to_string(),
            attrs,
            limits: LaunchLimits {
                max_threads_per_block: attrs.max_threads_per_block,
                max_dynamic_smem_bytes: self.max_smem_optin.saturating_sub(attrs.static_smem_bytes),
                max_cluster_size: 16,
            },
            dyn_smem_set: AtomicU32::new(0),
            non_portable_set: AtomicU32::new(0),
            occupancy: Mutex::new(Vec::new()),
        })
    }
}

/// What the driver reports about a compiled kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelAttrs {
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory, bytes.
    pub static_smem_bytes: u32,
    /// Local memory (stack, spills) per thread, bytes.
    pub local_bytes: u32,
    /// Most threads per block this kernel can be launched with.
    pub max_threads_per_block: u32,
}

/// One kernel of a loaded module.
pub struct Kernel {
    module: Arc<Module>,
    func: sys::CUfunction,
    name: String,
    attrs: KernelAttrs,
    limits: LaunchLimits,
    dyn_smem_set: AtomicU32,
    non_portable_set: AtomicU32,
    /// Answers of [`Kernel::max_active_clusters`]: (cluster, threads,
    /// dynamic shared memory) → clusters.
    occupancy: Mutex<Vec<(OccupancyKey, u32)>>,
}

/// The arguments of one occupancy query.
type OccupancyKey = ((u32, u32, u32), u32, u32);

// SAFETY: CUfunction handles are usable from any thread with the context
// bound (launch binds it); the atomics guard the cached attribute values.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Registers, shared and local memory as compiled by the driver.
    pub fn attrs(&self) -> KernelAttrs {
        self.attrs
    }
    /// The limits [`Kernel::launch`] checks a configuration against.
    pub fn limits(&self) -> LaunchLimits {
        self.limits
    }

    /// Enqueues the kernel on the stream `args` was made for, through
    /// `cuLaunchKernelEx` (with the cluster-dimension attribute when
    /// `cfg.cluster` is set, the programmatic-stream-serialization one when
    /// `cfg.programmatic` is), after raising the kernel's dynamic shared
    /// memory limit to `cfg.dynamic_smem_bytes`.
    ///
    /// Errors: [`Error::SmemTooLarge`] and [`Error::InvalidLaunch`] before
    /// anything is enqueued; [`Error::Launch`] when the driver refuses.
    /// Faults while the kernel runs surface at the next synchronization.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and
    /// types, and the buffers must be large enough for what the kernel
    /// accesses with this configuration.
    pub unsafe fn launch(&self, cfg: &LaunchConfig, args: &mut KernelArgs<'_>) -> Result<()> {
        cfg.validate(&self.name, &self.limits)?;
        let launch_err = |source| Error::Launch {
            kernel: self.name.clone(),
            source,
        };
        self.module.ctx.bind_to_thread()?;
        if self.dyn_smem_set.load(Ordering::Relaxed) < cfg.dynamic_smem_bytes {
            // SAFETY: valid function handle; the value passed validation.
            check(unsafe {
                sys::cuFuncSetAttribute(
                    self.func,
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    cfg.dynamic_smem_bytes as i32,
                )
            })
            .map_err(launch_err)?;
            self.dyn_smem_set
                .fetch_max(cfg.dynamic_smem_bytes, Ordering::Relaxed);
        }
        let mut attrs: Vec<sys::CUlaunchAttribute> = Vec::new();
        if let Some((x, y, z)) = cfg.cluster {
            if cfg.cluster_size() > PORTABLE_CLUSTER_SIZE as u64
                && self.non_portable_set.load(Ordering::Relaxed) == 0
            {
                // SAFETY: valid function handle.
                check(unsafe {
                    sys::cuFuncSetAttribute(
                        self.func,
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                        1,
                    )
                })
                .map_err(launch_err)?;
                self.non_portable_set.store(1, Ordering::Relaxed);
            }
            // SAFETY: an all-zero launch attribute is a valid bit pattern.
            let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            a.value.clusterDim.x = x;
            a.value.clusterDim.y = y;
            a.value.clusterDim.z = z;
            attrs.push(a);
        }
        if cfg.programmatic {
            // SAFETY: an all-zero launch attribute is a valid bit pattern.
            let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            a.value.programmaticStreamSerializationAllowed = 1;
            attrs.push(a);
        }
        let mut params = args.param_ptrs();
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid.0,
            gridDimY: cfg.grid.1,
            gridDimZ: cfg.grid.2,
            blockDimX: cfg.block.0,
            blockDimY: cfg.block.1,
            blockDimZ: cfg.block.2,
            sharedMemBytes: cfg.dynamic_smem_bytes,
            hStream: args.stream().cu_stream(),
            attrs: if attrs.is_empty() {
                std::ptr::null_mut()
            } else {
                attrs.as_mut_ptr()
            },
            numAttrs: attrs.len() as u32,
        };
        // SAFETY: config and params live across the call; the caller
        // guarantees the parameters match the kernel.
        check(unsafe {
            sys::cuLaunchKernelEx(
                &config,
                self.func,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
        .map_err(launch_err)
    }

    /// How many clusters of `cluster` CTAs (with `dynamic_smem_bytes` and
    /// `threads` per CTA) can be resident on the GPU at once
    /// (`cuOccupancyMaxActiveClusters`). A persistent kernel must not launch
    /// more: clusters beyond this wait for whole clusters to finish, which
    /// doubles the run time. Not every GPC holds an even number of free SMs,
    /// so this can be below `SMs / cluster`.
    pub fn max_active_clusters(
        &self,
        cluster: (u32, u32, u32),
        threads: u32,
        dynamic_smem_bytes: u32,
    ) -> Result<u32> {
        let key = (cluster, threads, dynamic_smem_bytes);
        let known = |o: &Mutex<Vec<(OccupancyKey, u32)>>| {
            let o = o.lock().unwrap_or_else(|e| e.into_inner());
            o.iter().find(|(k, _)| *k == key).map(|(_, n)| *n)
        };
        if let Some(n) = known(&self.occupancy) {
            return Ok(n);
        }
        let launch_err = |source| Error::Launch {
            kernel: self.name.clone(),
            source,
        };
        self.module.ctx.bind_to_thread()?;
        if self.dyn_smem_set.load(Ordering::Relaxed) < dynamic_smem_bytes {
            // SAFETY: valid function handle.
            check(unsafe {
                sys::cuFuncSetAttribute(
                    self.func,
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic_smem_bytes as i32,
                )
            })
            .map_err(launch_err)?;
            self.dyn_smem_set
                .fetch_max(dynamic_smem_bytes, Ordering::Relaxed);
        }
        // SAFETY: an all-zero launch attribute is a valid bit pattern.
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a.value.clusterDim.x = cluster.0;
        a.value.clusterDim.y = cluster.1;
        a.value.clusterDim.z = cluster.2;
        let size = cluster.0 * cluster.1 * cluster.2;
        let config = sys::CUlaunchConfig {
            gridDimX: size,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: dynamic_smem_bytes,
            hStream: std::ptr::null_mut(),
            attrs: &mut a,
            numAttrs: 1,
        };
        let mut n: std::ffi::c_int = 0;
        // SAFETY: valid function and config; `n` is an out-pointer.
        check(unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, self.func, &config) })
            .map_err(launch_err)?;
        let n = n.max(0) as u32;
        self.occupancy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, n));
        Ok(n)
    }

    /// [`Kernel::launch`], then waits for the stream; a fault while the
    /// kernel ran becomes [`Error::Launch`] naming this kernel.
    ///
    /// # Safety
    /// As [`Kernel::launch`].
    pub unsafe fn launch_sync(&self, cfg: &LaunchConfig, args: &mut KernelArgs<'_>) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.launch(cfg, args)? };
        args.stream().synchronize().map_err(|source| Error::Launch {
            kernel: self.name.clone(),
            source,
        })
    }
}

/// Prints `SKIPPED: <reason>` for a test that cannot run here, straight to
/// the process's stderr: the test harness captures `println!` of passing
/// tests, and a skip must show in the CI log, never pass silently.
pub fn report_skip(reason: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
}
