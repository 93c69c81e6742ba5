//! FP8 promotion: a K block's partial accumulator, scaled by its A-row and
//! B-block scales, added into the main fp32 accumulators (one FMA per
//! register). Promotion every 128 of K is what keeps the error of the
//! tensor core's limited-precision FP8 accumulation bounded.

use core::arch::asm;

/// `fma.rn.f32`: `a · b + c` with one rounding.
///
/// ```ignore
/// assert_eq!(fma(2.0, 3.0, 1.0), 7.0);
/// ```
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let r: f32;
    // SAFETY: pure arithmetic.
    unsafe {
        asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    r
}

/// Promotion of one K block: `acc += partial × a_scale[row] × b_scale`,
/// with `scales = (a_scale[row], a_scale[row + 8], b_scale_lo, b_scale_hi)`;
/// registers 4Q + 2H (+1) of a `wgmma` accumulator hold row + 8H, columns
/// 8Q + 2(lane % 4) (+1). Columns from `8 · SPLIT` on lie in the next
/// 128-wide B-scale block (`b_scale_hi`): a 192-wide tile straddles two
/// (SPLIT = 16 or 8, by the tile's offset); `SPLIT ≥ ACC / 4`: one block.
///
/// ```ignore
/// promote::<64, 32>(&mut acc, &partial, (sa0, sa1, sb, 0.0));
/// ```
#[inline(always)]
pub fn promote<const ACC: usize, const SPLIT: u32>(
    acc: &mut [f32; ACC],
    partial: &[f32; ACC],
    (sa0, sa1, sb_lo, sb_hi): (f32, f32, f32, f32),
) {
    let (s0, s1) = (sa0 * sb_lo, sa1 * sb_lo);
    let (h0, h1) = if (SPLIT as usize) < ACC / 4 {
        (sa0 * sb_hi, sa1 * sb_hi)
    } else {
        (s0, s1)
    };
    baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] {
        if (Q as usize) < ACC / 4 {
            let (r0, r1) = if Q < SPLIT { (s0, s1) } else { (h0, h1) };
            baton::unroll!(R in [0, 1, 2, 3] {
                let i = (4 * Q + R) as usize;
                acc[i] = fma(partial[i], if R < 2 { r0 } else { r1 }, acc[i]);
            });
        }
    });
}

/// Promotes with the tile's B-scale split: `split_q` is 16 or 8 for a
/// 192-wide tile at an even or odd tile column, anything for BN ≤ 128
/// (one B-scale block per tile). A warp-uniform branch picks a promotion
/// compiled for that split, so no per-register select is needed.
///
/// ```ignore
/// promote_tile::<96, 192>(&mut acc, &partial, scales, (128 - c0 % 128) / 8);
/// ```
#[inline(always)]
pub fn promote_tile<const ACC: usize, const BN: usize>(
    acc: &mut [f32; ACC],
    partial: &[f32; ACC],
    scales: (f32, f32, f32, f32),
    split_q: u32,
) {
    if BN <= 128 {
        promote::<ACC, 32>(acc, partial, scales);
    } else if split_q == 16 {
        promote::<ACC, 16>(acc, partial, scales);
    } else {
        promote::<ACC, 8>(acc, partial, scales);
    }
}
