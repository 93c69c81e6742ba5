//! Per-thread math of the online softmax: `exp2`, `log2`, quad shuffles,
//! bf16 packing, constant-index unrolling.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// `ex2.approx.ftz.f32`: 2^x (`-inf` → 0).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    let y: f32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!("ex2.approx.ftz.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
    };
    y
}

/// `fma.rn.f32`: `a·b + c` rounded once. Rust does not contract `a * b -
/// c` into an FMA (two roundings are its semantics), so the softmax's
/// `s·scale − max` is an `FMUL` and an `FADD` unless written with this.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let d: f32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!("fma.rn.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    d
}

/// Coefficients of the degree-3 polynomial for 2^f on `[0, 1)` (FA4's
/// `exp2` emulation): relative error below 8.8e-5, under bf16's half ulp
/// (2^-9) by a factor 20. `p(0) = 1` exactly, so 2^-127 (from `-inf`) is 0.
pub const EXP2_POLY: [f32; 4] = [1.0, 0.695_146_14, 0.227_564_4, 0.077_119_09];

/// `1.5·2^23 + 127`: `x + EXP2_MAGIC` rounded down holds `⌊x⌋ + 127` in
/// its low mantissa bits (for `x` in `[-127, 128)`), so shifting its bits
/// left by 23 gives the bits of `2^⌊x⌋`.
pub const EXP2_MAGIC: f32 = 12_583_039.0;

/// 2^x on the FMA pipe instead of the MUFU (the softmax's bottleneck at
/// d = 64: as many `ex2` per block as the tensor pipe has cycles), for
/// `x ≤ 0` (and `-inf` → 0; NaN stays NaN): `x` clamped to -127, split
/// into `⌊x⌋ + f`, 2^f by [`EXP2_POLY`], times `2^⌊x⌋` built from bits.
/// Nine FMA/ALU instructions against one MUFU `ex2`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn exp2_fma(x: f32) -> f32 {
    let y: f32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!(
            "{{",
            ".reg .f32 xc, t, j, f, p;",
            ".reg .b32 e;",
            "max.NaN.f32 xc, {x}, 0fC2FE0000;",
            "add.rm.f32 t, xc, {magic};",
            "sub.f32 j, t, {magic};",
            "sub.f32 f, xc, j;",
            "fma.rn.f32 p, f, {c3}, {c2};",
            "fma.rn.f32 p, p, f, {c1};",
            "fma.rn.f32 p, p, f, {c0};",
            "shl.b32 e, t, 23;",
            "mul.f32 {y}, p, e;",
            "}}",
            y = out(reg32) y,
            x = in(reg32) x,
            magic = in(reg32) EXP2_MAGIC,
            c0 = in(reg32) EXP2_POLY[0],
            c1 = in(reg32) EXP2_POLY[1],
            c2 = in(reg32) EXP2_POLY[2],
            c3 = in(reg32) EXP2_POLY[3],
            options(pure, nomem, nostack)
        )
    };
    y
}

/// `lg2.approx.ftz.f32`: log2(x).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    let y: f32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!("lg2.approx.ftz.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
    };
    y
}

/// `shfl.sync.bfly`: the value of lane `lane ^ mask` (whole warp converged).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn shfl_xor(x: f32, mask: u32) -> f32 {
    let y: f32;
    // SAFETY: every lane of the warp executes it (full member mask).
    unsafe {
        asm!("shfl.sync.bfly.b32 {y}, {x}, {m}, 0x1f, 0xffffffff;", y = out(reg32) y, x = in(reg32) x, m = in(reg32) mask, options(nomem, nostack))
    };
    y
}

/// Max over the 4 lanes of a quad (the lanes holding one accumulator row).
#[inline(always)]
pub fn quad_max(x: f32) -> f32 {
    let x = x.max(shfl_xor(x, 1));
    x.max(shfl_xor(x, 2))
}

/// Sum over the 4 lanes of a quad.
#[inline(always)]
pub fn quad_sum(x: f32) -> f32 {
    let x = x + shfl_xor(x, 1);
    x + shfl_xor(x, 2)
}

/// `x`, which the compiler may not see through: a value derived from it
/// inside a loop is computed inside the loop (not hoisted out and kept
/// live across it, which spills in the persistent tile loop).
#[cfg(target_arch = "nvptx64")]
pub use baton::arch::ptx::opaque;

/// Two floats as bf16x2 (round to nearest even): `lo` in bits 0..16.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
    };
    r
}

/// `unroll_below!(C < n, { body })`: `body` once per constant `C` in
/// `0..n` (`n ≤ 64`, a constant per instantiation: the copies at or past `n`
/// fold away), so register arrays are indexed by constants only.
#[macro_export]
macro_rules! unroll_below {
    ($c:ident < $n:expr, $body:block) => {
        baton::unroll!($c in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63] {
            if ($c as usize) < $n $body
        });
    };
}

// ----- host forms (CPU tests of the softmax step on the simulated warpgroup,
// `baton::arch::cpu::run_warpgroup`) -----------------------------------------

/// Host form of [`exp2`]: `f32::exp2` (`-inf` → 0).
#[cfg(not(target_arch = "nvptx64"))]
pub fn exp2(x: f32) -> f32 {
    x.exp2()
}

/// Host form of [`fma`]: `f32::mul_add` (rounded once).
#[cfg(not(target_arch = "nvptx64"))]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// Host form of [`exp2_fma`]: the same steps in f32 (round-down add,
/// polynomial with fused multiply-adds, the power of two from bits).
#[cfg(not(target_arch = "nvptx64"))]
pub fn exp2_fma(x: f32) -> f32 {
    let xc = if x.is_nan() { x } else { x.max(-127.0) };
    // x + magic rounded down: the magic's ulp is 1, so floor(x) + magic.
    let t = xc.floor() + EXP2_MAGIC;
    let f = xc - (t - EXP2_MAGIC);
    let [c0, c1, c2, c3] = EXP2_POLY;
    let p = f.mul_add(c3, c2).mul_add(f, c1).mul_add(f, c0);
    p * f32::from_bits(t.to_bits() << 23)
}

/// Host form of [`log2`].
#[cfg(not(target_arch = "nvptx64"))]
pub fn log2(x: f32) -> f32 {
    x.log2()
}

/// Host form of [`shfl_xor`]: the simulated warpgroup's shuffle (all 128
/// threads of a `baton::arch::cpu::run_warpgroup` call it).
#[cfg(not(target_arch = "nvptx64"))]
pub fn shfl_xor(x: f32, mask: u32) -> f32 {
    f32::from_bits(baton::arch::cpu::shfl_xor(x.to_bits(), mask))
}

/// Host form of [`opaque`]: the value.
#[cfg(not(target_arch = "nvptx64"))]
pub fn opaque(x: u32) -> u32 {
    x
}

/// Host form of [`pack_bf16x2`]: round to nearest even, NaN → the
/// canonical bf16 NaN (as `cvt.rn.bf16x2.f32`).
#[cfg(not(target_arch = "nvptx64"))]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let bf16 = |x: f32| {
        if x.is_nan() {
            0x7FC0
        } else {
            let b = x.to_bits();
            (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        }
    };
    bf16(lo) | bf16(hi) << 16
}
