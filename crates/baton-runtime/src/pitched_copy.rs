//! baton's pitched device-to-device copy: `rows` rows of `row_bytes`
//! bytes from rows `src_pitch` bytes apart to rows `dst_pitch` bytes apart,
//! by the kernel `baton_pitched_copy` (`kernels/src/pitched_copy.rs`).
//!
//! It replaces the driver's `cuMemcpy2DAsync` where the copy's speed
//! matters: the BF16 GEMM re-packs an operand to 128-byte rows with it
//! before every launch ([`gemm::Repack`](crate::gemm::Repack)). Measured on
//! an H100 (session 17, `baton bench repack --row-bytes 4112`, 2048 to
//! 65536 rows, read + written bytes): 2.0–2.6 TB/s against 1.1–2.4 TB/s
//! for the driver's `cuMemcpy2DAsync` (1.6–1.9× faster up to 16384 rows)
//! and 1.8–3.0 TB/s for a flat copy of the same bytes. It uses 16-byte vector loads (`ld.global.nc.v4.u32`) and stores where
//! both bases and both pitches are multiples of 16 (always so for GEMM
//! operands, whose rows TMA needs 16-byte aligned), aligned 8-, 4-, 2- or
//! 1-byte chunks otherwise, a grid of at most 8 blocks of 256 threads per
//! SM striding over all rows' chunks ([`grid`](PitchedCopy::grid)). Bytes
//! of a destination row past `row_bytes` (its padding) are left as they
//! are.
//!
//! A launch allocates nothing and never synchronizes, so it can be captured
//! in a CUDA graph.
//!
//! ```no_run
//! use baton_runtime::pitched_copy::{CopyKernel, PitchedCopy};
//! use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
//! use baton_runtime::{Gpu, Variant};
//! let gpu = Gpu::new(0)?;
//! let kernels = gpu.load_kernels(Variant::Release)?;
//! let copier = CopyKernel::new(&gpu, &kernels)?;
//! let (rows, row_bytes, src_pitch, dst_pitch) = (4104, 4112, 4112, 4224);
//! let s = gpu.stream();
//! let src = s.alloc_zeros::<u8>(rows * src_pitch)?;
//! let mut dst = s.alloc_zeros::<u8>(rows * dst_pitch)?;
//! let copy = PitchedCopy {
//!     dst: dst.device_ptr_mut(s).0,
//!     dst_pitch: dst_pitch as u64,
//!     src: src.device_ptr(s).0,
//!     src_pitch: src_pitch as u64,
//!     row_bytes: row_bytes as u64,
//!     rows: rows as u64,
//! };
//! // SAFETY: both buffers are live, separate and hold the rows above.
//! unsafe { copier.enqueue(s, &copy)? };
//! gpu.synchronize()?;
//! # Ok::<(), baton_runtime::Error>(())
//! ```

use crate::device_memory::ranges_overlap;
pub use crate::error::PitchedCopyError;
use crate::{Gpu, Kernels, Result, TypedKernel};
use baton_kernels_abi::pitched_copy::{self as abi, MAX_ROW_BYTES, MAX_ROWS};
pub use baton_kernels_abi::pitched_copy::{PITCHED_COPY, PitchedCopyParams};
use cudarc::driver::CudaStream;

/// One pitched copy, by device address: for every `r < rows`, bytes
/// `[0, row_bytes)` of `src + r · src_pitch` to `dst + r · dst_pitch`.
///
/// ```
/// use baton_runtime::pitched_copy::PitchedCopy;
/// let c = PitchedCopy { dst: 1 << 32, dst_pitch: 4224, src: 1 << 33, src_pitch: 4112, row_bytes: 4112, rows: 4104 };
/// assert_eq!(c.vector_bytes(), 16);
/// assert_eq!(c.bytes_moved(), 2 * 4104 * 4112);
/// assert!(c.params().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PitchedCopy {
    /// The first destination row's device address.
    pub dst: u64,
    /// Bytes from one destination row to the next (≥ `row_bytes`).
    pub dst_pitch: u64,
    /// The first source row's device address.
    pub src: u64,
    /// Bytes from one source row to the next.
    pub src_pitch: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Rows.
    pub rows: u64,
}

impl PitchedCopy {
    /// Whether there is nothing to copy (no rows, or empty rows).
    ///
    /// ```
    /// use baton_runtime::pitched_copy::PitchedCopy;
    /// let c = PitchedCopy { dst: 0, dst_pitch: 0, src: 0, src_pitch: 0, row_bytes: 0, rows: 8 };
    /// assert!(c.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.row_bytes == 0
    }

    /// Bytes read plus bytes written (`2 · rows · row_bytes`): what a GB/s
    /// figure of the copy counts.
    ///
    /// ```
    /// use baton_runtime::pitched_copy::PitchedCopy;
    /// let c = PitchedCopy { dst: 0, dst_pitch: 128, src: 4096, src_pitch: 100, row_bytes: 100, rows: 3 };
    /// assert_eq!(c.bytes_moved(), 600);
    /// ```
    pub fn bytes_moved(&self) -> u64 {
        2 * self.rows * self.row_bytes
    }

    /// The chunk width, bytes, the kernel copies with: 16 when both
    /// addresses and both pitches are multiples of 16, else the largest
    /// power of two dividing all four
    /// ([`vector_bytes`](baton_kernels_abi::pitched_copy::vector_bytes)).
    ///
    /// ```
    /// use baton_runtime::pitched_copy::PitchedCopy;
    /// let c = PitchedCopy { dst: 1 << 20, dst_pitch: 128, src: 1 << 24, src_pitch: 102, row_bytes: 100, rows: 3 };
    /// assert_eq!(c.vector_bytes(), 2);
    /// ```
    pub fn vector_bytes(&self) -> u32 {
        abi::vector_bytes(self.dst, self.dst_pitch, self.src, self.src_pitch)
    }

    /// Blocks the kernel is launched with on `sm_count` SMs
    /// ([`grid`](baton_kernels_abi::pitched_copy::grid): one thread per
    /// chunk, at most 8 blocks of 256 per SM). Rows and row lengths past
    /// the kernel's limits count as the limits ([`params`](Self::params)
    /// refuses them).
    ///
    /// ```
    /// use baton_runtime::pitched_copy::PitchedCopy;
    /// let c = PitchedCopy { dst: 1 << 32, dst_pitch: 4224, src: 1 << 33, src_pitch: 4112, row_bytes: 4112, rows: 4104 };
    /// assert_eq!(c.grid(132), 132 * 8);
    /// let small = PitchedCopy { rows: 2, ..c };
    /// assert_eq!(small.grid(132), 3); // 514 chunks of 16 bytes
    /// ```
    pub fn grid(&self, sm_count: u32) -> u32 {
        let rows = self.rows.min(MAX_ROWS as u64) as u32;
        let row_bytes = self.row_bytes.min(MAX_ROW_BYTES as u64) as u32;
        abi::grid(rows, row_bytes, self.vector_bytes(), sm_count)
    }

    /// Bytes from the first row's start to the last row's end, at `pitch`
    /// (0 when empty; saturating).
    fn span(&self, pitch: u64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        (self.rows - 1)
            .saturating_mul(pitch)
            .saturating_add(self.row_bytes)
    }

    /// The kernel's parameters, after checking what the kernel cannot:
    /// destination rows at least a row apart, `rows` and `row_bytes`
    /// within its limits (2³¹ each), and the destination span apart from
    /// the source span.
    ///
    /// ```
    /// use baton_runtime::pitched_copy::{PitchedCopy, PitchedCopyError};
    /// let c = PitchedCopy { dst: 0x10000, dst_pitch: 128, src: 0x10000 + 256, src_pitch: 100, row_bytes: 100, rows: 4 };
    /// assert!(matches!(c.params(), Err(PitchedCopyError::Overlap { .. })));
    /// let p = PitchedCopy { src: 0x20000, ..c }.params()?;
    /// assert_eq!((p.rows, p.row_bytes, p.dst_pitch), (4, 100, 128));
    /// # Ok::<(), PitchedCopyError>(())
    /// ```
    pub fn params(&self) -> Result<PitchedCopyParams, PitchedCopyError> {
        if self.dst_pitch < self.row_bytes && self.rows > 1 {
            return Err(PitchedCopyError::DstPitchTooSmall {
                dst_pitch: self.dst_pitch,
                row_bytes: self.row_bytes,
            });
        }
        for (what, value, max) in [
            ("rows", self.rows, MAX_ROWS),
            ("row_bytes", self.row_bytes, MAX_ROW_BYTES),
        ] {
            if value > max as u64 {
                return Err(PitchedCopyError::TooLarge {
                    what,
                    value,
                    max: max as u64,
                });
            }
        }
        let (dst_span, src_span) = (self.span(self.dst_pitch), self.span(self.src_pitch));
        if ranges_overlap(self.dst, dst_span, self.src, src_span) {
            return Err(PitchedCopyError::Overlap {
                dst: self.dst,
                dst_span,
                src: self.src,
                src_span,
            });
        }
        Ok(PitchedCopyParams {
            dst: self.dst as *mut u8,
            src: self.src as *const u8,
            dst_pitch: self.dst_pitch,
            src_pitch: self.src_pitch,
            rows: self.rows as u32,
            row_bytes: self.row_bytes as u32,
        })
    }
}

/// The pitched-copy kernel of a loaded module and the GPU's SM count (its
/// grid): looked up once, launched per copy.
pub struct CopyKernel {
    kernel: TypedKernel<PitchedCopyParams>,
    sm_count: u32,
}

impl CopyKernel {
    /// The kernel `baton_pitched_copy` of `kernels`. Errors as
    /// [`Kernels::kernel`]: [`Error::UnknownKernel`](crate::Error::UnknownKernel)
    /// when the module has no such entry (a module of your own, or one
    /// built before the kernel existed), [`Error::SpecMismatch`](crate::Error::SpecMismatch)
    /// when it was compiled with another ABI.
    ///
    /// ```no_run
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let kernels = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// let copier = baton_runtime::pitched_copy::CopyKernel::new(&gpu, &kernels)?;
    /// # let _ = copier;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn new(gpu: &Gpu, kernels: &Kernels) -> Result<Self> {
        Ok(Self {
            kernel: kernels.kernel(&PITCHED_COPY)?,
            sm_count: gpu.sm_count(),
        })
    }

    /// Blocks a launch of `copy` gets ([`PitchedCopy::grid`] on this GPU).
    pub fn grid(&self, copy: &PitchedCopy) -> u32 {
        copy.grid(self.sm_count)
    }

    /// Enqueues `copy` on `stream` (nothing when it is empty). Errors:
    /// [`Error::PitchedCopy`](crate::Error::PitchedCopy) from
    /// [`PitchedCopy::params`] before anything is enqueued;
    /// [`Error::Launch`](crate::Error::Launch) when the driver refuses.
    ///
    /// # Safety
    /// `copy.src` must address `rows` readable rows (`row_bytes` each,
    /// `src_pitch` apart) and `copy.dst` `rows` writable rows (`dst_pitch`
    /// apart) of device memory in the kernel module's context, live until
    /// the copy has run, and nothing else may write either, or read the
    /// destination, until then except in stream order on `stream`.
    pub unsafe fn enqueue(&self, stream: &CudaStream, copy: &PitchedCopy) -> Result<()> {
        let params = copy.params()?;
        if copy.is_empty() {
            return Ok(());
        }
        // SAFETY: the caller's contract covers every byte the kernel
        // touches (rows × row_bytes on each side); `params` checked the
        // limits the kernel's index arithmetic needs and that the
        // destination does not overlap the source; the grid is at most
        // MAX_GRID blocks (abi::grid).
        unsafe { self.kernel.launch(stream, self.grid(copy), &params) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k2056() -> PitchedCopy {
        PitchedCopy {
            dst: 0x7f00_0000_0000,
            dst_pitch: 4224,
            src: 0x7f10_0000_0000,
            src_pitch: 4112,
            row_bytes: 4112,
            rows: 4104,
        }
    }

    #[test]
    fn gemm_repack_copies_in_16_byte_vectors_on_a_full_grid() {
        let c = k2056();
        assert_eq!(c.vector_bytes(), 16);
        assert_eq!(c.grid(132), 1056);
        let p = c.params().unwrap();
        assert_eq!(
            (p.dst as u64, p.src as u64, p.rows, p.row_bytes),
            (c.dst, c.src, 4104, 4112)
        );
        assert_eq!((p.dst_pitch, p.src_pitch), (4224, 4112));
    }

    #[test]
    fn ragged_copies_fall_back_to_narrower_aligned_chunks() {
        let c = k2056();
        assert_eq!(
            PitchedCopy {
                src_pitch: 4114,
                ..c
            }
            .vector_bytes(),
            2
        );
        assert_eq!(
            PitchedCopy {
                src_pitch: 4113,
                ..c
            }
            .vector_bytes(),
            1
        );
        assert_eq!(
            PitchedCopy {
                src: c.src + 8,
                ..c
            }
            .vector_bytes(),
            8
        );
        assert_eq!(
            PitchedCopy {
                src: c.src + 4,
                ..c
            }
            .vector_bytes(),
            4
        );
        // The row length does not matter to the width (its tail is bytes).
        assert_eq!(
            PitchedCopy {
                row_bytes: 4111,
                ..c
            }
            .vector_bytes(),
            16
        );
        // Small copies get one thread per chunk: 3 rows × 7 tail bytes.
        assert_eq!(
            PitchedCopy {
                row_bytes: 7,
                rows: 3,
                ..c
            }
            .grid(132),
            1
        );
    }

    #[test]
    fn refusals_name_the_rule() {
        let c = k2056();
        assert_eq!(
            PitchedCopy {
                dst_pitch: 4096,
                ..c
            }
            .params()
            .unwrap_err(),
            PitchedCopyError::DstPitchTooSmall {
                dst_pitch: 4096,
                row_bytes: 4112
            }
        );
        // One row needs no pitch.
        assert!(
            PitchedCopy {
                dst_pitch: 0,
                rows: 1,
                ..c
            }
            .params()
            .is_ok()
        );
        let many = PitchedCopy {
            rows: (1 << 31) + 1,
            dst_pitch: 1,
            src_pitch: 0,
            row_bytes: 1,
            ..c
        };
        assert!(matches!(
            many.params(),
            Err(PitchedCopyError::TooLarge { what: "rows", .. })
        ));
        let long = PitchedCopy {
            row_bytes: 1 << 32,
            dst_pitch: 1 << 32,
            rows: 1,
            ..c
        };
        assert!(matches!(
            long.params(),
            Err(PitchedCopyError::TooLarge {
                what: "row_bytes",
                ..
            })
        ));
        // The destination starting inside the source's last row.
        let last_row = c.src + 4103 * 4112;
        let e = PitchedCopy { dst: last_row, ..c }.params().unwrap_err();
        assert!(matches!(e, PitchedCopyError::Overlap { .. }), "{e:?}");
        assert!(e.to_string().contains("separate buffer"), "{e}");
        // Right after the source's end: fine.
        assert!(
            PitchedCopy {
                dst: c.src + 4104 * 4112,
                ..c
            }
            .params()
            .is_ok()
        );
        // Source right after the destination's last row (its padding is
        // not part of the span).
        assert!(
            PitchedCopy {
                src: c.dst + 4103 * 4224 + 4112,
                ..c
            }
            .params()
            .is_ok()
        );
    }

    #[test]
    fn empty_copies_check_nothing_and_launch_nothing() {
        let c = PitchedCopy { rows: 0, ..k2056() };
        assert!(c.is_empty());
        assert_eq!(c.bytes_moved(), 0);
        assert_eq!(c.grid(132), 1);
        assert!(c.params().is_ok());
    }
}
