//! The runtime's typed errors.

pub mod copy;
pub mod gemm;
pub mod launch;
pub mod matrix;

pub use copy::PitchedCopyError;
pub use gemm::{Fp8ShapeError, GemmError, GemmShapeError};
pub use launch::LaunchRule;
pub use matrix::MatrixError;

use crate::block_scaled::BlockScaledError;
use crate::target::{Target, Variant};
use baton::tensor_map::TensorMapDesc;
use cudarc::driver::DriverError;

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between "is there a GPU?" and "the kernel
/// ran". Each message says what is wrong and what is allowed or what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so`) is missing or unusable.
    #[error(
        "no usable CUDA driver: {detail}. baton needs the NVIDIA driver (libcuda.so) to run kernels; \
         on a machine without a GPU the GPU tests skip themselves and `baton demo` runs the CPU backend"
    )]
    NoDriver {
        /// What the driver said, or which library was not found.
        detail: String,
    },
    /// The driver loaded but there is no device with this ordinal.
    #[error(
        "no CUDA device with ordinal {ordinal}: {detail} ({count} device(s) visible; valid ordinals are 0..{count})"
    )]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
        /// The driver's explanation.
        detail: String,
    },
    /// The device is neither a Hopper GPU (sm_90a code runs only on
    /// compute capability 9.0) nor a Blackwell B200/GB200 (sm_100a: 10.0).
    #[error(
        "GPU {ordinal} ({name}) has compute capability {}.{}; baton's kernels are built for sm_90a \
         and run only on compute capability {}.{} (H100, H200, GH200), or for sm_100a on compute \
         capability 10.0 (B200, GB200)",
        found.0, found.1, required.0, required.1
    )]
    WrongArch {
        /// The ordinal.
        ordinal: usize,
        /// The device name.
        name: String,
        /// Its compute capability.
        found: (u32, u32),
        /// The one the kernels need.
        required: (u32, u32),
    },
    /// This binary was built without the PTX for `variant`.
    #[error(
        "the {variant} PTX is not in this binary (its build: {built}). \
         Build baton-runtime with its default `gemm-kernels` feature and the device toolchain \
         (tools/install-device-toolchain.sh), or rebuild with BATON_PTX_DIR=<dir> holding \
         baton_sm90a.ptx and baton_sm90a_debug.ptx (tools/build-ptx.sh --out-dir <dir> makes them)"
    )]
    PtxNotBuilt {
        /// Which build was asked for.
        variant: Variant,
        /// How the PTX build went (e.g. [`ptx::SOURCE`](crate::ptx::SOURCE)): the
        /// toolchain missing, `BATON_SKIP_PTX`, or the feature off.
        built: &'static str,
    },
    /// This binary has no `variant` build of the kernels for `target` (the
    /// sm_100a PTX is built in release only, and only when the device
    /// toolchain was present at build time).
    #[error(
        "no {variant} build of the kernels for {target} in this binary: the sm_100a PTX \
         (baton_sm100a.ptx, built by baton-build) exists in release only and is embedded only when \
         the device toolchain (tools/install-device-toolchain.sh) was present when baton-runtime was built"
    )]
    NoBuild {
        /// The GPU's target.
        target: Target,
        /// Which build was asked for.
        variant: Variant,
    },
    /// A stream of another context was given to [`Gpu::with_stream`](crate::Gpu::with_stream).
    #[error(
        "the stream belongs to another CUDA context (device {stream_ordinal}) than GPU {ordinal}'s; \
         use Gpu::from_stream for a stream of your own context"
    )]
    ForeignStream {
        /// The `Gpu`'s device ordinal.
        ordinal: usize,
        /// The device ordinal of the stream's context.
        stream_ordinal: usize,
    },
    /// The driver's JIT compiler rejected the PTX module.
    #[error(
        "the CUDA driver rejected the {module} PTX module ({}); JIT error log:\n{log}",
        describe(source)
    )]
    PtxRejected {
        /// Which module.
        module: String,
        /// The JIT compiler's error log (may be empty).
        log: String,
        /// The driver's error code.
        source: DriverError,
    },
    /// No kernel of that name in the loaded module.
    #[error(
        "no kernel named `{name}` in the {module} module; kernels there: {}",
        if available.is_empty() { "(none)".to_string() } else { available.join(", ") }
    )]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// Which module.
        module: String,
        /// The module's kernel names.
        available: Vec<String>,
    },
    /// A launch asked for more dynamic shared memory than the device gives
    /// one block of this kernel.
    #[error(
        "kernel `{kernel}` asks for {requested} bytes of dynamic shared memory, but this GPU allows at most \
         {max} bytes per block for it (opt-in limit minus the kernel's static shared memory); \
         use fewer pipeline stages or smaller tiles"
    )]
    SmemTooLarge {
        /// The kernel.
        kernel: String,
        /// Bytes asked for.
        requested: u32,
        /// Bytes allowed.
        max: u32,
    },
    /// A launch configuration the hardware cannot run (zero dimensions, too
    /// many threads, a cluster that does not tile the grid, …).
    #[error("invalid launch configuration for kernel `{kernel}`: {rule}")]
    InvalidLaunch {
        /// The kernel.
        kernel: String,
        /// The rule broken, with the values that broke it.
        rule: LaunchRule,
    },
    /// The module has the entry but no `// baton-spec:` line for it: it was
    /// not declared with `baton::kernel!` or not built through `baton-build`.
    #[error(
        "kernel `{kernel}` in the {module} module has no baton-spec record: declare it with \
         baton::kernel! and build the module with baton-build"
    )]
    NoKernelSpec {
        /// The kernel.
        kernel: String,
        /// Which module.
        module: String,
    },
    /// The host's `KernelSpec` (or its parameter struct) differs from the one
    /// the module was compiled with: host and device were built from
    /// different sources.
    #[error(
        "kernel `{kernel}`: host spec says {field} = {host}, the module was built with {device}; \
         rebuild so host and kernels use the same KernelSpec and parameter struct"
    )]
    SpecMismatch {
        /// The kernel.
        kernel: String,
        /// Which value differs (`threads`, `cluster`, `min_blocks_per_sm`, `param_bytes`).
        field: &'static str,
        /// The host's value.
        host: String,
        /// The module's value.
        device: String,
    },
    /// The driver refused the launch, or the kernel faulted while running
    /// (trap, illegal address; the context is then unusable).
    #[error("kernel `{kernel}` failed: {}", describe(source))]
    Launch {
        /// The kernel.
        kernel: String,
        /// The driver's error code.
        source: DriverError,
    },
    /// Any other failed driver call.
    #[error("CUDA driver call failed: {}", describe(.0))]
    Cuda(#[from] DriverError),
    /// A BF16 (or block-scaled) GEMM problem refused before launch: what is
    /// wrong with the shape or buffer lengths, and what is allowed.
    #[error("GEMM: {0}")]
    GemmShape(#[from] GemmShapeError),
    /// A blockwise FP8 GEMM problem refused before launch.
    #[error("FP8 GEMM: {0}")]
    Fp8Shape(#[from] Fp8ShapeError),
    /// A GEMM call refused for another reason (wrong GPU, overlapping
    /// operands, stream-K on a kernel without it).
    #[error("GEMM: {0}")]
    Gemm(#[from] GemmError),
    /// A matrix view, or a combination of views in a GEMM, refused before
    /// launch: the rule and what is allowed.
    #[error("GEMM operand: {0}")]
    Matrix(#[from] MatrixError),
    /// A block-scaled operand that cannot be quantized, mapped or
    /// multiplied (shape, scale range, tile).
    #[error("block-scaled operand: {0}")]
    BlockScaled(#[from] BlockScaledError),
    /// A pitched copy ([`crate::pitched_copy`]) refused before launch.
    #[error("pitched copy: {0}")]
    PitchedCopy(#[from] PitchedCopyError),
    /// A TMA tensor-map description that `cuTensorMapEncodeTiled` would
    /// refuse, caught by `TensorMapDesc::validate` before the driver call.
    #[error("invalid TMA tensor map: {0}")]
    TensorMap(#[from] baton::tensor_map::TensorMapError),
    /// The driver refused to encode a tensor map that passed validation.
    #[error(
        "cuTensorMapEncodeTiled refused {}{}: {}",
        describe_tensor_map(desc),
        if *no_current_context {
            " (no CUDA context is current on this thread: open a `Gpu` first, or bind its context)"
        } else {
            ""
        },
        describe(source)
    )]
    TensorMapEncode {
        /// The description the driver refused.
        desc: TensorMapDesc,
        /// Whether no CUDA context was current on the calling thread (a
        /// likely cause).
        no_current_context: bool,
        /// The driver's error code.
        source: DriverError,
    },
    /// The GPU had too little free memory for a buffer the runtime
    /// allocates itself (a stream-K workspace, say). Nothing was launched
    /// and the context is still usable: free memory and call again.
    #[error(
        "out of GPU memory: the {what} needs {bytes} bytes, but only {free} of the GPU's {total} bytes \
         are free; free device memory first, or do without it (stream-K off needs no workspace)"
    )]
    OutOfDeviceMemory {
        /// What the allocation was for.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
        /// Free device memory when the allocation failed (`cuMemGetInfo`;
        /// 0 when even that call failed).
        free: u64,
        /// The GPU's total memory (0 when unknown).
        total: u64,
    },
}

/// `CUDA_ERROR_X: description` for a driver error code. The description
/// comes from the driver when it is loadable; the name never needs it.
pub fn describe(e: &DriverError) -> String {
    static DRIVER_PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: only tries to dlopen the driver library.
    let present =
        *DRIVER_PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() });
    let name = format!("{:?}", e.0);
    match present.then(|| e.error_string()) {
        Some(Ok(text)) => format!("{name}: {}", text.to_string_lossy()),
        _ => name,
    }
}

/// `rank-D dtype tensor [d0, d1, …] at base, box [b0, b1, …], swizzle` for
/// error messages.
fn describe_tensor_map(d: &TensorMapDesc) -> String {
    let r = (d.rank as usize).min(d.dims.len());
    format!(
        "a rank-{} {:?} tensor of dims {:?} (innermost first), byte strides {:?}, at {:#x}, box {:?}, swizzle {:?}",
        d.rank,
        d.dtype,
        &d.dims[..r],
        &d.strides_bytes[..r.saturating_sub(1)],
        d.base,
        &d.box_dims[..r],
        d.swizzle
    )
}

impl Error {
    /// True for the errors that mean "this machine has no usable CUDA GPU"
    /// ([`Error::NoDriver`], [`Error::NoDevice`]): GPU tests skip on these.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver { .. } | Error::NoDevice { .. })
    }

    /// True when the error means a kernel faulted while it ran (a trap,
    /// such as the debug build's bounded `mbarrier` wait, an illegal or
    /// misaligned address, an illegal instruction, a device assert): the
    /// CUDA context is then unusable. Every later call on it — work queued
    /// on its streams before or after the fault, copies, synchronizations —
    /// fails too, and no result read from it may be trusted. Only a new
    /// process gets a working context on that GPU again.
    ///
    /// ```
    /// use baton_runtime::Error;
    /// use baton_runtime::cudarc::driver::{DriverError, sys::CUresult};
    /// let trapped = Error::Launch {
    ///     kernel: "baton_pipeline_hang".into(),
    ///     source: DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED),
    /// };
    /// assert!(trapped.is_context_fatal());
    /// let oom = Error::Cuda(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
    /// assert!(!oom.is_context_fatal()); // the context is still fine
    /// ```
    pub fn is_context_fatal(&self) -> bool {
        use cudarc::driver::sys::CUresult as R;
        let code = match self {
            Error::Launch { source, .. } | Error::Cuda(source) => source.0,
            _ => return false,
        };
        matches!(
            code,
            R::CUDA_ERROR_LAUNCH_FAILED
                | R::CUDA_ERROR_ILLEGAL_ADDRESS
                | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
                | R::CUDA_ERROR_MISALIGNED_ADDRESS
                | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
                | R::CUDA_ERROR_INVALID_PC
                | R::CUDA_ERROR_HARDWARE_STACK_ERROR
                | R::CUDA_ERROR_ASSERT
                | R::CUDA_ERROR_LAUNCH_TIMEOUT
                | R::CUDA_ERROR_ECC_UNCORRECTABLE
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Error;
    use cudarc::driver::DriverError;
    use cudarc::driver::sys::CUresult;

    #[test]
    fn faults_are_context_fatal_and_refusals_are_not() {
        for code in [
            CUresult::CUDA_ERROR_LAUNCH_FAILED,
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            CUresult::CUDA_ERROR_ASSERT,
        ] {
            assert!(
                Error::Cuda(DriverError(code)).is_context_fatal(),
                "{code:?}"
            );
            let launch = Error::Launch {
                kernel: "k".into(),
                source: DriverError(code),
            };
            assert!(launch.is_context_fatal(), "{code:?}");
        }
        for code in [
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            CUresult::CUDA_ERROR_INVALID_VALUE,
            CUresult::CUDA_ERROR_NOT_FOUND,
        ] {
            assert!(
                !Error::Cuda(DriverError(code)).is_context_fatal(),
                "{code:?}"
            );
        }
        let oom = Error::OutOfDeviceMemory {
            what: "stream-K workspace",
            bytes: 1 << 20,
            free: 0,
            total: 1 << 30,
        };
        assert!(!oom.is_context_fatal());
    }

    #[test]
    fn out_of_memory_names_the_buffer_and_both_sizes() {
        let e = Error::OutOfDeviceMemory {
            what: "stream-K workspace",
            bytes: 8_650_752,
            free: 1_048_576,
            total: 85_000_000_000,
        };
        let text = e.to_string();
        for part in ["stream-K workspace", "8650752", "1048576", "85000000000"] {
            assert!(text.contains(part), "{text}");
        }
    }
}
