//! The FP8 GEMMs' A scales, read in place from a `[K/128][ld]` buffer (M
//! contiguous, any `ld ≥ M`) as one vector: the producer's TMA loads of a
//! stage's A-scale boxes ([`load_a_scales`]) and the consumers' offset of
//! a K block's scales in them ([`a_scale_offset`]), per
//! [`BlockwiseFP8PaddedTilePayload`](baton::tile_pipeline::BlockwiseFP8PaddedTilePayload).
//! Backend-agnostic
//! (`baton::arch::current`): the kernels run them on the GPU, the CPU role
//! test (`tests/cpu_fp8_a_scales.rs`) on the simulated TMA.

use baton::arch::current::BarrierRef;
use baton::arch::current::tma::{TensorMap, load_2d_at};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{
    A_SCALE_BOX_ROWS, A_SCALE_BOX_STRIDE, BlockwiseFP8PaddedStage, a_scale_box_start,
    a_scale_whole_box_rows,
};

/// The place of K block `kb`'s first A scale of a tile in the 16-byte
/// granule its boxes start on: `(kb · sa_ld) mod 4` (a tile's first row is
/// a multiple of 4 and its boxes 128 rows apart, so
/// `a_scale_box_start(kb, sa_ld, row0)`'s offset for each); 0 for every K
/// block when `sa_ld` is a multiple of 4. The consumer reads row `r` of box
/// `i` at float `A_SCALE_BOX_STRIDE · i + off + r`.
///
/// ```
/// use baton_kernel_roles::sm90::fp8_a_scales::a_scale_offset;
/// assert_eq!(a_scale_offset(3, 67), (3 * 67) % 4);
/// assert_eq!(a_scale_offset(5, 68), 0);
/// ```
#[inline(always)]
pub const fn a_scale_offset(kb: u32, sa_ld: u32) -> u32 {
    a_scale_box_start(kb, sa_ld, 0).1
}

/// Issues the TMA loads of K block `kb`'s A scales of the `a_rows` rows
/// from row `row0` on (a multiple of 4) into the stage's `a_scales`: per
/// 128-row box `i` that holds rows, from the 16-byte granule that holds
/// the scale of (`row0 + 128·i`, `kb`) in the scale vector
/// ([`a_scale_box_start`]), `a_scale_box_floats(rows)` floats at float
/// `A_SCALE_BOX_STRIDE · i` — a whole box
/// ([`a_scale_whole_box_rows`]`(BM)` rows) through `tma_sa` (box
/// `a_scale_box_floats` of those: 132 floats, 68 for a 64-row tile), a partial one (the last tile row's) through `tma_sa_tail`
/// (box `a_scale_box_floats(tail_rows mod 128)`). Their bytes are
/// `4 · a_scale_floats(a_rows)` (zero fill past the vector included).
///
/// # Safety
/// The maps describe the scale vector (one-row maps, the boxes above);
/// the calling thread holds the stage as producer and `bar` expects these
/// bytes.
///
/// ```ignore
/// // The FP8 producer, per K block `kb` of tile row `tm` (`a_rows` of its rows inside M):
/// unsafe { load_a_scales::<BM, BN, 128, _>(st, bar, (tma_sa, tma_sa_tail), a_rows, tm * bm, kb, sa_ld) };
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn load_a_scales<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    Map: Fn() -> *const TensorMap,
>(
    st: SharedRef<'_, BlockwiseFP8PaddedStage<BM, BN, BK>>,
    bar: BarrierRef<'_>,
    (tma_sa, tma_sa_tail): (Map, Map),
    a_rows: u32,
    row0: u32,
    kb: u32,
    sa_ld: u32,
) {
    // Rows of a whole box: 128, or the whole tile's when it has fewer.
    let full_box = a_scale_whole_box_rows(BM as u32);
    baton::unroll!(W in [0, 1] {
        if (W as usize) * (A_SCALE_BOX_ROWS as usize) < BM && a_rows > W * A_SCALE_BOX_ROWS {
            let rows = a_rows - W * A_SCALE_BOX_ROWS;
            let map = if rows >= full_box { tma_sa() } else { tma_sa_tail() };
            let (c0, _) = a_scale_box_start(kb, sa_ld, row0 + W * A_SCALE_BOX_ROWS);
            // SAFETY: forwarded; box W fits a_scales from float
            // A_SCALE_BOX_STRIDE · W on (BlockwiseFP8PaddedTilePayload).
            unsafe {
                load_2d_at(
                    map,
                    smem_field!(st, BlockwiseFP8PaddedStage<BM, BN, BK>, a_scales),
                    4 * A_SCALE_BOX_STRIDE * W,
                    bar,
                    c0 as i32,
                    0,
                )
            };
        }
    });
}
