//! The pitched copy: `rows` rows of `row_bytes` bytes from rows `src_pitch`
//! bytes apart to rows `dst_pitch` bytes apart (the BF16 GEMM re-packs an
//! operand to 128-byte rows with it before each launch).
//!
//! Launch: block ([`THREADS`], 1, 1), any grid up to [`MAX_GRID`] (the host
//! launches `baton_kernels_abi::pitched_copy::grid`), no shared memory.
//!
//! Two phases over the same grid, each a flat list of work items that the
//! threads stride over (thread `t` of the grid takes items `t`,
//! `t + stride`, …; consecutive threads take consecutive items, so each
//! warp reads and writes contiguous bytes of a row):
//!
//! 1. chunks: every row cut into `⌊row_bytes / w⌋` chunks of `w =
//!    vector_bytes(…)` bytes, 16 when both bases and both pitches are
//!    multiples of 16 (`ld.global.nc.v4.u32` + `st.global.v4.u32`), else 8,
//!    4, 2 or 1 (plain loads and stores of that width, still aligned);
//! 2. tail: the last `row_bytes mod w` bytes of every row, one byte each.
//!
//! Item `i` of a phase is chunk `i mod c` of row `⌊i / c⌋` (`c` chunks per
//! row); each thread divides once and then advances its (row, chunk) by the
//! stride's own quotient and remainder, so the loop has no division. Two
//! items are loaded before either is stored (two 16-byte loads in flight
//! per thread). Nothing outside `[0, row_bytes)` of a destination row is
//! written.

use baton::arch::ptx::{self as arch, ld_global_nc_v4_u32, st_global_v4_u32};
use baton_kernels_abi::pitched_copy::{
    self as abi, MAX_GRID, PitchedCopyParams, THREADS, vector_bytes,
};

/// A chunk of `size_of::<Self>()` bytes, loaded and stored whole.
trait Chunk: Copy {
    /// Loads the chunk at `src`.
    ///
    /// # Safety
    /// `src` is a global address aligned to the chunk's size, of bytes no
    /// thread of this launch writes.
    unsafe fn load(src: *const u8) -> Self;
    /// Stores the chunk at `dst`.
    ///
    /// # Safety
    /// `dst` is a global address aligned to the chunk's size that only this
    /// thread accesses during the launch.
    unsafe fn store(self, dst: *mut u8);
}

impl Chunk for [u32; 4] {
    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: the caller's contract (16-byte aligned, not written).
        unsafe { ld_global_nc_v4_u32(src.cast()) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: the caller's contract (16-byte aligned, this thread's).
        unsafe { st_global_v4_u32(dst.cast(), self) }
    }
}

macro_rules! scalar_chunk {
    ($($t:ty),*) => {$(
        impl Chunk for $t {
            #[inline(always)]
            unsafe fn load(src: *const u8) -> Self {
                // SAFETY: the caller's contract (aligned, readable).
                unsafe { src.cast::<$t>().read() }
            }
            #[inline(always)]
            unsafe fn store(self, dst: *mut u8) {
                // SAFETY: the caller's contract (aligned, this thread's).
                unsafe { dst.cast::<$t>().write(self) }
            }
        }
    )*};
}
scalar_chunk!(u64, u32, u16, u8);

/// A thread's position in a phase: chunk `col` of row `row`.
#[derive(Clone, Copy)]
struct Cursor {
    row: u32,
    col: u32,
}

/// Copies chunk `col` of every row `< p.rows` for `col < chunks`, chunk `j`
/// being bytes `[offset + j·W, offset + (j+1)·W)` of the row, `W` =
/// `size_of::<C>()`.
///
/// # Safety
/// `p` describes rows the launch may read (source) and write (destination,
/// no two rows overlapping, not overlapping the source); every chunk start
/// is aligned to `W` on both sides; `rows + grid · THREADS + 1` and `2 ·
/// chunks` fit in u32 (the ABI's limits).
#[inline(always)]
unsafe fn copy_chunks<C: Chunk>(p: &PitchedCopyParams, offset: u32, chunks: u32) {
    if chunks == 0 {
        return;
    }
    let width = core::mem::size_of::<C>() as u64;
    let threads = arch::block_dim_x();
    let first = arch::block_idx_x() * threads + arch::thread_idx_x();
    let stride = arch::grid_dim_x() * threads;
    let (step_rows, step_cols) = (stride / chunks, stride % chunks);
    let advance = |c: Cursor| {
        let (mut row, mut col) = (c.row + step_rows, c.col + step_cols);
        if col >= chunks {
            col -= chunks;
            row += 1;
        }
        Cursor { row, col }
    };
    let at = |c: Cursor| {
        let byte = offset as u64 + c.col as u64 * width;
        // SAFETY (of the uses below): row < rows and byte + W ≤ row_bytes,
        // inside the rows the caller vouches for.
        let src = p
            .src
            .wrapping_add((c.row as u64 * p.src_pitch + byte) as usize);
        let dst = p
            .dst
            .wrapping_add((c.row as u64 * p.dst_pitch + byte) as usize);
        (src, dst)
    };
    let mut a = Cursor {
        row: first / chunks,
        col: first % chunks,
    };
    while a.row < p.rows {
        let b = advance(a);
        let (src_a, dst_a) = at(a);
        // SAFETY: a.row < rows, a.col < chunks: inside row a.row, aligned.
        let va = unsafe { C::load(src_a) };
        if b.row < p.rows {
            let (src_b, dst_b) = at(b);
            // SAFETY: as for `a`; items a and b are distinct chunks, each
            // taken by this thread only (the stride partitions the items).
            unsafe {
                let vb = C::load(src_b);
                va.store(dst_a);
                vb.store(dst_b);
            }
        } else {
            // SAFETY: as above.
            unsafe { va.store(dst_a) };
        }
        a = advance(b);
    }
}

baton::kernel! {
    #[spec(abi::PITCHED_COPY)]
    /// See the module documentation.
    ///
    /// # Safety
    /// `src` holds `rows` readable rows of `row_bytes` bytes `src_pitch`
    /// apart that nothing writes during the launch; `dst` holds `rows`
    /// writable rows of `row_bytes` bytes `dst_pitch ≥ row_bytes` apart,
    /// not overlapping the source; `rows` and `row_bytes` within the ABI's
    /// limits; launched as the module documentation says (a wrong block
    /// size or a grid over `MAX_GRID` traps).
    pub fn baton_pitched_copy(p: PitchedCopyParams) {
        if arch::block_dim_x() != THREADS || arch::grid_dim_x() > MAX_GRID {
            arch::trap();
        }
        let width = vector_bytes(p.dst as u64, p.dst_pitch, p.src as u64, p.src_pitch);
        let chunks = p.row_bytes / width;
        // SAFETY (all five): chunk j of a row starts at j·width, and the
        // row starts are width-aligned on both sides (vector_bytes); the
        // rows are the caller's.
        unsafe {
            match width {
                16 => copy_chunks::<[u32; 4]>(&p, 0, chunks),
                8 => copy_chunks::<u64>(&p, 0, chunks),
                4 => copy_chunks::<u32>(&p, 0, chunks),
                2 => copy_chunks::<u16>(&p, 0, chunks),
                _ => copy_chunks::<u8>(&p, 0, chunks),
            }
        }
        let done = chunks * width;
        // SAFETY: single bytes need no alignment; bytes [done, row_bytes)
        // of each row.
        unsafe { copy_chunks::<u8>(&p, done, p.row_bytes - done) };
    }
}
