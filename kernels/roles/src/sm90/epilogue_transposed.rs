//! The transposed TMA-store epilogue of the swap-AB GEMM (small M): the
//! kernel computes `Dᵀ = B·Aᵀ`, so a consumer warpgroup's `64 × N`
//! accumulators are 64 columns (the user's N) by `N` rows (the user's M,
//! N = 16, 32 or 64) of the user's row-major D. They are written
//! transposed into two 64-byte-swizzled sub-tiles of `rows × 32` bf16 (the
//! layout of [`SubTile`](super::epilogue::SubTile), of which the first
//! `rows` rows are used) and stored by TMA with D's map (box {32, rows}).
//! beta = 0 only (no C).

use super::epilogue::{SubTile, swizzled64, wait_ring_read};
use baton::arch::ptx::tma::{TensorMap, store_2d, store_commit_group};
use baton::arch::ptx::{fence_proxy_async_shared, named_barrier_sync};
use baton::smem::SharedRef;
use core::arch::asm;

/// Columns of D (the user's N) per sub-tile: 32 bf16, one 64-byte row.
pub const TRANSPOSED_SUB_COLS: u32 = 32;

/// Stores one bf16 to shared memory.
///
/// # Safety
/// `addr` is a 2-byte aligned shared-memory address this thread may write.
#[inline(always)]
unsafe fn st_shared_u16(addr: u32, value: u16) {
    // SAFETY: per the function contract.
    unsafe {
        asm!("st.shared.u16 [{a}], {v};", a = in(reg32) addr, v = in(reg16) value, options(nostack))
    };
}

/// f32 → bf16 bits, round to nearest even (`cvt.rn.bf16.f32`).
#[inline(always)]
fn to_bf16(x: f32) -> u16 {
    let r: u16;
    // SAFETY: pure conversion.
    unsafe {
        asm!("cvt.rn.bf16.f32 {r}, {x};", r = out(reg16) r, x = in(reg32) x, options(pure, nomem, nostack))
    };
    r
}

/// The transposed epilogue of one consumer warpgroup (all 128 threads run
/// it) over its `RING` sub-tile buffers.
///
/// Protocol contract (as [`StoreEpilogue`](super::epilogue::StoreEpilogue)
/// with beta = 0): D rotates through the `RING` buffers across tiles
/// (`d_next` counts the sub-tiles stored so far); before writing buffer
/// `s` the signalling thread waits until at most `RING - 1` stores are
/// still reading (`cp.async.bulk.wait_group.read`), then the named barrier
/// `1 + wg` (128 threads) lets the warpgroup write it; after the writes
/// `fence.proxy.async.shared`, the named barrier again, and the signalling
/// thread issues the TMA store and commits it. TMA clips D's edges (rows
/// past the user's M, columns past N). Wait for the stores before exit
/// (`store_wait_group::<0>()`).
///
/// ```ignore
/// let epi = TransposedEpilogue { bufs: epi_tiles.at(wg), map_d: tma_d, wg, tid };
/// unsafe { epi.store(&acc, alpha, d_next, |j| (n0 + 32 * j as i32, m0)) };
/// ```
pub struct TransposedEpilogue<'a, const RING: usize> {
    /// This warpgroup's sub-tile buffers.
    pub bufs: SharedRef<'a, [SubTile; RING]>,
    /// D's tensor map (bf16, box {32, rows}, 64-byte swizzle).
    pub map_d: *const TensorMap,
    /// Consumer warpgroup (0 or 1): named barrier `1 + wg`.
    pub wg: u32,
    /// Thread index in the warpgroup (0..128); thread 0 signals.
    pub tid: u32,
}

impl<const RING: usize> TransposedEpilogue<'_, RING> {
    /// Stores the warpgroup's `wgmma` accumulator `acc` (`ACC = N / 2`
    /// registers per thread; register `4Q + 2H + E` holds kernel row
    /// `16·warp + lane / 4 + 8H` — the user's column — and kernel column
    /// `8Q + 2(lane % 4) + E` — the user's row) as bf16 `alpha·acc`, in two
    /// sub-tiles of 32 user columns; `origin(J)` is sub-tile `J`'s (column,
    /// row) in D.
    ///
    /// # Safety
    /// `map_d` is a valid tensor map of D with a box of at most 64 rows.
    #[inline(always)]
    pub unsafe fn store<const ACC: usize>(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        d_next: u32,
        origin: impl Fn(u32) -> (i32, i32),
    ) {
        const { assert!(ACC * 2 <= 64 && ACC % 4 == 0) };
        let (tid, wg) = (self.tid, self.wg);
        let signaller = tid == 0;
        let (warp, lane) = (tid / 32, tid % 32);
        let bufs = self.bufs;
        baton::unroll!(J in [0, 1] {
            // The buffer is free once the store issued from it one rotation
            // ago has finished reading it.
            if signaller {
                wait_ring_read::<RING>();
            }
            named_barrier_sync(1 + wg, 128);
            let slot = (d_next + J) % RING as u32;
            // SAFETY: slot < RING.
            let buf_tile = unsafe { bufs.at_unchecked(slot as usize) };
            let buf = buf_tile.addr();
            // Warps 2J and 2J + 1 hold kernel rows 32J .. 32J + 32: this
            // sub-tile's columns.
            if warp / 2 == J {
                baton::unroll!(H in [0, 1] {
                    // The user's column inside the sub-tile.
                    let col = (warp % 2) * 16 + lane / 4 + 8 * H;
                    baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7] {
                        if (Q as usize) < ACC / 4 {
                            baton::unroll!(E in [0, 1] {
                                // The user's row: kernel column 8Q + 2(lane % 4) + E.
                                let row = 8 * Q + 2 * (lane % 4) + E;
                                let off = swizzled64(row, col / 2) + 2 * (col % 2);
                                let x = alpha * acc[(4 * Q + 2 * H + E) as usize % ACC];
                                // SAFETY: the buffer is this warpgroup's and
                                // its store has read it; row < 64, col < 32:
                                // in bounds.
                                unsafe { st_shared_u16(buf + off, to_bf16(x)) };
                            });
                        }
                    });
                });
            }
            fence_proxy_async_shared();
            named_barrier_sync(1 + wg, 128);
            if signaller {
                let (c0, r0) = origin(J);
                // SAFETY: D map per the contract; the buffer holds the
                // finished sub-tile (fenced for the async proxy).
                unsafe { store_2d(self.map_d, buf_tile, c0, r0) };
                store_commit_group();
            }
        });
    }
}
