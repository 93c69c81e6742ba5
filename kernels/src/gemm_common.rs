//! Pieces the GEMM kernels share: tile rasterization, bf16 packing, and the
//! epilogue's swizzled staging layout.

use core::arch::asm;

/// Tile `t` of the grouped rasterization → (tile row, tile column): runs of
/// `group_m` tile rows (≥ 1) are walked column by column, so the CTAs in
/// flight share A rows and B columns in L2.
#[inline(always)]
pub fn tile_coords(t: u32, tiles_m: u32, tiles_n: u32, group_m: u32) -> (u32, u32) {
    let per_group = group_m * tiles_n;
    let group = t / per_group;
    let first_m = group * group_m;
    let group_rows = if tiles_m - first_m < group_m {
        tiles_m - first_m
    } else {
        group_m
    };
    let in_group = t % per_group;
    (first_m + in_group % group_rows, in_group / group_rows)
}

/// Packs two f32 into a bf16x2 word (round to nearest even), `lo` in the
/// low half: the element at the lower address.
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: pure conversion.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
    };
    r
}

/// Byte offset of (row, 4-byte column pair `pair`) in a 64×32 bf16 sub-tile
/// with TMA's 64-byte swizzle (16-byte chunk index XOR bits 1..2 of the row).
#[inline(always)]
pub fn swizzled64(row: u32, pair: u32) -> u32 {
    let byte = pair * 4;
    row * 64 + ((((byte >> 4) ^ (row >> 1)) & 3) << 4) + (byte & 15)
}
