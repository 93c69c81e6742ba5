//! The device-to-device copy bandwidth a GEMM's achieved GB/s is compared
//! with (`baton bench gemm --sweep`): `cuMemcpyDtoDAsync` of one buffer into
//! another, timed like every benchmark ([`crate::timing`]).

use crate::Result;
use crate::timing::{QueuedTimer, median};
use baton_runtime::Gpu;

/// GB/s (10⁹ bytes read + written per second) of a device-to-device copy of
/// `bytes` bytes: the median of `reps` copies queued back to back after 3
/// warm-up copies.
///
/// ```no_run
/// let gpu = baton_runtime::Gpu::new(0)?;
/// let gbps = baton_reference::copy_bandwidth::device_copy_gbps(&gpu, 1 << 30, 20)?;
/// assert!(gbps > 0.0);
/// # Ok::<(), baton_reference::Error>(())
/// ```
pub fn device_copy_gbps(gpu: &Gpu, bytes: usize, reps: usize) -> Result<f64> {
    let stream = gpu.stream();
    let src = stream.alloc_zeros::<u8>(bytes)?;
    let mut dst = stream.alloc_zeros::<u8>(bytes)?;
    let mut timer = QueuedTimer::<1>::new();
    for _ in 0..reps.max(1) + 3 {
        timer.time(gpu, 0, || stream.memcpy_dtod(&src, &mut dst))?;
    }
    let [ms] = timer.finish(gpu, 3)?;
    Ok(gbps(2 * bytes, median(ms)))
}

/// GB/s of `bytes` moved in `ms` milliseconds (10⁹ bytes per second).
///
/// ```
/// assert_eq!(baton_reference::copy_bandwidth::gbps(2_000_000_000, 1.0), 2000.0);
/// ```
pub fn gbps(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}
