//! `baton bench repack`: baton's pitched copy (`baton_pitched_copy`, what
//! a BF16 plan re-packs an operand with) against the driver's pitched copy
//! (`cuMemcpy2DAsync`, what plans used before) and a flat device-to-device
//! copy (`cuMemcpyDtoDAsync`) of the same payload bytes, in one process.
//!
//! Each is run `reps` times after 3 untimed runs, round-robin and queued
//! back to back ([`QueuedTimer`]); the median is reported as GB/s of
//! payload bytes read plus written (`2 · rows · row_bytes`; padding is
//! neither read nor written). Our copy's destination is then compared byte
//! for byte with the driver's.

use crate::commands::{Outcome, open_gpu_kernels};
use baton_reference::random::XorShift;
use baton_reference::timing::{QueuedTimer, median};
use baton_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, sys};
use baton_runtime::pitched_copy::{CopyKernel, PitchedCopy};
use baton_runtime::{Gpu, Variant};

/// Default rows: B of the 16384×4104×2056 GEMM.
pub const DEFAULT_ROWS: usize = 4104;
/// Default row length: K = 2056 bf16.
pub const DEFAULT_ROW_BYTES: usize = 4112;

/// The copy's geometry, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Rows.
    pub rows: usize,
    /// Payload bytes per row.
    pub row_bytes: usize,
    /// Source pitch.
    pub src_pitch: usize,
    /// Destination pitch.
    pub dst_pitch: usize,
}

impl Geometry {
    /// `rows` rows of `row_bytes`; the source pitch defaults to the row
    /// (packed, as a GEMM operand), the destination pitch to the row
    /// rounded up to 128 bytes (the re-packed stride).
    ///
    /// ```
    /// use baton_cli::repack_bench::Geometry;
    /// let g = Geometry::new(4104, 4112, None, None);
    /// assert_eq!((g.src_pitch, g.dst_pitch), (4112, 4224));
    /// assert_eq!(Geometry::new(8, 100, Some(102), Some(100)).dst_pitch, 100);
    /// ```
    pub fn new(
        rows: usize,
        row_bytes: usize,
        src_pitch: Option<usize>,
        dst_pitch: Option<usize>,
    ) -> Self {
        Self {
            rows,
            row_bytes,
            src_pitch: src_pitch.unwrap_or(row_bytes),
            dst_pitch: dst_pitch.unwrap_or(row_bytes.next_multiple_of(128)),
        }
    }

    /// Payload bytes read plus written.
    ///
    /// ```
    /// assert_eq!(baton_cli::repack_bench::Geometry::new(3, 100, None, None).bytes_moved(), 600);
    /// ```
    pub fn bytes_moved(&self) -> usize {
        2 * self.rows * self.row_bytes
    }

    /// Bytes of a buffer holding `rows` rows `pitch` apart (0 rows: 0).
    fn span(&self, pitch: usize) -> usize {
        self.rows.saturating_sub(1) * pitch + self.row_bytes * self.rows.min(1)
    }
}

/// One copy's timing.
#[derive(Clone, Debug)]
pub struct Timing {
    /// What ran.
    pub what: &'static str,
    /// Median µs.
    pub median_us: f64,
    /// Fastest µs.
    pub min_us: f64,
    /// GB/s (10⁹ bytes read + written per second) at the median.
    pub gbps: f64,
}

/// The three copies' names, in [`measure`]'s order.
pub const COPIES: [&str; 3] = [
    "baton_pitched_copy",
    "cuMemcpy2DAsync",
    "cuMemcpyDtoDAsync (flat)",
];

/// The driver's pitched device-to-device copy of `copy`.
///
/// # Safety
/// As [`CopyKernel::enqueue`].
unsafe fn driver_copy(
    stream: &baton_runtime::cudarc::driver::CudaStream,
    copy: &PitchedCopy,
) -> Result<(), baton_runtime::cudarc::driver::DriverError> {
    let desc = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: copy.src,
        srcArray: std::ptr::null_mut(),
        srcPitch: copy.src_pitch as usize,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: copy.dst,
        dstArray: std::ptr::null_mut(),
        dstPitch: copy.dst_pitch as usize,
        WidthInBytes: copy.row_bytes as usize,
        Height: copy.rows as usize,
    };
    // SAFETY: the caller's contract.
    let r = unsafe { sys::cuMemcpy2DAsync_v2(&desc, stream.cu_stream()) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(baton_runtime::cudarc::driver::DriverError(r));
    }
    Ok(())
}

/// What [`measure`] found.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The copies' timings, in [`COPIES`] order.
    pub timings: [Timing; 3],
    /// Our copy's chunk width, bytes.
    pub width: u32,
    /// Our copy's grid, blocks.
    pub grid: u32,
    /// The first destination byte where our copy differs from the
    /// driver's: (offset, ours, theirs).
    pub mismatch: Option<(usize, u8, u8)>,
}

/// Times the three copies of `g` and compares our destination with the
/// driver's, byte for byte.
pub fn measure(
    gpu: &Gpu,
    copier: &CopyKernel,
    g: Geometry,
    reps: usize,
) -> baton_reference::Result<Measured> {
    let s = gpu.stream();
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let src_host: Vec<u8> = (0..g.span(g.src_pitch))
        .map(|_| rng.next_u32() as u8)
        .collect();
    let src = s.clone_htod(&src_host)?;
    let mut ours = s.alloc_zeros::<u8>(g.span(g.dst_pitch))?;
    let mut theirs = s.alloc_zeros::<u8>(g.span(g.dst_pitch))?;
    let flat_src = s.alloc_zeros::<u8>(g.rows * g.row_bytes)?;
    let mut flat_dst = s.alloc_zeros::<u8>(g.rows * g.row_bytes)?;
    let copy_into = |dst: &mut CudaSlice<u8>| PitchedCopy {
        dst: dst.device_ptr_mut(s).0,
        dst_pitch: g.dst_pitch as u64,
        src: src.device_ptr(s).0,
        src_pitch: g.src_pitch as u64,
        row_bytes: g.row_bytes as u64,
        rows: g.rows as u64,
    };
    let (c_ours, c_theirs) = (copy_into(&mut ours), copy_into(&mut theirs));
    c_ours.params().map_err(baton_runtime::Error::from)?;
    const WARMUP: usize = 3;
    let mut timer = QueuedTimer::<3>::new();
    for _ in 0..WARMUP + reps.max(1) {
        // SAFETY: `src`, `ours` and `theirs` are live separate buffers of
        // the geometry's spans, used on this stream only.
        timer.time(gpu, 0, || unsafe { copier.enqueue(s, &c_ours) })?;
        // SAFETY: as above.
        timer.time(gpu, 1, || unsafe { driver_copy(s, &c_theirs) })?;
        timer.time(gpu, 2, || s.memcpy_dtod(&flat_src, &mut flat_dst))?;
    }
    let times = timer.finish(gpu, WARMUP)?;
    let (a, b) = (s.clone_dtoh(&ours)?, s.clone_dtoh(&theirs)?);
    let mismatch = (0..a.len())
        .find(|&i| a[i] != b[i])
        .map(|i| (i, a[i], b[i]));
    let timing = |what, ms: &Vec<f64>| {
        let med = median(ms.clone());
        Timing {
            what,
            median_us: med * 1e3,
            min_us: ms.iter().copied().fold(f64::INFINITY, f64::min) * 1e3,
            gbps: g.bytes_moved() as f64 / (med * 1e-3) / 1e9,
        }
    };
    let [t0, t1, t2] = &times;
    Ok(Measured {
        timings: [
            timing(COPIES[0], t0),
            timing(COPIES[1], t1),
            timing(COPIES[2], t2),
        ],
        width: c_ours.vector_bytes(),
        grid: copier.grid(&c_ours),
        mismatch,
    })
}

/// `baton bench repack`: prints one row per copy (median and fastest µs,
/// GB/s, ratio to the flat copy).
pub fn repack(ordinal: usize, g: Geometry, reps: usize) -> Outcome {
    let (gpu, kernels) = match open_gpu_kernels(ordinal, Variant::Release) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if g.rows == 0 || g.row_bytes == 0 || g.dst_pitch.min(g.src_pitch) < g.row_bytes {
        println!("FAIL: need rows ≥ 1, row bytes ≥ 1 and both pitches ≥ the row: {g:?}");
        return Outcome::Fail;
    }
    let copier = match CopyKernel::new(&gpu, &kernels) {
        Ok(c) => c,
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    crate::commands::print_gpu_line(&gpu);
    println!(
        "{} rows of {} bytes, pitch {} -> {}: {:.1} MB read + written; 3 warm-up + {reps} timed runs each (median, CUDA events, queued)",
        g.rows,
        g.row_bytes,
        g.src_pitch,
        g.dst_pitch,
        g.bytes_moved() as f64 / 1e6
    );
    let m = match measure(&gpu, &copier, g, reps) {
        Ok(m) => m,
        Err(e) => {
            println!("FAIL: {e}");
            return Outcome::Fail;
        }
    };
    println!(
        "baton_pitched_copy: {}-byte chunks, grid {} × 256",
        m.width, m.grid
    );
    let flat = m.timings[2].gbps;
    println!(
        "{:<26} {:>10} {:>10} {:>9} {:>8}",
        "copy", "median µs", "min µs", "GB/s", "vs flat"
    );
    for t in &m.timings {
        println!(
            "{:<26} {:>10.2} {:>10.2} {:>9.1} {:>8.3}",
            t.what,
            t.median_us,
            t.min_us,
            t.gbps,
            t.gbps / flat
        );
    }
    if let Some((i, ours, theirs)) = m.mismatch {
        println!(
            "FAIL: destination byte {i} (row {}, byte {}) is {ours:#04x}; the driver's copy has {theirs:#04x}",
            i / g.dst_pitch,
            i % g.dst_pitch
        );
        return Outcome::Fail;
    }
    println!("PASS: our destination equals the driver's, byte for byte");
    Outcome::Pass
}
