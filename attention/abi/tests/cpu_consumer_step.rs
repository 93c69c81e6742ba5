//! The attention consumer's per-block math on the CPU backend against an
//! f64 reference: one consumer warpgroup (128 simulated threads,
//! `baton::arch::cpu::run_warpgroup`) runs the kernel's own code —
//! `attention/kernel/src/softmax.rs` (masking, online max and sum, P, the
//! rescale factors, P packed as A fragments), `math.rs` (host forms:
//! shuffles through the simulated warp) and `pv.rs` (the RS `wgmma` shapes
//! of O += P·V, simulated) — in the order `fwd.rs`'s consumer loop runs it:
//! S_0; then per block S_j, O ·= corr_{j−1}, O += P_{j−1}·V_{j−1}, softmax
//! of S_j (causal d = 64 cases: every 4th chunk's exp2 by `exp2_fma`, the
//! kernel's `EMU` option); O ·= corr, the last P·V; O / l. S = Q·Kᵀ is issued as `fwd.rs`'s `issue_s` does
//! (SS `wgmma`, 128-byte swizzled Q and K boxes, descriptors stepped by 32
//! bytes per K = 16). Shared memory is laid out as TMA writes it (rows past
//! `seq_kv` zero-filled).
//!
//! Not covered here: the pipelines, the ordered barrier and the TMA
//! producer/epilogue (`cpu_fwd.rs` runs all of `fwd.rs` on the CPU
//! backend; `crates/baton/tests/loom_attention.rs` model-checks their
//! synchronization).
//!
//! Sizes: head dim 64 (176-row K/V blocks; 128-row when causal) and 128
//! (128-row), the kernel's configurations, ragged `seq_q`/`seq_kv` (1..300), causal and not, both
//! warpgroups' rows of a tile; fresh random inputs; relative error ≤ 2e-2
//! and NaN never passes; a control with the causal mask switched off in
//! the kernel code only must fail.
#![cfg(not(target_arch = "nvptx64"))]

#[path = "../../kernel/src/math.rs"]
#[allow(dead_code)]
mod math;
#[path = "../../kernel/src/pv.rs"]
#[allow(dead_code)]
mod pv;
#[path = "../../kernel/src/softmax.rs"]
mod softmax;

mod common;
use baton::arch::cpu::{CpuBlock, run_warpgroup};
use baton::arch::wgmma::ops::{mma_m64n128k16_f32_bf16, mma_m64n176k16_f32_bf16};
use baton::arch::wgmma::{self, SmemLayout, descriptor_k_major, descriptor_mn_major};
use baton_attention_abi::AttentionParams;
use baton_attention_abi::schedule::kv_blocks;
use common::{Rng, bf16};
use pv::{PvMma, PvN64, PvN128};
use softmax::{Block, RowState, pack_p};
use std::sync::Mutex;

/// Query rows per tile (two consumer warpgroups of 64).
const BM: u32 = 128;
/// Bytes of one 64 × 64 bf16 box.
const BOX_BYTES: usize = 64 * 128;
/// Shared memory: Q (≤ 2 boxes), then ≤ 3 K/V blocks of K and V (d = 64:
/// one box of 176 rows; d = 128: two of 128).
const SMEM: usize = 2 * BOX_BYTES + 3 * 2 * 176 * 128 + 3 * 2 * 2 * 128 * 128;

#[repr(C, align(1024))]
struct Smem([u8; SMEM]);

/// Writes `bits` at `(row, col)` of the 64-column boxes at `base`, `box_bytes`
/// apart, 128-byte rows swizzled as TMA writes them.
fn put(smem: &mut [u8], base: usize, box_bytes: usize, row: usize, col: usize, bits: u16) {
    let lin = row * 128 + (col % 64) * 2;
    let off = base + (col / 64) * box_bytes + (lin ^ (((lin >> 7) & 7) << 4));
    smem[off..off + 2].copy_from_slice(&bits.to_le_bytes());
}

/// S = Q·Kᵀ's `wgmma` for N = `SACC`·2 (the kernel's `Bf16N128` / `qk::Bf16N176`).
///
/// # Safety
/// As the `wgmma` it issues.
unsafe fn s_mma<const SACC: usize>(s: &mut [f32; SACC], da: u64, db: u64, accumulate: bool) {
    // SAFETY: forwarded; the lengths are equal (checked by try_into).
    unsafe {
        match SACC {
            64 => mma_m64n128k16_f32_bf16((&mut s[..]).try_into().unwrap(), da, db, accumulate),
            88 => mma_m64n176k16_f32_bf16((&mut s[..]).try_into().unwrap(), da, db, accumulate),
            n => panic!("no S shape with {n} accumulators here"),
        }
    }
}

/// The call's parameters, shared by the simulated threads.
struct Params(AttentionParams);
// SAFETY: every pointer in it is null and never dereferenced here.
unsafe impl Sync for Params {}
impl Params {
    fn get(&self) -> AttentionParams {
        self.0
    }
}

/// One case: the warpgroup `wg` of query tile `q_tile`.
#[derive(Clone, Copy, Debug)]
struct Case {
    d: usize,
    seq_q: u32,
    seq_kv: u32,
    causal: bool,
    q_tile: u32,
    wg: u32,
}

/// Runs the kernel's consumer step for `case` on the simulated warpgroup
/// (with the mask of `kernel_causal`) and returns the max relative error
/// of O against softmax(scale·QKᵀ + mask)·V in f64 over the rows below
/// `seq_q` (max |O − ref| / max |ref|; NaN: infinite).
fn consumer_error(case: Case, kernel_causal: bool) -> f64 {
    // The kernel's configurations (attention/kernel/src/lib.rs): d = 64 with
    // 176-row K/V blocks (128-row for causal calls), d = 128 with 128-row;
    // the causal d = 64 cases also run the FMA-pipe exp2 on every 4th chunk
    // (`fwd::run`'s `EMU` option, off in the kernels: Session 10 measured
    // it slower at d = 64).
    match (case.d, case.causal) {
        (64, false) => run::<1, 176, 88, 44, 32, 0, false, PvN64>(case, kernel_causal),
        (64, true) => run::<1, 128, 64, 32, 32, 4, true, PvN64>(case, kernel_causal),
        (128, _) => run::<2, 128, 64, 32, 64, 0, false, PvN128>(case, kernel_causal),
        (d, _) => panic!("head dim {d} is not a case here"),
    }
}

/// `NB` boxes of Q (d = 64·NB), `BN`-row K/V blocks, `SACC = BN/2` S
/// accumulators, `PACK = BN/4` P registers, `OACC = 32·NB` O accumulators,
/// every `EMU`-th chunk's exp2 on the FMA pipe (0: none), `COMPACT`: the
/// compact mask (`Block::mask_compact_and_softmax`).
fn run<
    const NB: usize,
    const BN: usize,
    const SACC: usize,
    const PACK: usize,
    const OACC: usize,
    const EMU: usize,
    const COMPACT: bool,
    O: PvMma<OACC>,
>(
    case: Case,
    kernel_causal: bool,
) -> f64 {
    let Case {
        d,
        seq_q,
        seq_kv,
        causal,
        q_tile,
        wg,
    } = case;
    let mut rng = Rng::fresh();
    let q: Vec<u16> = (0..seq_q as usize * d).map(|_| rng.bf16()).collect();
    let k: Vec<u16> = (0..seq_kv as usize * d).map(|_| rng.bf16()).collect();
    let v: Vec<u16> = (0..seq_kv as usize * d).map(|_| rng.bf16()).collect();
    let scale = 1.0 / (d as f64).sqrt();
    let q_row0 = q_tile * BM;
    let wg_row0 = q_row0 + 64 * wg;
    let blocks = kv_blocks(q_row0, seq_q, seq_kv, BM, BN as u32, causal) as usize;
    assert!(
        blocks <= 3,
        "case needs {blocks} K/V blocks; the smem holds 3"
    );

    // Shared memory as TMA fills it: this warpgroup's 64 Q rows (NB boxes),
    // then per block K (NB boxes of BN rows), then V; out of bounds: zero.
    let kv_box = BN * 128;
    let stage = NB * kv_box;
    let (k_base, v_base) = (NB * BOX_BYTES, NB * BOX_BYTES + blocks * stage);
    let mut smem = Box::new(Smem([0; SMEM]));
    for r in 0..64usize {
        let row = wg_row0 as usize + r;
        if row < seq_q as usize {
            for c in 0..d {
                put(&mut smem.0, 0, BOX_BYTES, r, c, q[row * d + c]);
            }
        }
    }
    for j in 0..blocks {
        for r in 0..BN {
            let row = j * BN + r;
            if row < seq_kv as usize {
                for c in 0..d {
                    put(
                        &mut smem.0,
                        k_base + j * stage,
                        kv_box,
                        r,
                        c,
                        k[row * d + c],
                    );
                    put(
                        &mut smem.0,
                        v_base + j * stage,
                        kv_box,
                        r,
                        c,
                        v[row * d + c],
                    );
                }
            }
        }
    }

    let p = AttentionParams {
        q_maps: core::ptr::null(),
        k_maps: core::ptr::null(),
        v_maps: core::ptr::null(),
        o_maps: core::ptr::null(),
        lse: core::ptr::null_mut(),
        seq_q,
        seq_kv,
        q_heads: 1,
        batch_heads: 1,
        heads_per_kv_head: 1,
        heads_per_section: 1,
        causal: kernel_causal as u32,
        heads_inner: 0,
        pingpong: 1,
        scale_log2: (scale * std::f64::consts::LOG2_E) as f32,
        tile_order: std::ptr::null(),
    };
    let params = Params(p);
    let out = Mutex::new(vec![f64::NAN; 64 * d]);
    let block = CpuBlock::new(*smem);
    block.run_warps(1, |_warp, _smem| {
        run_warpgroup(|tid| {
            // fwd.rs's consumer, one tile, the pipelines' stages replaced by
            // fixed block addresses.
            let p = params.get();
            let (warp, lane) = (tid / 32, tid % 32);
            let rows = [
                wg_row0 + 16 * warp + lane / 4,
                wg_row0 + 16 * warp + lane / 4 + 8,
            ];
            let blk = Block {
                p: &p,
                lane,
                rows,
                causal: kernel_causal,
                wg_row0,
                bn: BN as u32,
            };
            let issue_s = |s: &mut [f32; SACC], j: usize| {
                wgmma::fence();
                for kk in 0..4 * NB {
                    let (bx, off) = (kk / 4, (kk % 4) * 32);
                    let da =
                        descriptor_k_major((bx * BOX_BYTES + off) as u32, SmemLayout::Swizzle128B);
                    let db = descriptor_k_major(
                        (k_base + j * stage + bx * kv_box + off) as u32,
                        SmemLayout::Swizzle128B,
                    );
                    // SAFETY: all 128 threads issue it; Q and K are loaded.
                    unsafe { s_mma(s, da, db, kk > 0) };
                }
                wgmma::commit_group();
            };
            let issue_pv = |o: &mut [f32; OACC], pf: &[u32; PACK], j: usize| {
                wgmma::fence();
                for kk in 0..BN / 16 {
                    let k4 = 4 * kk;
                    let db = descriptor_mn_major(
                        (v_base + j * stage + 16 * 128 * kk) as u32,
                        SmemLayout::Swizzle128B,
                        kv_box as u32,
                        1024,
                    );
                    // SAFETY: all 128 threads issue it with the same V.
                    unsafe { O::mma(o, [pf[k4], pf[k4 + 1], pf[k4 + 2], pf[k4 + 3]], db) };
                }
                wgmma::commit_group();
            };
            let mut o = [0f32; OACC];
            let mut s = [0f32; SACC];
            let mut rs = RowState::new();
            let rescale = |o: &mut [f32; OACC], corr: [f32; 2]| {
                for c in (0..OACC).step_by(4) {
                    o[c] *= corr[0];
                    o[c + 1] *= corr[0];
                    o[c + 2] *= corr[1];
                    o[c + 3] *= corr[1];
                }
            };
            issue_s(&mut s, 0);
            wgmma::wait_group::<0>();
            // The causal d = 64 entry's compact mask, or the other form.
            let softmax = |s: &mut [f32; SACC], rs: &mut RowState, j: u32| {
                if COMPACT {
                    blk.mask_compact_and_softmax::<SACC, EMU>(s, rs, j)
                } else {
                    blk.mask_and_softmax::<SACC, EMU>(s, rs, j)
                }
            };
            softmax(&mut s, &mut rs, 0);
            let mut corr = [1.0f32; 2];
            let mut pf: [u32; PACK] = pack_p::<SACC, PACK>(&s);
            for j in 1..blocks {
                issue_s(&mut s, j);
                rescale(&mut o, corr);
                issue_pv(&mut o, &pf, j - 1);
                wgmma::wait_group::<1>();
                corr = softmax(&mut s, &mut rs, j as u32);
                wgmma::wait_group::<0>();
                pf = pack_p::<SACC, PACK>(&s);
            }
            rescale(&mut o, corr);
            issue_pv(&mut o, &pf, blocks - 1);
            wgmma::wait_group::<0>();
            let (l0, l1) = (math::quad_sum(rs.l[0]), math::quad_sum(rs.l[1]));
            let inv = [
                if l0 > 0.0 { 1.0 / l0 } else { 0.0 },
                if l1 > 0.0 { 1.0 / l1 } else { 0.0 },
            ];
            let mut out = out.lock().unwrap();
            for (i, &x) in o.iter().enumerate() {
                let (r, c) = wgmma::accumulator_position(tid, i as u32);
                out[r as usize * d + c as usize] = (x * inv[(i / 2) % 2]) as f64;
            }
        });
    });

    // f64 reference over this warpgroup's rows below seq_q.
    let out = out.into_inner().unwrap();
    let (mut worst, mut peak) = (0f64, 0f64);
    for r in 0..64usize {
        let row = wg_row0 as usize + r;
        if row >= seq_q as usize {
            continue;
        }
        let cols = if causal {
            (row + 1).min(seq_kv as usize)
        } else {
            seq_kv as usize
        };
        let scores: Vec<f64> = (0..cols)
            .map(|c| {
                (0..d)
                    .map(|e| bf16(q[row * d + e]) * bf16(k[c * d + e]))
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let l: f64 = w.iter().sum();
        for e in 0..d {
            let want: f64 = (0..cols).map(|c| w[c] * bf16(v[c * d + e])).sum::<f64>() / l;
            let got = out[r * d + e];
            let err = (got - want).abs();
            worst = if err.is_nan() {
                f64::INFINITY
            } else {
                worst.max(err)
            };
            peak = peak.max(want.abs());
        }
    }
    worst / peak.max(1e-6)
}

const TOL: f64 = 2e-2;

fn check(cases: &[Case]) {
    for &case in cases {
        let e = consumer_error(case, case.causal);
        println!("{case:?}: max rel error {e:.2e}");
        assert!(e <= TOL, "{case:?}: error {e}");
    }
}

#[test]
fn non_causal_ragged_d64_d128() {
    let mut cases = Vec::new();
    for d in [64, 128] {
        for (seq_q, seq_kv, q_tile, wg) in [(1, 1, 0, 0), (77, 200, 0, 1), (200, 300, 1, 0)] {
            cases.push(Case {
                d,
                seq_q,
                seq_kv,
                causal: false,
                q_tile,
                wg,
            });
        }
    }
    check(&cases);
}

#[test]
fn causal_ragged_d64_d128() {
    let mut cases = Vec::new();
    for d in [64, 128] {
        // Diagonal blocks of both warpgroups, a ragged last tile, seq_kv
        // shorter than seq_q.
        for (seq_q, seq_kv, q_tile, wg) in [
            (130, 130, 0, 0),
            (130, 130, 0, 1),
            (200, 200, 1, 0),
            (300, 150, 1, 1),
        ] {
            cases.push(Case {
                d,
                seq_q,
                seq_kv,
                causal: true,
                q_tile,
                wg,
            });
        }
    }
    check(&cases);
}

/// Control: the kernel code without its causal mask against the causal
/// reference must fail (the comparison sees the mask).
#[test]
fn missing_causal_mask_is_caught() {
    let case = Case {
        d: 64,
        seq_q: 130,
        seq_kv: 130,
        causal: true,
        q_tile: 0,
        wg: 0,
    };
    let e = consumer_error(case, false);
    println!("without the mask: max rel error {e:.2e}");
    assert!(e > 10.0 * TOL, "an unmasked kernel passed (error {e})");
}
