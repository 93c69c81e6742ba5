//! The transposed TMA-store epilogue of the swap-AB GEMM (small M): the
//! kernel computes `Dᵀ = B·Aᵀ`, so a consumer warpgroup's `64 × N`
//! accumulators are 64 columns (the user's N) by `N` rows (the user's M,
//! N = 16, 32, 64 or 128) of the user's row-major D. They are written
//! transposed into 64-byte-swizzled sub-tiles of `rows × 32` bf16 (the
//! layout of [`SubTile`](super::epilogue::SubTile), of which the first
//! `rows ≤ 64` rows are used; N = 128 fills two per 32 user columns, one
//! per 64-row half) and stored by TMA with D's map (box {32, rows}).
//! beta = 0 only (no C).

use super::epilogue::{SubTile, swizzled64, wait_ring_read};
use baton::arch::ptx::tma::{TensorMap, store_2d, store_commit_group, store_wait_group};
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
/// it) over its `RING` sub-tile buffers (`RING` even).
///
/// Protocol contract (beta = 0): a tile's two sub-tiles come from
/// different warps — sub-tile `J` (32 user columns) from warps `2J` and
/// `2J + 1` of the warpgroup — so each warp pair writes and stores its own
/// sub-tile, concurrently with the other pair (with N = 128 a pair's
/// sub-tile is two buffers, its user rows 0..64 and 64..128: `HALVES = 2`,
/// `HALVES = N / 64` rounded up). D rotates through the `RING` buffers
/// across tiles (`d_next`, a multiple of `2 · HALVES`, counts the buffers
/// stored so far): pair `J` always uses the buffers of parity `J`, and its
/// first thread (the pair's signaller, `tid % 64 == 0`) issues every store
/// from them, one commit group each, so its own bulk async-groups track
/// exactly those buffers. Before writing its `HALVES` buffers the
/// signaller waits until at most `RING / 2 − HALVES` of its stores are
/// still reading (`cp.async.bulk.wait_group.read`), then the pair's named barrier
/// (`3 + 2·wg + J`, 64 threads) lets the pair write it; after the writes
/// `fence.proxy.async.shared`, the pair's barrier again, and the signaller
/// issues the TMA store and commits it. TMA clips D's edges (rows past the
/// user's M, columns past N). Before exit both signallers wait for their
/// stores ([`drain`](Self::drain)).
///
/// One fence and two 64-thread barriers per warp instead of two fences and
/// four 128-thread barriers, and the two sub-tiles written at once rather
/// than one after the other.
///
/// ```ignore
/// let epi = TransposedEpilogue { bufs: epi_tiles.at(wg), map_d: tma_d, wg, tid };
/// unsafe { epi.store(&acc, alpha, d_next, |j| (n0 + 32 * j as i32, m0)) };
/// epi.drain();
/// ```
pub struct TransposedEpilogue<'a, const RING: usize> {
    /// This warpgroup's sub-tile buffers.
    pub bufs: SharedRef<'a, [SubTile; RING]>,
    /// D's tensor map (bf16, box {32, rows}, 64-byte swizzle).
    pub map_d: *const TensorMap,
    /// Consumer warpgroup (0 or 1): named barriers `3 + 2·wg` and
    /// `4 + 2·wg` (one per warp pair).
    pub wg: u32,
    /// Thread index in the warpgroup (0..128); threads 0 and 64 signal.
    pub tid: u32,
}

impl<const RING: usize> TransposedEpilogue<'_, RING> {
    /// Stores the warpgroup's `wgmma` accumulator `acc` (`ACC = N / 2`
    /// registers per thread; register `4Q + 2H + E` holds kernel row
    /// `16·warp + lane / 4 + 8H` — the user's column — and kernel column
    /// `8Q + 2(lane % 4) + E` — the user's row) as bf16 `alpha·acc`, in two
    /// sub-tiles of 32 user columns (each of `HALVES` buffers of 64 user
    /// rows, [`halves`](Self::halves)); `origin(J)` is sub-tile `J`'s
    /// (column, row) in D, its second half 64 rows further. `d_next` counts
    /// buffers (`2 · HALVES` per tile).
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
        let halves = Self::halves::<ACC>();
        const {
            assert!(
                ACC * 2 <= 128
                    && ACC % 4 == 0
                    && RING % 2 == 0
                    && RING >= 2
                    && RING <= 8
                    && RING / 2 >= (ACC * 2).div_ceil(64)
            )
        };
        let (warp, lane) = (self.tid / 32, self.tid % 32);
        // This warp pair's sub-tile: warps 2J and 2J + 1 hold kernel rows
        // 32J .. 32J + 32, its columns.
        let pair = warp / 2;
        let signaller = self.tid % 64 == 0;
        let bar = 3 + 2 * self.wg + pair;
        if signaller {
            // The buffers are free once the stores this thread issued from
            // them one rotation (RING / 2 of its stores) ago have read
            // them: at most RING / 2 − HALVES still reading. (The count
            // folds: one instruction.)
            match RING / 2 + 1 - halves as usize {
                1 => wait_ring_read::<1>(),
                2 => wait_ring_read::<2>(),
                3 => wait_ring_read::<3>(),
                _ => wait_ring_read::<4>(),
            }
        }
        named_barrier_sync(bar, 64);
        // Half R of the pair's sub-tile: buffer `d_next + 2R + pair`.
        let buf_of = |half: u32| {
            let slot = (d_next + 2 * half + pair) % RING as u32;
            // SAFETY: slot < RING.
            unsafe { self.bufs.at_unchecked(slot as usize) }
        };
        baton::unroll!(H in [0, 1] {
            // The user's column inside the sub-tile.
            let col = (warp % 2) * 16 + lane / 4 + 8 * H;
            baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                if (Q as usize) < ACC / 4 {
                    let buf = buf_of(Q / 8).addr();
                    baton::unroll!(E in [0, 1] {
                        // The user's row: kernel column 8Q + 2(lane % 4) + E,
                        // row `8(Q mod 8) + …` of half Q / 8.
                        let row = 8 * (Q % 8) + 2 * (lane % 4) + E;
                        let off = swizzled64(row, col / 2) + 2 * (col % 2);
                        let x = alpha * acc[(4 * Q + 2 * H + E) as usize % ACC];
                        // SAFETY: the buffer is this pair's and its last
                        // store has read it; row < 64, col < 32: in bounds.
                        unsafe { st_shared_u16(buf + off, to_bf16(x)) };
                    });
                }
            });
        });
        fence_proxy_async_shared();
        named_barrier_sync(bar, 64);
        if signaller {
            let (c0, r0) = origin(pair);
            baton::unroll!(R in [0, 1] {
                if R < halves {
                    // SAFETY: D map per the contract; the buffer holds the
                    // finished half (fenced for the async proxy).
                    unsafe { store_2d(self.map_d, buf_of(R), c0, r0 + 64 * R as i32) };
                    store_commit_group();
                }
            });
        }
    }

    /// Buffers per warp pair and tile: 64-row halves of the user's rows
    /// (`⌈N / 64⌉` for `ACC = N / 2`: 1, or 2 at N = 128).
    ///
    /// ```ignore
    /// d_next += 2 * TransposedEpilogue::<4>::halves::<64>();
    /// ```
    #[inline(always)]
    pub const fn halves<const ACC: usize>() -> u32 {
        (ACC * 2).div_ceil(64) as u32
    }

    /// Before the CTA exits: each signaller waits until its stores are
    /// complete (all 128 threads may call it; the others return at once).
    ///
    /// ```ignore
    /// epi.drain();
    /// ```
    #[inline(always)]
    pub fn drain(&self) {
        if self.tid % 64 == 0 {
            store_wait_group::<0>();
        }
    }
}
