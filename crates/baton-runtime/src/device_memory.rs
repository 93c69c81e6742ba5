//! Device buffers the runtime allocates for itself (a stream-K workspace),
//! with running out of GPU memory as [`Error::OutOfDeviceMemory`] — what
//! the buffer was for, its size, and the free and total memory — instead of
//! a bare driver code; and whether two device byte ranges overlap.

use crate::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

/// `len` zeroed elements on the GPU's stream; `what` names the buffer in
/// the out-of-memory error. Other driver errors pass through as
/// [`Error::Cuda`].
pub(crate) fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    what: &'static str,
    len: usize,
) -> Result<CudaSlice<T>> {
    gpu.stream().alloc_zeros::<T>(len).map_err(|e| {
        if e.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return Error::Cuda(e);
        }
        let (free, total) = gpu.context().mem_get_info().unwrap_or((0, 0));
        Error::OutOfDeviceMemory {
            what,
            bytes: (len * std::mem::size_of::<T>()) as u64,
            free: free as u64,
            total: total as u64,
        }
    })
}

/// Whether the byte ranges `[a, a + a_bytes)` and `[b, b + b_bytes)` meet
/// (ends saturate at `u64::MAX`, so no address overflows).
pub(crate) fn ranges_overlap(a: u64, a_bytes: u64, b: u64, b_bytes: u64) -> bool {
    a < b.saturating_add(b_bytes) && b < a.saturating_add(a_bytes)
}
