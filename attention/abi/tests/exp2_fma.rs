//! The attention kernel's FMA-pipe `exp2` (`attention/kernel/src/math.rs`,
//! `exp2_fma`: ⌊x⌋ by a round-down add of a magic number, a degree-3
//! polynomial for 2^f, the power of two from bits), its host form, against
//! f64 over the softmax's range: relative error ≤ 1e-4 (bf16's half ulp is
//! 2^-9 ≈ 2e-3), `-inf` → exactly 0, NaN stays NaN.
#![cfg(not(target_arch = "nvptx64"))]

#[path = "../../kernel/src/math.rs"]
#[allow(dead_code)]
mod math;

use math::exp2_fma;

#[test]
fn exp2_fma_within_1e4_over_the_softmax_range() {
    let mut worst = 0f64;
    // x = s·scale − max ≤ 0 (a rounding may make it slightly positive).
    let n = 2_000_000;
    for i in 0..=n {
        let x = 0.5 - 126.5 * i as f32 / n as f32;
        let got = f64::from(exp2_fma(x));
        let want = f64::from(x).exp2();
        let rel = ((got - want) / want).abs();
        // NaN fails: the comparison is false.
        assert!(rel <= 1e-4, "exp2_fma({x}) = {got}, expected {want}");
        worst = worst.max(rel);
    }
    println!("max relative error {worst:.2e}");
}

#[test]
fn exp2_fma_edges() {
    assert_eq!(exp2_fma(f32::NEG_INFINITY).to_bits(), 0);
    assert_eq!(exp2_fma(-1000.0), 0.0);
    assert!(exp2_fma(f32::NAN).is_nan());
    assert_eq!(exp2_fma(0.0), 1.0);
    for k in 0..=126 {
        // Integers: 2^-k exactly (p(0) = 1).
        assert_eq!(exp2_fma(-(k as f32)), (-(k as f32)).exp2(), "2^-{k}");
    }
}
