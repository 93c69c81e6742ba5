//! Narrow number formats: bf16, f16, FP8 (e4m3, e5m2), FP4 (e2m1) and the
//! block-scale formats ue8m0 and ue4m3 — decode to `f32`/`f64`, encode from
//! `f32` with round-to-nearest-even.
//!
//! Arch-independent and `no_std` (only `core`): the same conversions serve
//! the CPU simulation of `tcgen05` MMAs, the host quantizers and tests.
//!
//! Every format is a `#[repr(transparent)]` newtype over its bit pattern
//! ([`Bf16`], [`F16`], [`E4m3`], [`E5m2`], [`E2m1`], [`Ue8m0`], [`Ue4m3`])
//! and implements [`SmallFloat`]:
//!
//! * **decode** ([`SmallFloat::to_f32`], [`SmallFloat::to_f64`]) is exact:
//!   every finite value of every format here is representable in `f32`;
//! * **encode** ([`SmallFloat::from_f32`]) rounds to nearest, ties to even,
//!   and **saturates** like PTX `cvt.rn.satfinite`: any value (infinities
//!   included) whose rounded magnitude exceeds the largest finite value
//!   encodes as ±that value ([`SmallFloat::MAX`]). NaN encodes as the
//!   format's canonical NaN (formats without NaN: see each type). Values
//!   below the smallest subnormal round to ±0 by the same rule; `-0.0` keeps
//!   its sign in signed formats.
//!
//! Unsigned formats ([`Ue8m0`], [`Ue4m3`]) encode negative inputs as their
//! smallest value (saturation at the low end).
//!
//! | type | bits | exp/mant | bias | max finite | inf | NaN codes |
//! |---|---|---|---|---|---|---|
//! | [`Bf16`] | 16 | 8/7 | 127 | ≈3.39e38 (`0x7f7f`) | `0x7f80` | exp all ones, mant ≠ 0 |
//! | [`F16`] | 16 | 5/10 | 15 | 65504 (`0x7bff`) | `0x7c00` | exp all ones, mant ≠ 0 |
//! | [`E4m3`] (OCP `e4m3fn`) | 8 | 4/3 | 7 | 448 (`0x7e`) | none | `0x7f`, `0xff` |
//! | [`E5m2`] | 8 | 5/2 | 15 | 57344 (`0x7b`) | `0x7c` | `0x7d..=0x7f` and negatives |
//! | [`E2m1`] | 4 | 2/1 | 1 | 6 (`0x7`) | none | none |
//! | [`Ue8m0`] | 8 | 8/0 | 127 | 2^127 (`0xfe`) | none | `0xff` |
//! | [`Ue4m3`] | 8 (7 used) | 4/3 | 7 | 448 (`0x7e`) | none | `0x7f`; bit 7 set: invalid, decodes as NaN |
//!
//! FP4 is stored two per byte: **element 0 (the lower index along the
//! contiguous dimension) is the low nibble** (bits 0–3), element 1 the high
//! nibble — the order of CUTLASS's sub-byte arrays and of the packed `e2m1`
//! operands the `tcgen05` block-scaled MMAs read ([`pack_e2m1x2`],
//! [`unpack_e2m1x2`]). Note that PTX `cvt.rn.satfinite.e2m1x2.f32 d, a, b`
//! puts its *first* source `a` in the *high* nibble.
//!
//! ```
//! use baton::numeric::{E4m3, E2m1, SmallFloat, Ue8m0, pack_e2m1x2};
//!
//! assert_eq!(E4m3::from_f32(1.0).to_bits(), 0x38);
//! assert_eq!(E4m3::from_f32(1000.0).to_f32(), 448.0); // saturates
//! assert_eq!(Ue8m0::from_bits(127).to_f32(), 1.0);
//! let byte = pack_e2m1x2(E2m1::from_f32(0.5), E2m1::from_f32(-6.0));
//! assert_eq!(byte, 0xf1); // element 0 = 0.5 in the low nibble
//! ```

/// A narrow floating-point format stored as its bit pattern.
///
/// Implemented by every format of this module; generic code (quantizers,
/// the MMA simulation) goes through it.
///
/// ```
/// use baton::numeric::{E5m2, F16, SmallFloat};
///
/// fn round_trip<T: SmallFloat>(x: f32) -> f32 {
///     T::from_f32(x).to_f32()
/// }
/// assert_eq!(round_trip::<F16>(0.1), 0.099975586);
/// assert_eq!(round_trip::<E5m2>(3.0), 3.0);
/// ```
pub trait SmallFloat: Copy + PartialEq + core::fmt::Debug {
    /// Short lowercase name of the format (`"e4m3"`).
    const NAME: &'static str;
    /// Number of bits of one encoded value (4 for [`E2m1`]).
    const BITS: u32;
    /// Largest finite value (encoders saturate to it).
    const MAX: Self;
    /// The encoding from its bit pattern (low [`SmallFloat::BITS`] bits).
    fn from_code(code: u32) -> Self;
    /// The bit pattern, zero-extended.
    fn code(self) -> u32;
    /// Exact value as `f32` (NaN for NaN codes).
    fn to_f32(self) -> f32;
    /// Exact value as `f64`.
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    /// Nearest value, ties to even, saturating to ±[`SmallFloat::MAX`]
    /// (see the module documentation for NaN and negative inputs).
    fn from_f32(x: f32) -> Self;
    /// Whether this is a NaN encoding.
    fn is_nan(self) -> bool {
        self.to_f32().is_nan()
    }
}

/// Shape of a binary floating-point format (IEEE-like layout: sign,
/// exponent, mantissa).
#[derive(Clone, Copy)]
struct Spec {
    /// Exponent bits.
    e: u32,
    /// Mantissa bits.
    m: u32,
    bias: i32,
    signed: bool,
    /// Exponent field 0 means subnormal (false only for ue8m0).
    subnormals: bool,
    /// Largest finite magnitude code.
    max_code: u32,
    /// Magnitude codes at or above this are inf (if `has_inf`) / NaN.
    inf_code: Option<u32>,
    /// First NaN magnitude code; codes in `nan_from..=mask` are NaN.
    nan_from: Option<u32>,
    /// Canonical NaN magnitude code written by the encoder (formats without
    /// NaN write `max_code`).
    nan_code: u32,
}

impl Spec {
    const fn mag_bits(&self) -> u32 {
        self.e + self.m
    }
    const fn sign_bit(&self) -> u32 {
        if self.signed { 1 << self.mag_bits() } else { 0 }
    }
}

/// `2^k` as f64, exact for k in [-1022, 1023].
const fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

fn decode(s: &Spec, code: u32) -> f64 {
    let mag_mask = (1u32 << s.mag_bits()) - 1;
    let mag = code & mag_mask;
    let neg = s.signed && code & s.sign_bit() != 0;
    // Bits above an unsigned format's fields make an invalid code: NaN.
    let invalid = !s.signed && code >> s.mag_bits() != 0;
    let v = if invalid || s.nan_from.is_some_and(|n| mag >= n) {
        f64::NAN
    } else if s.inf_code == Some(mag) {
        f64::INFINITY
    } else {
        let exp = (mag >> s.m) as i32;
        let mant = mag & ((1 << s.m) - 1);
        if exp == 0 && s.subnormals {
            mant as f64 * pow2(1 - s.bias - s.m as i32)
        } else {
            ((1u32 << s.m) + mant) as f64 * pow2(exp - s.bias - s.m as i32)
        }
    };
    if neg { -v } else { v }
}

/// Round-to-nearest-even right shift of `v` by `sh` bits.
fn rne_shr(v: u64, sh: u32) -> u64 {
    if sh == 0 {
        return v;
    }
    if sh > 40 {
        return 0; // v < 2^25: far below half a unit
    }
    let q = v >> sh;
    let r = v & ((1 << sh) - 1);
    let half = 1 << (sh - 1);
    if r > half || (r == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

fn encode(s: &Spec, x: f32) -> u32 {
    if x.is_nan() {
        return s.nan_code;
    }
    let bits = x.to_bits();
    let neg = bits >> 31 != 0;
    if neg && !s.signed {
        return 0; // smallest value of an unsigned format
    }
    let sign = if neg { s.sign_bit() } else { 0 };
    let (fe, fm) = ((bits >> 23) & 0xff, bits & 0x7f_ffff);
    if fe == 0xff {
        return sign | s.max_code; // ±inf saturates
    }
    if fe == 0 && fm == 0 {
        return if s.subnormals { sign } else { 0 }; // ±0 (ue8m0: no zero)
    }
    // |x| = sig · 2^exp2 exactly.
    let (sig, exp2) = if fe == 0 {
        (fm, -149)
    } else {
        (fm | 1 << 23, fe as i32 - 150)
    };
    let log2 = 31 - sig.leading_zeros() as i32 + exp2; // floor(log2 |x|)
    let emin = 1 - s.bias; // exponent of the smallest normal
    let m = s.m as i32;
    let mag = if log2 < emin && s.subnormals {
        // Subnormal range: units of 2^(emin - m); a carry to 2^m is exactly
        // the smallest normal code.
        let sh = (emin - m) - exp2;
        (if sh >= 0 {
            rne_shr(sig as u64, sh as u32)
        } else {
            (sig as u64) << -sh
        }) as i64
    } else if log2 < -s.bias {
        return 0; // below the smallest ue8m0 (2^-127): clamp to it
    } else {
        let sh = (log2 - m) - exp2;
        let q = if sh >= 0 {
            rne_shr(sig as u64, sh as u32)
        } else {
            (sig as u64) << -sh
        };
        // q in [2^m, 2^(m+1)]; a carry to 2^(m+1) steps the exponent.
        (((log2 + s.bias) as i64) << m) + q as i64 - (1i64 << m)
    };
    let mag = if mag > s.max_code as i64 {
        s.max_code
    } else {
        mag as u32
    };
    sign | mag
}

macro_rules! small_float {
    (
        $(#[$meta:meta])*
        $name:ident($repr:ty), $label:literal, $bits:literal, $spec:expr, max = $max:literal
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
        #[repr(transparent)]
        pub struct $name(pub $repr);

        impl $name {
            const SPEC: Spec = $spec;

            /// The value with this bit pattern (no check; see the type's
            /// table of codes).
            pub const fn from_bits(bits: $repr) -> Self {
                Self(bits)
            }

            /// The bit pattern.
            pub const fn to_bits(self) -> $repr {
                self.0
            }
        }

        impl SmallFloat for $name {
            const NAME: &'static str = $label;
            const BITS: u32 = $bits;
            const MAX: Self = Self($max);

            fn from_code(code: u32) -> Self {
                Self((code & ((1u32 << $bits) - 1) as u32) as $repr)
            }

            fn code(self) -> u32 {
                self.0 as u32
            }

            fn to_f32(self) -> f32 {
                decode(&Self::SPEC, self.0 as u32) as f32
            }

            fn to_f64(self) -> f64 {
                decode(&Self::SPEC, self.0 as u32)
            }

            fn from_f32(x: f32) -> Self {
                Self(encode(&Self::SPEC, x) as $repr)
            }
        }
    };
}

small_float! {
    /// bfloat16: 1 sign, 8 exponent, 7 mantissa bits (the top half of an
    /// `f32`). Encode rounds to nearest even and saturates to ±`0x7f7f`
    /// (infinities included); NaN encodes as `0x7fc0`.
    ///
    /// ```
    /// use baton::numeric::{Bf16, SmallFloat};
    /// assert_eq!(Bf16::from_f32(1.0).to_bits(), 0x3f80);
    /// assert_eq!(Bf16::from_f32(f32::INFINITY), Bf16::MAX);
    /// ```
    Bf16(u16), "bf16", 16,
    Spec { e: 8, m: 7, bias: 127, signed: true, subnormals: true, max_code: 0x7f7f,
           inf_code: Some(0x7f80), nan_from: Some(0x7f81), nan_code: 0x7fc0 },
    max = 0x7f7f
}

small_float! {
    /// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits, max 65504.
    /// Encode saturates to ±`0x7bff`; NaN encodes as `0x7e00`.
    ///
    /// ```
    /// use baton::numeric::{F16, SmallFloat};
    /// assert_eq!(F16::from_f32(65504.0).to_bits(), 0x7bff);
    /// assert_eq!(F16::from_bits(0x0001).to_f64(), 2f64.powi(-24));
    /// ```
    F16(u16), "f16", 16,
    Spec { e: 5, m: 10, bias: 15, signed: true, subnormals: true, max_code: 0x7bff,
           inf_code: Some(0x7c00), nan_from: Some(0x7c01), nan_code: 0x7e00 },
    max = 0x7bff
}

small_float! {
    /// FP8 e4m3, OCP `E4M3FN` (PTX `.e4m3`): 1 sign, 4 exponent, 3 mantissa
    /// bits, bias 7, **no infinities**; `0x7f`/`0xff` are NaN, max ±448.
    /// Encode saturates to ±448 (`0x7e`/`0xfe`); NaN encodes as `0x7f`.
    ///
    /// ```
    /// use baton::numeric::{E4m3, SmallFloat};
    /// assert_eq!(E4m3::from_bits(0x7e).to_f32(), 448.0);
    /// assert!(E4m3::from_bits(0xff).is_nan());
    /// assert_eq!(E4m3::from_f32(-1e9).to_bits(), 0xfe);
    /// ```
    E4m3(u8), "e4m3", 8,
    Spec { e: 4, m: 3, bias: 7, signed: true, subnormals: true, max_code: 0x7e,
           inf_code: None, nan_from: Some(0x7f), nan_code: 0x7f },
    max = 0x7e
}

small_float! {
    /// FP8 e5m2 (PTX `.e5m2`): 1 sign, 5 exponent, 2 mantissa bits, bias 15,
    /// IEEE-like (`0x7c` = inf, `0x7d..=0x7f` NaN), max ±57344. Encode
    /// saturates to ±57344 (infinities included); NaN encodes as `0x7e`.
    ///
    /// ```
    /// use baton::numeric::{E5m2, SmallFloat};
    /// assert_eq!(E5m2::from_bits(0x7c).to_f32(), f32::INFINITY);
    /// assert_eq!(E5m2::from_f32(f32::INFINITY).to_f32(), 57344.0);
    /// ```
    E5m2(u8), "e5m2", 8,
    Spec { e: 5, m: 2, bias: 15, signed: true, subnormals: true, max_code: 0x7b,
           inf_code: Some(0x7c), nan_from: Some(0x7d), nan_code: 0x7e },
    max = 0x7b
}

small_float! {
    /// FP4 e2m1 (PTX `.e2m1`), one element in the low 4 bits: 1 sign,
    /// 2 exponent, 1 mantissa bit, bias 1; values ±{0, 0.5, 1, 1.5, 2, 3,
    /// 4, 6}. No infinities and **no NaN**: encode saturates to ±6 and
    /// encodes NaN as `0x7` (+6). Pack two per byte with [`pack_e2m1x2`].
    ///
    /// ```
    /// use baton::numeric::{E2m1, SmallFloat};
    /// assert_eq!(E2m1::from_f32(2.5).to_f32(), 2.0); // tie to even code
    /// assert_eq!(E2m1::from_bits(0xf).to_f32(), -6.0);
    /// ```
    E2m1(u8), "e2m1", 4,
    Spec { e: 2, m: 1, bias: 1, signed: true, subnormals: true, max_code: 0x7,
           inf_code: None, nan_from: None, nan_code: 0x7 },
    max = 0x7
}

small_float! {
    /// UE8M0 block scale (OCP MX `E8M0`, PTX `.ue8m0`): the value of code
    /// `x` is `2^(x - 127)`; `0xff` is NaN; there is no zero (code 0 is
    /// 2^-127). Encode rounds to the nearest power of two (a tie, 1.5·2^e,
    /// goes up: the significand 1.5 rounds to the even 2), clamps to [2^-127, 2^127] (zero and negatives
    /// encode as `0x00`), NaN as `0xff`. For scales that must not
    /// undershoot use [`Ue8m0::from_f32_ceil`].
    ///
    /// ```
    /// use baton::numeric::{SmallFloat, Ue8m0};
    /// assert_eq!(Ue8m0::from_bits(130).to_f32(), 8.0);
    /// assert_eq!(Ue8m0::from_f32(0.25).to_bits(), 125);
    /// ```
    Ue8m0(u8), "ue8m0", 8,
    Spec { e: 8, m: 0, bias: 127, signed: false, subnormals: false, max_code: 0xfe,
           inf_code: None, nan_from: Some(0xff), nan_code: 0xff },
    max = 0xfe
}

small_float! {
    /// UE4M3 block scale (NVFP4's scale, PTX `.ue4m3`): an e4m3 without its
    /// sign — 4 exponent, 3 mantissa bits, bias 7, subnormals, `0x7f` NaN,
    /// max 448 (`0x7e`). Bit 7 is not part of the format: encoders write 0,
    /// and a code with bit 7 set decodes as NaN (invalid). Negative inputs
    /// encode as `0x00` (zero), NaN as `0x7f`.
    ///
    /// ```
    /// use baton::numeric::{SmallFloat, Ue4m3};
    /// assert_eq!(Ue4m3::from_f32(448.0).to_bits(), 0x7e);
    /// assert_eq!(Ue4m3::from_f32(-3.0).to_bits(), 0x00);
    /// assert!(Ue4m3::from_bits(0x80).is_nan());
    /// ```
    Ue4m3(u8), "ue4m3", 8,
    Spec { e: 4, m: 3, bias: 7, signed: false, subnormals: true, max_code: 0x7e,
           inf_code: None, nan_from: Some(0x7f), nan_code: 0x7f },
    max = 0x7e
}

impl Ue8m0 {
    /// The scale 1.0 (`0x7f`).
    ///
    /// ```
    /// use baton::numeric::{SmallFloat, Ue8m0};
    /// assert_eq!(Ue8m0::ONE.to_f32(), 1.0);
    /// ```
    pub const ONE: Self = Self(127);

    /// The smallest power of two `>= x` (PTX `cvt.rp.satfinite.ue8m0x2`),
    /// clamped to [2^-127, 2^127]; zero and negatives give `0x00`, NaN
    /// `0xff`. Quantizers use it so that `amax / scale` never exceeds the
    /// element format's maximum.
    ///
    /// ```
    /// use baton::numeric::{SmallFloat, Ue8m0};
    /// assert_eq!(Ue8m0::from_f32_ceil(5.0).to_f32(), 8.0);
    /// assert_eq!(Ue8m0::from_f32_ceil(4.0).to_f32(), 4.0);
    /// assert_eq!(Ue8m0::from_f32_ceil(1e-40).to_bits(), 0);
    /// ```
    pub fn from_f32_ceil(x: f32) -> Self {
        if x.is_nan() {
            return Self(0xff);
        }
        if x <= 0.0 {
            return Self(0);
        }
        if x == f32::INFINITY {
            return Self(0xfe);
        }
        let bits = x.to_bits();
        let (fe, fm) = ((bits >> 23) as i32, bits & 0x7f_ffff);
        // x = 2^log2 · (1 + frac) (normal) or a subnormal below 2^-126.
        let log2 = if fe == 0 {
            -127 - fm.leading_zeros() as i32 + 9
        } else {
            fe - 127
        };
        let exact = if fe == 0 {
            fm.is_power_of_two()
        } else {
            fm == 0
        };
        let e = if exact { log2 } else { log2 + 1 };
        Self((e + 127).clamp(0, 0xfe) as u8)
    }
}

/// Two FP4 values in one byte: `e0` (the lower element index) in the low
/// nibble, `e1` in the high nibble — the in-memory order of packed `e2m1`
/// operands (CUTLASS sub-byte arrays, `tcgen05` block-scaled MMAs).
///
/// ```
/// use baton::numeric::{E2m1, pack_e2m1x2};
/// assert_eq!(pack_e2m1x2(E2m1::from_bits(0x2), E2m1::from_bits(0xb)), 0xb2);
/// ```
pub const fn pack_e2m1x2(e0: E2m1, e1: E2m1) -> u8 {
    (e0.0 & 0xf) | (e1.0 & 0xf) << 4
}

/// The two FP4 values of a byte, element 0 (low nibble) first; the inverse
/// of [`pack_e2m1x2`].
///
/// ```
/// use baton::numeric::{E2m1, SmallFloat, unpack_e2m1x2};
/// let [a, b] = unpack_e2m1x2(0x71);
/// assert_eq!((a.to_f32(), b.to_f32()), (0.5, 6.0));
/// ```
pub const fn unpack_e2m1x2(byte: u8) -> [E2m1; 2] {
    [E2m1(byte & 0xf), E2m1(byte >> 4)]
}

/// Element `i` of a packed FP4 array (`i / 2`-th byte, low nibble for even
/// `i`).
///
/// ```
/// use baton::numeric::{SmallFloat, e2m1_at};
/// assert_eq!(e2m1_at(&[0x21, 0x00], 1).to_f32(), 1.0);
/// ```
pub fn e2m1_at(packed: &[u8], i: usize) -> E2m1 {
    unpack_e2m1x2(packed[i / 2])[i % 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code of `T`: decode then encode gives the code back (NaNs give
    /// the canonical NaN, which decodes to NaN).
    fn round_trips_every_code<T: SmallFloat>(canonical_nan: Option<u32>) {
        let mut nans = 0;
        for code in 0..(1u32 << T::BITS) {
            let v = T::from_code(code);
            let f = v.to_f32();
            assert_eq!(f.is_nan(), v.is_nan());
            assert_eq!(
                v.to_f64().to_bits(),
                (f as f64).to_bits(),
                "{} {code:#x}",
                T::NAME
            );
            if f.is_nan() {
                nans += 1;
                let back = T::from_f32(f).code();
                assert_eq!(Some(back), canonical_nan, "{} NaN {code:#x}", T::NAME);
                assert!(T::from_code(back).is_nan());
            } else if f.is_infinite() {
                assert_eq!(T::from_f32(f).to_f32(), T::MAX.to_f32().copysign(f));
            } else {
                assert_eq!(T::from_f32(f).code(), code, "{} {code:#x} = {f}", T::NAME);
            }
        }
        assert_eq!(nans > 0, canonical_nan.is_some(), "{}", T::NAME);
    }

    #[test]
    fn every_code_round_trips() {
        round_trips_every_code::<E4m3>(Some(0x7f));
        round_trips_every_code::<E5m2>(Some(0x7e));
        round_trips_every_code::<E2m1>(None);
        round_trips_every_code::<Ue8m0>(Some(0xff));
        round_trips_every_code::<F16>(Some(0x7e00));
        round_trips_every_code::<Bf16>(Some(0x7fc0));
    }

    #[test]
    fn ue4m3_codes() {
        for code in 0..=0xffu8 {
            let v = Ue4m3::from_bits(code);
            if code >= 0x7f {
                assert!(v.is_nan(), "{code:#x}");
                continue;
            }
            // Same value as the positive e4m3 with the same bits.
            assert_eq!(v.to_f32(), E4m3::from_bits(code).to_f32());
            assert_eq!(Ue4m3::from_f32(v.to_f32()).to_bits(), code);
        }
        assert_eq!(Ue4m3::from_f32(f32::NAN).to_bits(), 0x7f);
        assert_eq!(Ue4m3::from_f32(-0.0).to_bits(), 0);
        assert_eq!(Ue4m3::from_f32(1e6).to_bits(), 0x7e);
        assert_eq!(Ue4m3::from_f32(f32::NEG_INFINITY).to_bits(), 0);
    }

    #[test]
    fn decode_is_monotonic() {
        // Positive codes in increasing order give increasing values: the
        // exponent/mantissa fields and the subnormal join are right.
        fn check<T: SmallFloat>() {
            let mut prev = f64::NEG_INFINITY;
            for code in 0..=T::MAX.code() {
                let v = T::from_code(code).to_f64();
                assert!(v > prev, "{} {code:#x}", T::NAME);
                prev = v;
            }
        }
        check::<E4m3>();
        check::<E5m2>();
        check::<E2m1>();
        check::<Ue8m0>();
        check::<Ue4m3>();
        check::<F16>();
        check::<Bf16>();
    }

    #[test]
    fn known_values() {
        assert_eq!(E4m3::from_bits(0x01).to_f64(), 2f64.powi(-9)); // min subnormal
        assert_eq!(E4m3::from_bits(0x08).to_f64(), 2f64.powi(-6)); // min normal
        assert_eq!(E4m3::from_bits(0x38).to_f32(), 1.0);
        assert_eq!(E4m3::from_bits(0xb8).to_f32(), -1.0);
        assert_eq!(
            E4m3::from_bits(0x80).to_f32().to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(E5m2::from_bits(0x7b).to_f32(), 57344.0);
        assert_eq!(E5m2::from_bits(0x01).to_f64(), 2f64.powi(-16));
        assert_eq!(E5m2::from_bits(0x3c).to_f32(), 1.0);
        assert_eq!(E5m2::from_bits(0xfc).to_f32(), f32::NEG_INFINITY);
        let fp4: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for (c, v) in fp4.iter().enumerate() {
            assert_eq!(E2m1::from_bits(c as u8).to_f32(), *v);
            assert_eq!(E2m1::from_bits(c as u8 | 8).to_f32(), -*v);
        }
        assert_eq!(Ue8m0::from_bits(0).to_f64(), 2f64.powi(-127));
        assert_eq!(Ue8m0::from_bits(0xfe).to_f64(), 2f64.powi(127));
        assert_eq!(Ue8m0::MAX.to_f64(), 2f64.powi(127));
        assert_eq!(F16::from_bits(0x3c00).to_f32(), 1.0);
        assert_eq!(F16::from_bits(0x7bff).to_f32(), 65504.0);
        assert_eq!(
            Bf16::from_bits(0x7f7f).to_f32(),
            f32::from_bits(0x7f7f_0000)
        );
        assert_eq!(Ue4m3::MAX.to_f32(), 448.0);
    }

    #[test]
    fn rounding_is_nearest_even() {
        // Midpoints between neighbouring codes go to the even code; anything
        // off the midpoint goes to the nearer code.
        fn check<T: SmallFloat>() {
            for code in 0..T::MAX.code() {
                let (lo, hi) = (T::from_code(code).to_f64(), T::from_code(code + 1).to_f64());
                let mid = ((lo + hi) / 2.0) as f32;
                if mid as f64 != (lo + hi) / 2.0 {
                    continue; // not exact in f32 (bf16 near the top)
                }
                // Even significand; with no mantissa bits (ue8m0) that is
                // the larger power of two.
                let even = if code % 2 == 0 && T::NAME != "ue8m0" {
                    code
                } else {
                    code + 1
                };
                assert_eq!(T::from_f32(mid).code(), even, "{} mid {mid}", T::NAME);
                let below = f32::from_bits(mid.to_bits() - 1);
                let above = f32::from_bits(mid.to_bits() + 1);
                assert_eq!(T::from_f32(below).code(), code, "{} {below}", T::NAME);
                assert_eq!(T::from_f32(above).code(), code + 1, "{} {above}", T::NAME);
            }
        }
        check::<E4m3>();
        check::<E5m2>();
        check::<E2m1>();
        check::<Ue8m0>();
        check::<Ue4m3>();
        check::<F16>();
        check::<Bf16>();
    }

    #[test]
    fn saturation_and_signs() {
        assert_eq!(E4m3::from_f32(464.0).to_bits(), 0x7e); // above 448 + half ulp
        assert_eq!(E4m3::from_f32(f32::INFINITY).to_bits(), 0x7e);
        assert_eq!(E4m3::from_f32(f32::NEG_INFINITY).to_bits(), 0xfe);
        assert_eq!(E4m3::from_f32(f32::NAN).to_bits(), 0x7f);
        assert_eq!(E4m3::from_f32(-0.0).to_bits(), 0x80);
        assert_eq!(E4m3::from_f32(2f32.powi(-11)).to_bits(), 0x00); // quarter of min subnormal
        assert_eq!(E4m3::from_f32(-2f32.powi(-10)).to_bits(), 0x80); // half: tie to 0
        assert_eq!(E4m3::from_f32(f32::from_bits(1)).to_bits(), 0x00);
        assert_eq!(E5m2::from_f32(1e9).to_bits(), 0x7b);
        assert_eq!(E5m2::from_f32(-1e9).to_bits(), 0xfb);
        assert_eq!(E2m1::from_f32(100.0).to_bits(), 0x7);
        assert_eq!(E2m1::from_f32(-5.0).to_bits(), 0xe); // tie 4|6 → even (4)
        assert_eq!(E2m1::from_f32(f32::NAN).to_bits(), 0x7);
        assert_eq!(E2m1::from_f32(0.25).to_bits(), 0x0); // tie 0|0.5 → 0
        assert_eq!(F16::from_f32(1e6).to_bits(), 0x7bff);
        assert_eq!(F16::from_f32(f32::NEG_INFINITY).to_bits(), 0xfbff);
        assert_eq!(Bf16::from_f32(f32::MAX).to_bits(), 0x7f7f);
        assert_eq!(Bf16::from_f32(-0.0).to_bits(), 0x8000);
        assert_eq!(Ue8m0::from_f32(0.0).to_bits(), 0);
        assert_eq!(Ue8m0::from_f32(-4.0).to_bits(), 0);
        assert_eq!(Ue8m0::from_f32(f32::INFINITY).to_bits(), 0xfe);
        assert_eq!(Ue8m0::from_f32(f32::from_bits(1)).to_bits(), 0);
        assert_eq!(Ue8m0::from_f32(f32::NAN).to_bits(), 0xff);
    }

    #[test]
    fn bf16_matches_the_f32_truncation_rule() {
        // For finite, non-saturating f32, bf16 RNE is the classic
        // add-0x7fff-plus-lsb rule; sample the whole f32 range.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x);
            if !f.is_finite() || f.abs() > Bf16::MAX.to_f32() {
                continue;
            }
            let expect = ((x + 0x7fff + ((x >> 16) & 1)) >> 16) as u16;
            assert_eq!(Bf16::from_f32(f).to_bits(), expect, "{f:e}");
        }
    }

    #[test]
    fn ue8m0_ceil() {
        for code in 0..=0xfeu8 {
            let v = Ue8m0::from_bits(code).to_f32();
            assert_eq!(Ue8m0::from_f32_ceil(v).to_bits(), code);
            let above = f32::from_bits(v.to_bits() + 1);
            let expect = if code == 0xfe { 0xfe } else { code + 1 };
            assert_eq!(Ue8m0::from_f32_ceil(above).to_bits(), expect, "{above:e}");
        }
        assert_eq!(Ue8m0::from_f32_ceil(f32::from_bits(1)).to_bits(), 0);
        assert_eq!(Ue8m0::from_f32_ceil(f32::NAN).to_bits(), 0xff);
        assert_eq!(Ue8m0::from_f32_ceil(f32::MAX).to_bits(), 0xfe);
    }

    #[test]
    fn fp4_packing() {
        for byte in 0..=0xffu8 {
            let [a, b] = unpack_e2m1x2(byte);
            assert_eq!(pack_e2m1x2(a, b), byte);
            assert_eq!(e2m1_at(&[0, byte], 2), a);
            assert_eq!(e2m1_at(&[0, byte], 3), b);
        }
        assert_eq!(pack_e2m1x2(E2m1::from_f32(1.0), E2m1::from_f32(0.0)), 0x02);
    }
}
