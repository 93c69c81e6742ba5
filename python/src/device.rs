//! What the package keeps per CUDA device, made once on first use: the
//! device's primary context (the one torch uses), baton's kernels loaded
//! from the embedded PTX, the BF16 and FP8 plans by operand set and
//! stream, and the attention kernels.

use crate::plan_cache::PlanCache;
use baton_runtime::cudarc::driver::CudaContext;
use baton_runtime::gemm::GemmPlan;
use baton_runtime::gemm::fp8::Fp8GemmPlan;
use baton_runtime::{Gpu, Kernels, Result, Variant};
use std::sync::{Arc, Mutex, OnceLock};

/// Device ordinals the package keeps state for.
pub const MAX_DEVICES: usize = 64;

/// The state of one device.
pub struct DeviceState {
    /// The device (its primary context: the one torch's CUDA tensors live in).
    pub gpu: Gpu,
    /// baton's kernels for this device's target, loaded once.
    pub kernels: Kernels,
    /// BF16 plans by operand set and stream.
    pub plans: Mutex<PlanCache<GemmPlan<'static>>>,
    /// FP8 plans by operand set and stream.
    pub fp8_plans: Mutex<PlanCache<Fp8GemmPlan<'static>>>,
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
            plans: Mutex::new(PlanCache::default()),
            fp8_plans: Mutex::new(PlanCache::default()),
            attention: OnceLock::new(),
        })
    }

    /// The primary context of this device.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.gpu.context()
    }
}
