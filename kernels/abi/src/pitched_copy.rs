//! The pitched copy (`baton_pitched_copy`): `rows` rows of `row_bytes`
//! bytes from rows `src_pitch` bytes apart to rows `dst_pitch` bytes apart
//! (the BF16 GEMM's re-packing of an operand to 128-byte rows,
//! `baton_runtime::gemm::Repack`), and its launch geometry.
//!
//! Each row is cut into chunks of [`vector_bytes`] bytes (16 when both
//! bases and both pitches are multiples of 16: one `ld.global.nc.v4.u32`
//! and one `st.global.v4.u32` per chunk; 8, 4, 2 or 1 otherwise) plus a
//! tail of `row_bytes mod width` bytes copied one byte at a time. The
//! chunks of all rows form one flat list that the grid strides over
//! (consecutive threads take consecutive chunks, so a warp reads and writes
//! contiguous bytes); the grid is [`grid`]: at most [`BLOCKS_PER_SM`]
//! blocks of [`THREADS`] per SM, fewer where the copy is small. The bytes
//! of a destination row past `row_bytes` (its padding) are never written.
//!
//! ```
//! use baton_kernels_abi::pitched_copy::{grid, vector_bytes};
//! // 4104 rows of 4112 bytes (K = 2056 bf16) into rows of 4224 bytes:
//! assert_eq!(vector_bytes(0x7f00_0000_0000, 4224, 0x7f10_0000_0000, 4112), 16);
//! assert_eq!(grid(4104, 4112, 16, 132), 132 * 8);
//! ```

use baton::kernel::{KernelParams, KernelSpec};

/// Threads per block.
pub const THREADS: u32 = 256;

/// Blocks per SM the kernel is compiled for (`.minnctapersm`: at most 32
/// registers, 2048 threads resident per SM) and launched with at most.
pub const BLOCKS_PER_SM: u32 = 8;

/// The widest chunk, bytes (one 16-byte vector).
pub const MAX_VECTOR_BYTES: u32 = 16;

/// Most blocks a launch may have (the kernel traps on a larger grid: its
/// flat indices are 32-bit).
pub const MAX_GRID: u32 = 1 << 16;

/// Most rows one launch copies.
pub const MAX_ROWS: u32 = 1 << 31;

/// Most bytes per row.
pub const MAX_ROW_BYTES: u32 = 1 << 31;

/// Parameters of [`PITCHED_COPY`].
///
/// The kernel copies, for every `r < rows`, bytes `[0, row_bytes)` of
/// `src + r · src_pitch` to `dst + r · dst_pitch`, and writes nothing else.
///
/// ```
/// use baton_kernels_abi::pitched_copy::PitchedCopyParams;
/// let p = PitchedCopyParams {
///     dst: core::ptr::null_mut(),
///     src: core::ptr::null(),
///     dst_pitch: 4224,
///     src_pitch: 4112,
///     rows: 4104,
///     row_bytes: 4112,
/// };
/// assert!(p.dst_pitch >= p.row_bytes as u64);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedCopyParams {
    /// The first destination row (global memory).
    pub dst: *mut u8,
    /// The first source row (global memory).
    pub src: *const u8,
    /// Bytes from one destination row to the next (≥ `row_bytes`).
    pub dst_pitch: u64,
    /// Bytes from one source row to the next.
    pub src_pitch: u64,
    /// Rows to copy (at most [`MAX_ROWS`]).
    pub rows: u32,
    /// Bytes per row (at most [`MAX_ROW_BYTES`]).
    pub row_bytes: u32,
}
// SAFETY: repr(C) of raw pointers and integers.
unsafe impl KernelParams for PitchedCopyParams {}

/// `baton_pitched_copy`: any grid up to [`MAX_GRID`] blocks of [`THREADS`]
/// (the host launches [`grid`]); no shared memory.
///
/// ```
/// use baton_kernels_abi::pitched_copy::PITCHED_COPY;
/// assert_eq!(PITCHED_COPY.threads, 256);
/// assert_eq!(PITCHED_COPY.min_blocks_per_sm, 8);
/// assert!(PITCHED_COPY.hot);
/// ```
pub const PITCHED_COPY: KernelSpec<PitchedCopyParams> =
    KernelSpec::new("baton_pitched_copy", THREADS)
        .with_min_blocks_per_sm(BLOCKS_PER_SM)
        .hot();

/// The chunk width, bytes, of a copy between these bases and pitches: the
/// largest power of two up to [`MAX_VECTOR_BYTES`] that divides all four,
/// so that every chunk of every row is aligned to its width on both sides.
///
/// ```
/// use baton_kernels_abi::pitched_copy::vector_bytes;
/// assert_eq!(vector_bytes(256, 4224, 512, 4112), 16); // K = 2056 bf16 rows
/// assert_eq!(vector_bytes(256, 4224, 512, 4116), 4);  // source pitch 4-aligned
/// assert_eq!(vector_bytes(256, 4224, 514, 4112), 2);  // source base 2-aligned
/// assert_eq!(vector_bytes(256, 129, 512, 4112), 1);   // odd destination pitch
/// ```
pub const fn vector_bytes(dst: u64, dst_pitch: u64, src: u64, src_pitch: u64) -> u32 {
    let bits = dst | dst_pitch | src | src_pitch | MAX_VECTOR_BYTES as u64;
    1 << bits.trailing_zeros()
}

/// The work items of a copy at chunk width `width`: the larger of its
/// chunk phase (`rows · ⌊row_bytes / width⌋` chunks) and its tail phase
/// (`rows · (row_bytes mod width)` bytes); each thread takes one item of
/// each phase per grid stride.
///
/// ```
/// use baton_kernels_abi::pitched_copy::work_items;
/// assert_eq!(work_items(10, 4112, 16), 10 * 257);
/// assert_eq!(work_items(10, 7, 16), 10 * 7); // tail bytes only
/// ```
pub const fn work_items(rows: u32, row_bytes: u32, width: u32) -> u64 {
    let chunks = row_bytes / width;
    let tail = row_bytes % width;
    let per_row = if chunks > tail { chunks } else { tail };
    rows as u64 * per_row as u64
}

/// The grid (blocks of [`THREADS`]) of a copy on `sm_count` SMs: one thread
/// per work item ([`work_items`]), at most [`BLOCKS_PER_SM`] blocks per SM
/// (threads then stride over the rest), at least one block.
///
/// ```
/// use baton_kernels_abi::pitched_copy::grid;
/// assert_eq!(grid(1, 64, 16, 132), 1);          // 4 chunks: one block
/// assert_eq!(grid(64, 4096, 16, 132), 64);      // 16,384 chunks: 64 blocks
/// assert_eq!(grid(16384, 4112, 16, 132), 1056); // capped at 8 per SM
/// ```
pub const fn grid(rows: u32, row_bytes: u32, width: u32, sm_count: u32) -> u32 {
    let blocks = work_items(rows, row_bytes, width).div_ceil(THREADS as u64);
    let sms = if sm_count == 0 { 1 } else { sm_count };
    let cap = sms.saturating_mul(BLOCKS_PER_SM);
    let cap = if cap < MAX_GRID { cap } else { MAX_GRID };
    if blocks == 0 {
        1
    } else if blocks < cap as u64 {
        blocks as u32
    } else {
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_width_is_the_common_alignment_capped_at_16() {
        assert_eq!(vector_bytes(0, 0, 0, 0), 16);
        assert_eq!(vector_bytes(1 << 20, 128, 1 << 12, 32), 16);
        for (shift, want) in [(0, 1), (1, 2), (2, 4), (3, 8), (4, 16), (5, 16)] {
            let odd = 1u64 << shift;
            assert_eq!(vector_bytes(odd, 4096, 4096, 4096), want, "dst {odd}");
            assert_eq!(vector_bytes(4096, odd, 4096, 4096), want, "dst pitch {odd}");
            assert_eq!(vector_bytes(4096, 4096, odd, 4096), want, "src {odd}");
            assert_eq!(vector_bytes(4096, 4096, 4096, odd), want, "src pitch {odd}");
        }
        // Every row start is width-aligned on both sides.
        let (dst, dp, src, sp) = (0x1000u64, 4224u64, 0x2006u64, 4110u64);
        let w = vector_bytes(dst, dp, src, sp) as u64;
        assert_eq!(w, 2);
        for r in 0..100 {
            assert_eq!((dst + r * dp) % w, 0);
            assert_eq!((src + r * sp) % w, 0);
        }
    }

    #[test]
    fn work_covers_chunks_and_tail() {
        // 4112-byte rows at width 16: 257 chunks, no tail.
        assert_eq!(work_items(4104, 4112, 16), 4104 * 257);
        // 4114-byte rows at width 2: 2057 chunks.
        assert_eq!(work_items(3, 4114, 2), 3 * 2057);
        // 33 bytes at width 16: 2 chunks, 1 tail byte.
        assert_eq!(work_items(5, 33, 16), 10);
        // 15 bytes at width 16: no chunk, 15 tail bytes.
        assert_eq!(work_items(5, 15, 16), 75);
        assert_eq!(work_items(0, 4096, 16), 0);
        assert_eq!(work_items(7, 0, 16), 0);
        // The largest copy the limits allow does not overflow.
        assert_eq!(
            work_items(MAX_ROWS, MAX_ROW_BYTES, 1),
            (MAX_ROWS as u64) * (MAX_ROW_BYTES as u64)
        );
    }

    #[test]
    fn grid_is_one_thread_per_item_capped_per_sm() {
        assert_eq!(grid(0, 0, 16, 132), 1);
        assert_eq!(grid(1, 16, 16, 132), 1);
        assert_eq!(grid(1, 256 * 16, 16, 132), 1);
        assert_eq!(grid(1, 256 * 16 + 16, 16, 132), 2);
        assert_eq!(grid(4104, 4112, 16, 132), 132 * BLOCKS_PER_SM);
        assert_eq!(grid(4104, 4112, 16, 0), BLOCKS_PER_SM);
        assert_eq!(grid(MAX_ROWS, MAX_ROW_BYTES, 1, u32::MAX), MAX_GRID);
        // The kernel's index arithmetic: grid · THREADS and rows plus a
        // stride stay within u32.
        let stride = MAX_GRID as u64 * THREADS as u64;
        assert!(MAX_ROWS as u64 + stride < u32::MAX as u64);
        assert!(2 * MAX_ROW_BYTES as u64 <= u32::MAX as u64 + 1);
    }
}
