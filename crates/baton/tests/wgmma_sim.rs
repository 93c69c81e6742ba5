//! The CPU `wgmma` simulation (`baton::arch::cpu::wgmma`) against an f64
//! matmul: SS (Q·Kᵀ-style, both operands K-major, 128-byte swizzle, K
//! stepped through the atoms by descriptor advance) and RS (P·V-style, A from
//! registers, B MN-major) at N = 64..256 (SS also 176 and 224), on fresh random bf16 inputs.
//!
//! The test lays out shared memory (as TMA's 128-byte swizzle writes it) and
//! distributes / gathers the register fragments with its own copy of the PTX
//! ISA tables (§9.7.15.5.1.1, "Matrix Fragments for wgmma.mma_async.m64nNk16"),
//! independent of the simulation's; the `wrong_*` tests show that a layout
//! one step off (a swapped register pair, an accumulator row half swapped,
//! an unswizzled operand) is caught by the same comparison.
#![cfg(not(loom))]

use baton::arch::cpu::{CpuBlock, wgmma};
use baton::arch::wgmma::ops::*;
use baton::arch::wgmma::{SmemLayout, descriptor_k_major, descriptor_mn_major};
use baton::numeric::{Bf16, SmallFloat};
use std::sync::Mutex;

/// Bytes of the simulated shared memory.
const SMEM: usize = 96 * 1024;

/// A 1024-byte aligned shared-memory window.
#[repr(C, align(1024))]
struct Smem([u8; SMEM]);

/// Deterministic xorshift generator, reseeded per test from the clock.
struct Rng(u64);
impl Rng {
    fn fresh() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {t:#x}");
        Self(t | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A bf16 in [-2, 2).
    fn bf16(&mut self) -> u16 {
        let x = (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
        bf16_bits(x as f32)
    }
}

fn bf16_bits(x: f32) -> u16 {
    // Round to nearest even.
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

fn bf16(bits: u16) -> f64 {
    Bf16::from_bits(bits).to_f64()
}

/// Writes `bits` as element `col` of row `row` of a 64-column box at `base`
/// (128-byte rows), as TMA with 128-byte swizzle writes it (`swizzle`) or
/// unswizzled.
fn put(smem: &mut [u8], base: usize, row: usize, col: usize, bits: u16, swizzle: bool) {
    let lin = row * 128 + col * 2;
    let off = if swizzle {
        lin ^ (((lin >> 7) & 7) << 4)
    } else {
        lin
    };
    smem[base + off..base + off + 2].copy_from_slice(&bits.to_le_bytes());
}

/// The ISA's accumulator table: element `i` of thread `tid`.
fn acc_pos(tid: usize, i: usize) -> (usize, usize) {
    let (warp, lane) = (tid / 32, tid % 32);
    let row = 16 * warp + lane / 4 + if i % 4 >= 2 { 8 } else { 0 };
    let col = 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
    (row, col)
}

/// The ISA's A-fragment table: register `j`'s low (`h = 0`) or high half.
fn a_pos(tid: usize, j: usize, h: usize) -> (usize, usize) {
    let (warp, lane) = (tid / 32, tid % 32);
    let g = 16 * warp + lane / 4;
    let t2 = 2 * (lane % 4);
    match j {
        0 => (g, t2 + h),
        1 => (g + 8, t2 + h),
        2 => (g, t2 + 8 + h),
        _ => (g + 8, t2 + 8 + h),
    }
}

/// Ways to get a layout wrong, for the tests that must catch them.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Operands written without the 128-byte swizzle.
    Unswizzled,
    /// A's registers 1 and 2 swapped (rows and columns mixed up).
    SwappedARegisters,
    /// Accumulators read with the two row halves (g, g + 8) swapped.
    SwappedAccumulatorRows,
}

/// Max |sim − f64| / max(1, |f64|) of an SS `Q·Kᵀ` product: A 64 × 128
/// (two 64-column boxes), B `n` × 128, in 8 K steps of 16.
fn ss_error(n: usize, fault: Fault) -> f64 {
    let mut rng = Rng::fresh();
    let kdim = 128;
    let a: Vec<u16> = (0..64 * kdim).map(|_| rng.bf16()).collect();
    let b: Vec<u16> = (0..n * kdim).map(|_| rng.bf16()).collect();
    let mut smem = Box::new(Smem([0; SMEM]));
    // A boxes at 0 and 8 KiB; B boxes (n rows of 128 bytes) after them.
    let (a_box, b_base, b_box) = (64 * 128, 2 * 64 * 128, n * 128);
    let sw = fault != Fault::Unswizzled;
    for r in 0..64 {
        for c in 0..kdim {
            put(
                &mut smem.0,
                (c / 64) * a_box,
                r,
                c % 64,
                a[r * kdim + c],
                sw,
            );
        }
    }
    for r in 0..n {
        for c in 0..kdim {
            put(
                &mut smem.0,
                b_base + (c / 64) * b_box,
                r,
                c % 64,
                b[r * kdim + c],
                sw,
            );
        }
    }
    let d = Mutex::new(vec![f64::NAN; 64 * n]);
    let block = CpuBlock::new(*smem);
    block.run_warps(1, |_warp, _smem| {
        wgmma::run_warpgroup(|tid| {
            let mut acc = vec![f32::NAN; n / 2];
            wgmma::fence();
            for kk in 0..kdim / 16 {
                let (bx, off) = (kk / 4, (kk % 4) * 32);
                let da = descriptor_k_major((bx * a_box + off) as u32, SmemLayout::Swizzle128B);
                let db =
                    descriptor_k_major((b_base + bx * b_box + off) as u32, SmemLayout::Swizzle128B);
                let first = kk > 0;
                // SAFETY: all 128 threads issue it; the memory is initialized.
                unsafe {
                    match n {
                        64 => mma_m64n64k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        128 => mma_m64n128k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        160 => mma_m64n160k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        176 => mma_m64n176k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        192 => mma_m64n192k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        224 => mma_m64n224k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        256 => mma_m64n256k16_f32_bf16(
                            (&mut acc[..]).try_into().unwrap(),
                            da,
                            db,
                            first,
                        ),
                        _ => unreachable!(),
                    }
                }
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            gather(&d, tid, &acc, n, fault);
        });
    });
    let d = d.into_inner().unwrap();
    max_error(&d, n, |r, c| {
        (0..kdim)
            .map(|k| bf16(a[r * kdim + k]) * bf16(b[c * kdim + k]))
            .sum()
    })
}

/// Puts thread `tid`'s accumulators into D (row-major 64 × n) by the ISA
/// table (or the faulty one).
fn gather(d: &Mutex<Vec<f64>>, tid: u32, acc: &[f32], n: usize, fault: Fault) {
    let mut d = d.lock().unwrap();
    for (i, &v) in acc.iter().enumerate() {
        let (mut r, c) = acc_pos(tid as usize, i);
        if fault == Fault::SwappedAccumulatorRows {
            r ^= 8;
        }
        d[r * n + c] = v as f64;
    }
}

/// Max relative error of `d` against `reference`; NaN (an element no thread
/// wrote, or a NaN result) counts as infinite.
fn max_error(d: &[f64], n: usize, reference: impl Fn(usize, usize) -> f64) -> f64 {
    let mut worst = 0f64;
    for r in 0..64 {
        for c in 0..n {
            let want = reference(r, c);
            let got = d[r * n + c];
            let e = (got - want).abs() / want.abs().max(1.0);
            worst = if e.is_nan() {
                f64::INFINITY
            } else {
                worst.max(e)
            };
        }
    }
    worst
}

/// Max relative error of an RS `P·V` product: P 64 × `kv` from registers,
/// V `kv` × `n` (rows of the head dimension, `n/64` boxes of `kv` rows),
/// in `kv/16` K steps.
fn rs_error(n: usize, fault: Fault) -> f64 {
    let mut rng = Rng::fresh();
    let kv = 64;
    let p: Vec<u16> = (0..64 * kv).map(|_| rng.bf16()).collect();
    let v: Vec<u16> = (0..kv * n).map(|_| rng.bf16()).collect();
    let mut smem = Box::new(Smem([0; SMEM]));
    let v_box = kv * 128;
    let sw = fault != Fault::Unswizzled;
    for r in 0..kv {
        for c in 0..n {
            put(&mut smem.0, (c / 64) * v_box, r, c % 64, v[r * n + c], sw);
        }
    }
    let d = Mutex::new(vec![f64::NAN; 64 * n]);
    let block = CpuBlock::new(*smem);
    block.run_warps(1, |_warp, _smem| {
        wgmma::run_warpgroup(|tid| {
            let mut acc = vec![f32::NAN; n / 2];
            for kk in 0..kv / 16 {
                let mut regs = [0u32; 4];
                for (j, reg) in regs.iter_mut().enumerate() {
                    for h in 0..2 {
                        let jj = match (fault, j) {
                            (Fault::SwappedARegisters, 1) => 2,
                            (Fault::SwappedARegisters, 2) => 1,
                            _ => j,
                        };
                        let (r, c) = a_pos(tid as usize, jj, h);
                        *reg |= (p[r * kv + 16 * kk + c] as u32) << (16 * h);
                    }
                }
                let db = descriptor_mn_major(
                    (16 * 128 * kk) as u32,
                    SmemLayout::Swizzle128B,
                    v_box as u32,
                    1024,
                );
                let first = kk > 0;
                wgmma::fence();
                // SAFETY: all 128 threads issue it with the same B.
                unsafe {
                    match n {
                        64 => mma_rs_m64n64k16_f32_bf16_bt(
                            (&mut acc[..]).try_into().unwrap(),
                            regs,
                            db,
                            first,
                        ),
                        128 => mma_rs_m64n128k16_f32_bf16_bt(
                            (&mut acc[..]).try_into().unwrap(),
                            regs,
                            db,
                            first,
                        ),
                        256 => mma_rs_m64n256k16_f32_bf16_bt(
                            (&mut acc[..]).try_into().unwrap(),
                            regs,
                            db,
                            first,
                        ),
                        _ => unreachable!(),
                    }
                }
                wgmma::commit_group();
            }
            wgmma::wait_group::<0>();
            gather(&d, tid, &acc, n, fault);
        });
    });
    let d = d.into_inner().unwrap();
    max_error(&d, n, |r, c| {
        (0..kv)
            .map(|k| bf16(p[r * kv + k]) * bf16(v[k * n + c]))
            .sum()
    })
}

/// f32 rounding once per K = 16 step of sums of size ≤ 16·4·16.
const TOL: f64 = 1e-5;

#[test]
fn ss_matches_f64_at_n64_n128_n160_n176_n192_n224_n256() {
    for n in [64, 128, 160, 176, 192, 224, 256] {
        let e = ss_error(n, Fault::None);
        println!("SS N={n}: max rel error {e:.2e}");
        assert!(e <= TOL, "SS N={n}: error {e}");
    }
}

#[test]
fn rs_matches_f64_at_n64_n128_n256() {
    for n in [64, 128, 256] {
        let e = rs_error(n, Fault::None);
        println!("RS N={n}: max rel error {e:.2e}");
        assert!(e <= TOL, "RS N={n}: error {e}");
    }
}

#[test]
fn wrong_layouts_are_caught() {
    for (what, e) in [
        ("SS unswizzled", ss_error(64, Fault::Unswizzled)),
        (
            "SS accumulator rows",
            ss_error(128, Fault::SwappedAccumulatorRows),
        ),
        ("RS unswizzled", rs_error(128, Fault::Unswizzled)),
        ("RS A registers", rs_error(64, Fault::SwappedARegisters)),
    ] {
        println!("{what}: max rel error {e:.2e}");
        assert!(e > 0.1, "{what}: a wrong layout went unnoticed (error {e})");
    }
}

#[test]
fn rs_with_differing_b_descriptors_panics() {
    let block = CpuBlock::new(Smem([0; SMEM]));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block.run_warps(1, |_warp, _smem| {
            wgmma::run_warpgroup(|tid| {
                let b = descriptor_mn_major(
                    if tid == 5 { 1024 } else { 0 },
                    SmemLayout::Swizzle128B,
                    8192,
                    1024,
                );
                let mut acc = [0f32; 32];
                // SAFETY: deliberately wrong (the simulation must refuse it).
                unsafe { mma_rs_m64n64k16_f32_bf16_bt(&mut acc, [0; 4], b, false) };
            });
        });
    }));
    let msg = r.expect_err("differing B descriptors must panic");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("one operand for the warpgroup"), "{msg}");
}

#[test]
fn mma_outside_a_warpgroup_panics() {
    let r = std::panic::catch_unwind(|| {
        let mut acc = [0f32; 32];
        // SAFETY: deliberately outside a warpgroup (must panic, not run).
        unsafe { mma_m64n64k16_f32_bf16(&mut acc, 0, 0, false) };
    });
    let msg = r.expect_err("must panic");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("run_warpgroup"), "{msg}");
}
