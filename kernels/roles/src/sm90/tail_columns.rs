//! The columns of a consumer warpgroup's `64 × BN` accumulator block past
//! its last whole 32-column epilogue sub-tile (BN not a multiple of 32:
//! the FP8 256×88 tile's last 24 columns), stored from registers straight
//! to global memory. A 32-column TMA store box there would write the next
//! tile's first columns; D's tensor map has one box width.
//!
//! Protocol contract: no barrier. Each thread writes only its own
//! accumulators' elements (rows `row`, `row + 8` of its warp's 16, two
//! adjacent columns per 8-column group), which no other thread or TMA
//! store of the launch writes; nothing reads D during the launch, so the
//! generic stores need no ordering against the TMA stores of the other
//! columns.

use super::epilogue::{SUB_COLS, pack_bf16x2};
use baton::arch::ptx::st_global_u32;

/// Stores the accumulator groups from the first past the whole 32-column
/// sub-tiles (`16 · ⌊ACC/16⌋` registers on) up to `ACC / 4`: register
/// `4Q + 2H (+1)` is row `row0 + 16·warp + lane/4 + 8H`, column `col0 +
/// 8Q + 2·(lane % 4) (+1)`, converted as the TMA epilogue converts
/// (`cvt.rn.bf16x2.f32`, alpha 1, no C), clipped to `m × n`.
///
/// # Safety
/// `d` is the base of D (global memory, bf16, rows `ld` elements apart,
/// `ld` even, at least `m` rows of `n` columns) that this launch writes
/// and nothing reads; `n` is even; the elements this warpgroup stores are
/// written by no one else (the tile's own columns).
///
/// ```ignore
/// unsafe { store_tail_columns::<44>(&acc, tid, d, d_ld, (row0, col0), (m, n)) };
/// ```
#[inline(always)]
pub unsafe fn store_tail_columns<const ACC: usize>(
    acc: &[f32; ACC],
    tid: u32,
    d: *mut u16,
    ld: u32,
    (row0, col0): (u32, u32),
    (m, n): (u32, u32),
) {
    let whole_groups = (ACC / (SUB_COLS / 2)) * (SUB_COLS / 8);
    let (warp, lane) = (tid / 32, tid % 32);
    let row = row0 + warp * 16 + lane / 4;
    baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] {
        if (Q as usize) >= whole_groups && (Q as usize) < ACC / 4 {
            let col = col0 + 8 * Q + 2 * (lane % 4);
            baton::unroll!(H in [0, 1] {
                let r = row + 8 * H;
                let i = (4 * Q + 2 * H) as usize;
                if r < m && col < n {
                    let at = r as usize * ld as usize + col as usize;
                    // SAFETY: (r, col), (r, col + 1) lie in D (r < m, col
                    // + 1 < n: n and col are even); `ld` even keeps the
                    // word 4-byte aligned; only this thread writes it
                    // (the contract).
                    unsafe { st_global_u32(d.add(at) as *mut u32, pack_bf16x2(acc[i], acc[i + 1])) };
                }
            });
        }
    });
}
