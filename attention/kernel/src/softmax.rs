//! The consumer's per-K/V-block softmax step on plain accumulator
//! fragments: masking (only where a block reaches past `seq_kv` or the
//! causal diagonal), the online max and sum, `P = exp2(scale·(S − max))`
//! and the rescale factors of O, and P packed as the A fragments of
//! O += P·V. No barriers, no shared memory: the fragments in, the
//! fragments out.

use crate::math::{exp2, exp2_fma, fma, pack_bf16x2, quad_max};
use baton_attention_abi::AttentionParams;

/// A thread's two rows' running max (raw scores) and partial sum (its
/// quad's share; summed over the quad at the end).
pub struct RowState {
    /// Running max of each row's raw scores (`-inf` before any column).
    pub m: [f32; 2],
    /// This thread's share of each row's sum of `exp2(scale·(s − max))`.
    pub l: [f32; 2],
}

impl RowState {
    /// Before the first K/V block: max `-inf`, sum 0.
    #[inline(always)]
    pub fn new() -> Self {
        Self {
            m: [f32::NEG_INFINITY; 2],
            l: [0.0; 2],
        }
    }
}

impl Default for RowState {
    fn default() -> Self {
        Self::new()
    }
}

/// What masking and scaling need to know about this warpgroup's rows.
pub struct Block<'p> {
    /// The call (`seq_kv`, `scale_log2`).
    pub p: &'p AttentionParams,
    /// This thread's lane in its warp.
    pub lane: u32,
    /// This thread's two rows, in the head.
    pub rows: [u32; 2],
    /// Row `i` sees columns `0..=i` only.
    pub causal: bool,
    /// This warpgroup's first row.
    pub wg_row0: u32,
    /// K/V rows per block.
    pub bn: u32,
}

impl Block<'_> {
    /// Masks S of K/V block `j` where needed, updates the row max and sum
    /// and turns S into P = exp2(scale·(S − max)) in place; returns the
    /// factors the previous O must be scaled by.
    ///
    /// Accumulator chunk c (elements 4c..4c+4): columns 8c + 2·(lane%4) +
    /// {0, 1}, of row 0 (elements 4c, 4c+1) and row 1 (4c+2, 4c+3).
    ///
    /// Every `EMU`-th accumulator chunk's `exp2` runs on the FMA pipe
    /// ([`exp2_fma`]: chunks `c` with `c % EMU == EMU − 1`; `EMU = 0`:
    /// none), so that the MUFU and the FMA pipe share the exponentials.
    ///
    /// Its softmax is [`softmax`](Self::softmax)'s, written out: calling
    /// that changed the branch layout of every other entry's PTX, and they
    /// are measured as they are (Session 13).
    #[inline(always)]
    pub fn mask_and_softmax<const SACC: usize, const EMU: usize>(
        &self,
        s: &mut [f32; SACC],
        rs: &mut RowState,
        j: u32,
    ) -> [f32; 2] {
        let (p, lane, rows, causal) = (self.p, self.lane, self.rows, self.causal);
        // Only blocks reaching past seq_kv or, causal, past this
        // warpgroup's first row (the diagonal blocks) are masked.
        let col0 = j * self.bn;
        if col0 + self.bn > p.seq_kv || (causal && col0 + self.bn > self.wg_row0 + 1) {
            crate::unroll_below!(C < SACC / 4, {
                let c = C as usize;
                let col = col0 + 8 * C + 2 * (lane % 4);
                for e in 0..2u32 {
                    let dead = col + e >= p.seq_kv;
                    if dead || (causal && col + e > rows[0]) {
                        s[4 * c + e as usize] = f32::NEG_INFINITY;
                    }
                    if dead || (causal && col + e > rows[1]) {
                        s[4 * c + 2 + e as usize] = f32::NEG_INFINITY;
                    }
                }
            });
        }
        let (mut mx0, mut mx1) = (rs.m[0], rs.m[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = C as usize;
            mx0 = mx0.max(s[4 * c].max(s[4 * c + 1]));
            mx1 = mx1.max(s[4 * c + 2].max(s[4 * c + 3]));
        });
        mx0 = quad_max(mx0);
        mx1 = quad_max(mx1);
        // A row with nothing unmasked yet keeps base 0 (exp2(-inf) = 0).
        let base0 = if mx0 == f32::NEG_INFINITY {
            0.0
        } else {
            mx0 * p.scale_log2
        };
        let base1 = if mx1 == f32::NEG_INFINITY {
            0.0
        } else {
            mx1 * p.scale_log2
        };
        let corr = [
            exp2(rs.m[0] * p.scale_log2 - base0),
            exp2(rs.m[1] * p.scale_log2 - base1),
        ];
        rs.m = [mx0, mx1];
        let (mut l0, mut l1) = (rs.l[0] * corr[0], rs.l[1] * corr[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = 4 * C as usize;
            let on_fma = EMU > 0 && (C as usize) % EMU == EMU - 1;
            let e = |x: f32| if on_fma { exp2_fma(x) } else { exp2(x) };
            // `scale·s − base` as one FMA per element (`math::fma`; Rust
            // does not contract an FMUL and an FADD): one issue slot of the
            // softmax's ~8 per S element fewer (SASS), +4.6–8.5 % at d = 128
            // and d = 64 (BENCHMARKS.md "Session 11 — lead").
            let scaled = |x: f32, base: f32| fma(x, p.scale_log2, -base);
            s[c] = e(scaled(s[c], base0));
            s[c + 1] = e(scaled(s[c + 1], base0));
            s[c + 2] = e(scaled(s[c + 2], base1));
            s[c + 3] = e(scaled(s[c + 3], base1));
            l0 += s[c] + s[c + 1];
            l1 += s[c + 2] + s[c + 3];
        });
        rs.l = [l0, l1];
        corr
    }

    /// [`mask_and_softmax`](Self::mask_and_softmax) with a compact mask:
    /// each masked element costs one compare and one select against its
    /// row's last visible column (the other form: a compare against
    /// `seq_kv`, one against the row, ~3 instructions). The cross-tile
    /// entry uses it (+8 % at s1k causal d = 64 with it, and slower than
    /// before without it, Session 13); the d = 128 entries ran 2–3 %
    /// slower with it (ptxas's schedule of their loop; BENCHMARKS.md
    /// "Session 13 — ATTN"), so they keep the other form.
    #[inline(always)]
    pub fn mask_compact_and_softmax<const SACC: usize, const EMU: usize>(
        &self,
        s: &mut [f32; SACC],
        rs: &mut RowState,
        j: u32,
    ) -> [f32; 2] {
        let p = self.p;
        // Only blocks reaching past seq_kv or, causal, past this
        // warpgroup's first row (the diagonal blocks) are masked (`seq_kv`
        // ≥ 1).
        let col0 = j * self.bn;
        let last = p.seq_kv - 1;
        let limit = |row: u32| if self.causal { row.min(last) } else { last };
        if col0 + self.bn - 1 > limit(self.wg_row0) {
            // Relative to the thread's first column of chunk 0: element e of
            // chunk C is masked iff 8·C + e > rel.
            let first = (col0 + 2 * (self.lane % 4)) as i32;
            let rel = [
                limit(self.rows[0]) as i32 - first,
                limit(self.rows[1]) as i32 - first,
            ];
            crate::unroll_below!(C < SACC / 4, {
                let c = C as usize;
                for e in 0..2usize {
                    let k = (8 * c + e) as i32;
                    if k > rel[0] {
                        s[4 * c + e] = f32::NEG_INFINITY;
                    }
                    if k > rel[1] {
                        s[4 * c + 2 + e] = f32::NEG_INFINITY;
                    }
                }
            });
        }
        self.softmax::<SACC, EMU>(s, rs)
    }

    /// The online softmax of a masked block: the row max and sum, S into P
    /// in place, the factors the previous O must be scaled by.
    #[inline(always)]
    fn softmax<const SACC: usize, const EMU: usize>(
        &self,
        s: &mut [f32; SACC],
        rs: &mut RowState,
    ) -> [f32; 2] {
        let p = self.p;
        let (mut mx0, mut mx1) = (rs.m[0], rs.m[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = C as usize;
            mx0 = mx0.max(s[4 * c].max(s[4 * c + 1]));
            mx1 = mx1.max(s[4 * c + 2].max(s[4 * c + 3]));
        });
        mx0 = quad_max(mx0);
        mx1 = quad_max(mx1);
        // A row with nothing unmasked yet keeps base 0 (exp2(-inf) = 0).
        let base0 = if mx0 == f32::NEG_INFINITY {
            0.0
        } else {
            mx0 * p.scale_log2
        };
        let base1 = if mx1 == f32::NEG_INFINITY {
            0.0
        } else {
            mx1 * p.scale_log2
        };
        let corr = [
            exp2(rs.m[0] * p.scale_log2 - base0),
            exp2(rs.m[1] * p.scale_log2 - base1),
        ];
        rs.m = [mx0, mx1];
        let (mut l0, mut l1) = (rs.l[0] * corr[0], rs.l[1] * corr[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = 4 * C as usize;
            let on_fma = EMU > 0 && (C as usize) % EMU == EMU - 1;
            let e = |x: f32| if on_fma { exp2_fma(x) } else { exp2(x) };
            // `scale·s − base` as one FMA per element (`math::fma`; Rust
            // does not contract an FMUL and an FADD): one issue slot of the
            // softmax's ~8 per S element fewer (SASS), +4.6–8.5 % at d = 128
            // and d = 64 (BENCHMARKS.md "Session 11 — lead").
            let scaled = |x: f32, base: f32| fma(x, p.scale_log2, -base);
            s[c] = e(scaled(s[c], base0));
            s[c + 1] = e(scaled(s[c + 1], base0));
            s[c + 2] = e(scaled(s[c + 2], base1));
            s[c + 3] = e(scaled(s[c + 3], base1));
            l0 += s[c] + s[c + 1];
            l1 += s[c + 2] + s[c + 3];
        });
        rs.l = [l0, l1];
        corr
    }
}

/// P as the A fragments of O += P·V: for K rows 16kk..16kk+16, registers
/// 4kk..4kk+4 = accumulator elements 8kk..8kk+8 packed in pairs.
#[inline(always)]
pub fn pack_p<const SACC: usize, const PACK: usize>(s: &[f32; SACC]) -> [u32; PACK] {
    // SAFETY: all-zero is a valid [u32; PACK]; every element is written below.
    let mut pf: [u32; PACK] = unsafe { core::mem::zeroed() };
    crate::unroll_below!(C < PACK, {
        let c = C as usize;
        pf[c] = pack_bf16x2(s[2 * c], s[2 * c + 1]);
    });
    pf
}
