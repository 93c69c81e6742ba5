//! What the package keeps per CUDA device, made once on first use: the
//! device's primary context (the one torch uses), baton's kernels loaded
//! from the embedded PTX, the FP8 typed kernels with their resident work
//! units, looked up once, the FP8 tensor maps and the BF16 plans by
//! operand set, and the attention kernels.

use crate::map_cache::MapCache;
use crate::plan_cache::PlanCache;
use baton_kernels_abi::gemm_params::GemmFp8Params;
use baton_runtime::cudarc::driver::CudaContext;
use baton_runtime::gemm::fp8;
use baton_runtime::{Gpu, Kernels, Result, TypedKernel, Variant};
use std::sync::{Arc, Mutex, OnceLock};

/// Device ordinals the package keeps state for.
pub const MAX_DEVICES: usize = 64;

/// A typed kernel and its resident work units (SMs, or co-resident
/// clusters), or why it could not be had.
type KernelSlot<P> = OnceLock<std::result::Result<(TypedKernel<P>, u32), String>>;

/// The state of one device.
pub struct DeviceState {
    /// The device (its primary context: the one torch's CUDA tensors live in).
    pub gpu: Gpu,
    /// baton's kernels for this device's target, loaded once.
    pub kernels: Kernels,
    /// FP8 kernels by [`fp8::VARIANTS`] index, looked up on first use.
    fp8: [KernelSlot<GemmFp8Params>; fp8::VARIANTS.len()],
    /// Encoded tensor maps by operand set (host memory; FP8).
    pub maps: Mutex<MapCache>,
    /// BF16 plans by operand set and stream.
    pub plans: Mutex<PlanCache>,
    /// The attention kernels, loaded on first use.
    pub attention: OnceLock<std::result::Result<baton_attention::Attention, String>>,
}

static DEVICES: [OnceLock<std::result::Result<DeviceState, String>>; MAX_DEVICES] =
    [const { OnceLock::new() }; MAX_DEVICES];

/// Why a device's state could not be made (the runtime's error text: no
/// driver, no such device, not a GPU baton builds for, no PTX embedded).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DeviceError(pub String);

/// The state of device `ordinal`, made on the first call (loads the PTX:
/// the driver JIT-compiles it, about a second).
pub fn device(ordinal: usize) -> std::result::Result<&'static DeviceState, DeviceError> {
    let Some(slot) = DEVICES.get(ordinal) else {
        return Err(DeviceError(format!(
            "device {ordinal}: baton keeps state for device ordinals below {MAX_DEVICES}"
        )));
    };
    slot.get_or_init(|| DeviceState::open(ordinal).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| DeviceError(e.clone()))
}

impl DeviceState {
    fn open(ordinal: usize) -> Result<DeviceState> {
        let gpu = Gpu::new(ordinal)?;
        let kernels = gpu.load_kernels(Variant::Release)?;
        Ok(DeviceState {
            gpu,
            kernels,
            fp8: [const { OnceLock::new() }; fp8::VARIANTS.len()],
            maps: Mutex::new(MapCache::default()),
            plans: Mutex::new(PlanCache::default()),
            attention: OnceLock::new(),
        })
    }

    /// The primary context of this device.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.gpu.context()
    }

    /// The FP8 kernel named `name` (one of [`fp8::VARIANTS`]) and its
    /// resident work units.
    pub fn fp8_kernel(
        &self,
        name: &str,
    ) -> std::result::Result<&(TypedKernel<GemmFp8Params>, u32), DeviceError> {
        let i = fp8::VARIANTS
            .iter()
            .position(|v| *v == name)
            .unwrap_or_default();
        self.fp8[i]
            .get_or_init(|| {
                let spec = fp8::spec_of(name).ok_or(format!("{name}: not an FP8 kernel"))?;
                let k = self.kernels.kernel(spec).map_err(|e| e.to_string())?;
                let cluster = fp8::cluster_of(name);
                let slots = if cluster > 1 {
                    k.kernel()
                        .max_active_clusters((cluster, 1, 1), fp8::THREADS, k.dynamic_smem_bytes())
                        .map_err(|e| e.to_string())?
                        .max(1)
                } else {
                    self.gpu.sm_count()
                };
                Ok((k, slots))
            })
            .as_ref()
            .map_err(|e| DeviceError(e.clone()))
    }
}
