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
/// (SPLIT = 16 or 8, by the tile's offset), a 96-wide one at offsets 64
/// and 96 (SPLIT = 8, 4); `SPLIT ≥ ACC / 4`: one block.
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

/// [`promote`] with the split chosen at run time: the 8-column groups
/// before `split_q` use `b_scale_lo`, the others `b_scale_hi` (one select
/// per group and row half). For widths whose straddling tiles split at
/// any 8-column group (88: ten split points), where a promotion compiled
/// per split would multiply the main loop's code.
///
/// ```ignore
/// promote_split_at::<44>(&mut acc, &partial, (sa0, sa1, sb_lo, sb_hi), 5);
/// ```
#[inline(always)]
pub fn promote_split_at<const ACC: usize>(
    acc: &mut [f32; ACC],
    partial: &[f32; ACC],
    (sa0, sa1, sb_lo, sb_hi): (f32, f32, f32, f32),
    split_q: u32,
) {
    let (s0, s1) = (sa0 * sb_lo, sa1 * sb_lo);
    let (h0, h1) = (sa0 * sb_hi, sa1 * sb_hi);
    baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] {
        if (Q as usize) < ACC / 4 {
            let (r0, r1) = if Q < split_q { (s0, s1) } else { (h0, h1) };
            baton::unroll!(R in [0, 1, 2, 3] {
                let i = (4 * Q + R) as usize;
                acc[i] = fma(partial[i], if R < 2 { r0 } else { r1 }, acc[i]);
            });
        }
    });
}

/// Whether every `BN`-wide tile (at a multiple of BN) lies within two
/// 128-wide B-scale blocks: its offsets in a block are multiples of
/// `gcd(BN, 128)`, so the furthest starts `128 − gcd` in and must end by
/// 256 (88, 96, 160, 192: yes; 176: no, a tile at offset 96 reaches a
/// third block).
///
/// ```
/// use baton_kernel_roles::sm90::promotion::spans_at_most_two_scale_blocks;
/// assert!(spans_at_most_two_scale_blocks(88) && spans_at_most_two_scale_blocks(192));
/// assert!(!spans_at_most_two_scale_blocks(176));
/// ```
pub const fn spans_at_most_two_scale_blocks(bn: usize) -> bool {
    let (mut a, mut b) = (bn, 128);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    bn <= 128 + a
}

/// Whether a `BN`-wide tile can straddle two 128-wide B-scale blocks: BN
/// neither divides 128 nor is a multiple of it (96, 160, 192, …; tiles sit
/// at multiples of BN, so one at offset `c0 mod 128 > 128 − BN` spans two).
/// Such a tile reads two B scales per K block and promotes with the split
/// ([`promote_tile`]).
///
/// ```
/// use baton_kernel_roles::sm90::promotion::straddles_scale_blocks;
/// assert!(straddles_scale_blocks(96) && straddles_scale_blocks(192));
/// assert!(!straddles_scale_blocks(32) && !straddles_scale_blocks(128) && !straddles_scale_blocks(256));
/// ```
pub const fn straddles_scale_blocks(bn: usize) -> bool {
    bn % 128 != 0 && 128 % bn != 0
}

/// Promotes with the tile's B-scale split: `split_q = (128 − c0 mod 128) /
/// 8` for a tile at column c0, the 8-column groups before the next B-scale
/// block. When the tile does not straddle two blocks (`split_q ≥ ACC / 4`,
/// or BN per [`straddles_scale_blocks`]) every column uses `b_scale_lo`;
/// otherwise, for widths that are multiples of 32 (whose splits are
/// multiples of 4), a warp-uniform branch picks a promotion compiled for
/// that split, so no per-register select is needed; other widths (88)
/// select per register ([`promote_split_at`]).
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
    const {
        assert!(
            spans_at_most_two_scale_blocks(BN),
            "a tile reads at most two B scales per K block"
        )
    };
    // (Each guard `groups > S` is a constant: a split that cannot occur for
    // this width compiles to nothing. Splits are multiples of 4 and below
    // `groups` when the tile straddles, so the last arm is never a
    // straddling tile; widths of 64 mod 128 sit at multiples of 64: splits
    // 8 and 16 only.)
    let groups = (ACC / 4) as u32;
    if !straddles_scale_blocks(BN) || split_q >= groups {
        promote::<ACC, 32>(acc, partial, scales);
    } else if BN % 32 != 0 {
        // Splits at any 8-column group: chosen per register at run time.
        promote_split_at::<ACC>(acc, partial, scales, split_q);
    } else if groups > 4 && split_q == 4 && BN % 128 != 64 {
        promote::<ACC, 4>(acc, partial, scales);
    } else if groups > 8 && split_q == 8 {
        promote::<ACC, 8>(acc, partial, scales);
    } else if groups > 12 && split_q == 12 && BN % 128 != 64 {
        promote::<ACC, 12>(acc, partial, scales);
    } else if groups > 16 && split_q == 16 {
        promote::<ACC, 16>(acc, partial, scales);
    } else if groups > 20 && split_q == 20 && BN % 128 != 64 {
        promote::<ACC, 20>(acc, partial, scales);
    } else {
        promote::<ACC, 32>(acc, partial, scales);
    }
}
