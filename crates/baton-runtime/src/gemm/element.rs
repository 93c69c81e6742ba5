//! Element types of the GEMM operands: the ecosystem's [`bf16`] (`half`)
//! and [`E4M3`] (`float8::F8E4M3`), both `DeviceRepr` through cudarc's
//! `f16`/`f8` features, so a `CudaSlice<half::bf16>` of candle, burn or
//! plain cudarc is an operand as it is. The raw-bits types of the older
//! APIs (`u16` for bf16, `u8` for e4m3) are elements too, with the same
//! meaning.
//!
//! ```
//! use baton_runtime::gemm::element::{bf16, E4M3, Element, Bf16Storage};
//! assert_eq!(<bf16 as Element>::BYTES, 2);
//! assert_eq!(<E4M3 as Element>::BYTES, 1);
//! fn takes_bf16<T: Bf16Storage>() -> &'static str { T::NAME }
//! assert_eq!(takes_bf16::<u16>(), "bf16 (u16 bits)");
//! ```

use baton::tensor_map::ElemType;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

pub use float8::F8E4M3 as E4M3;
pub use half::bf16;

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::bf16 {}
    impl Sealed for u16 {}
    impl Sealed for float8::F8E4M3 {}
    impl Sealed for u8 {}
}

/// An element type a GEMM operand may hold (sealed: the four below).
///
/// ```
/// use baton_runtime::gemm::element::{Element, E4M3};
/// assert_eq!(<E4M3 as Element>::NAME, "e4m3");
/// ```
pub trait Element: DeviceRepr + ValidAsZeroBits + Copy + sealed::Sealed {
    /// The element type of its TMA tensor maps.
    const TMA: ElemType;
    /// Bytes per element.
    const BYTES: usize;
    /// Its name in error messages.
    const NAME: &'static str;
}

/// Storage of bf16 values: [`bf16`] or its bits as `u16`.
///
/// ```
/// use baton_runtime::gemm::element::{bf16, Bf16Storage};
/// assert_eq!(<bf16 as Bf16Storage>::to_bits(bf16::from_f32(1.0)), 0x3F80);
/// ```
pub trait Bf16Storage: Element {
    /// The value's bits.
    fn to_bits(self) -> u16;
    /// The value of `bits`.
    fn from_bits(bits: u16) -> Self;
}

/// Storage of FP8 e4m3 values: [`E4M3`] or its bits as `u8`.
///
/// ```
/// use baton_runtime::gemm::element::{E4M3, E4M3Storage};
/// assert_eq!(<E4M3 as E4M3Storage>::to_bits(E4M3::from_f32(1.0)), 0x38);
/// ```
pub trait E4M3Storage: Element {
    /// The value's bits.
    fn to_bits(self) -> u8;
    /// The value of `bits`.
    fn from_bits(bits: u8) -> Self;
}

impl Element for bf16 {
    const TMA: ElemType = ElemType::BF16;
    const BYTES: usize = 2;
    const NAME: &'static str = "bf16";
}
impl Element for u16 {
    const TMA: ElemType = ElemType::BF16;
    const BYTES: usize = 2;
    const NAME: &'static str = "bf16 (u16 bits)";
}
impl Element for E4M3 {
    const TMA: ElemType = ElemType::U8;
    const BYTES: usize = 1;
    const NAME: &'static str = "e4m3";
}
impl Element for u8 {
    const TMA: ElemType = ElemType::U8;
    const BYTES: usize = 1;
    const NAME: &'static str = "e4m3 (u8 bits)";
}

impl Bf16Storage for bf16 {
    fn to_bits(self) -> u16 {
        bf16::to_bits(self)
    }
    fn from_bits(bits: u16) -> Self {
        bf16::from_bits(bits)
    }
}
impl Bf16Storage for u16 {
    fn to_bits(self) -> u16 {
        self
    }
    fn from_bits(bits: u16) -> Self {
        bits
    }
}
impl E4M3Storage for E4M3 {
    fn to_bits(self) -> u8 {
        E4M3::to_bits(&self)
    }
    fn from_bits(bits: u8) -> Self {
        E4M3::from_bits(bits)
    }
}
impl E4M3Storage for u8 {
    fn to_bits(self) -> u8 {
        self
    }
    fn from_bits(bits: u8) -> Self {
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{bf16_to_f32, f32_to_bf16};

    #[test]
    fn bf16_agrees_with_the_hand_written_conversion() {
        let mut x = 0x1234_5678u32;
        for _ in 0..10_000 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = f32::from_bits(x);
            if v.is_nan() {
                assert!(bf16::from_f32(v).is_nan());
                continue;
            }
            assert_eq!(bf16::from_f32(v).to_bits(), f32_to_bf16(v), "{v}");
            let bits = (x >> 16) as u16;
            let h = bf16::from_bits(bits).to_f32();
            assert!(h.to_bits() == bf16_to_f32(bits).to_bits() || h.is_nan());
        }
    }

    #[test]
    fn e4m3_agrees_with_the_reference_conversion() {
        for bits in 0..=255u8 {
            let v = E4M3::from_bits(bits).to_f32();
            let ours = crate::gemm::fp8::e4m3_to_f32(bits);
            assert!(
                v.to_bits() == ours.to_bits() || (v.is_nan() && ours.is_nan()),
                "{bits:#x}: float8 {v}, ours {ours}"
            );
        }
    }

    #[test]
    fn storages_round_trip_their_bits() {
        for bits in [0u16, 0x3F80, 0xFF80, 0x7FC0, 0x0001] {
            assert_eq!(<bf16 as Bf16Storage>::from_bits(bits).to_bits(), bits);
            assert_eq!(<u16 as Bf16Storage>::from_bits(bits).to_bits(), bits);
        }
        for bits in 0..=255u8 {
            assert_eq!(<E4M3 as E4M3Storage>::from_bits(bits).to_bits(), bits);
            assert_eq!(<u8 as E4M3Storage>::from_bits(bits).to_bits(), bits);
        }
    }
}
