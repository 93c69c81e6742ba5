//! Descriptor encodings of Blackwell's `tcgen05.mma` (kind `f16`): the
//! 32-bit instruction descriptor and the 64-bit shared-memory matrix
//! descriptor. Plain `const` arithmetic, compiled on every target so the host
//! tests check the encodings; the `sm100` backend (nvptx64 only) re-exports
//! them from `sm100::mma`.
//!
//! Layouts: PTX ISA, `tcgen05` "Instruction descriptor" and "Shared memory
//! descriptor"; CUTLASS `cute/arch/mma_sm100_desc.hpp`
//! (`UMMA::InstrDescriptor`, `UMMA::SmemDescriptor`).

/// Operand type of a `kind::f16` MMA (A and B; bits `[7, 10)` and
/// `[10, 13)` of the instruction descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F16Type {
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
}

/// Accumulator type of a `kind::f16` MMA (bits `[4, 6)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccType {
    /// IEEE half accumulators.
    F16,
    /// f32 accumulators.
    F32,
}

/// Which dimension is contiguous in shared memory for an operand (bit 15
/// for A, 16 for B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Major {
    /// K contiguous ("K-major", the `TN` GEMM layout).
    K,
    /// M (for A) or N (for B) contiguous.
    Mn,
}

impl Major {
    const fn bit(self) -> u32 {
        match self {
            Major::K => 0,
            Major::Mn => 1,
        }
    }
}

/// The 32-bit instruction descriptor of a `tcgen05.mma.kind::f16`: operand
/// and accumulator types, majorness and the M × N shape. Dense, no
/// saturation, no negation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct InstrDescriptor(pub u32);

impl InstrDescriptor {
    /// Descriptor of an `M × N × 16` MMA (`cta_group::1`) with operands of
    /// type `ab`, accumulators `acc`, and the given majorness.
    ///
    /// Bits: `[4,6)` D type (F16 0, F32 1), `[7,10)` A type, `[10,13)` B
    /// type (F16 0, BF16 1), 15 A major, 16 B major (K 0, MN 1), `[17,23)`
    /// N >> 3, `[24,29)` M >> 4.
    ///
    /// Panics (at compile time in a `const`) unless M is 64 or 128 and N is a
    /// multiple of 8 in `8..=256` (of 16 in `16..=256` for M = 128) — the
    /// `cta_group::1` shapes of the PTX ISA.
    pub const fn f16(ab: F16Type, acc: AccType, m: u32, n: u32, a: Major, b: Major) -> Self {
        assert!(
            m == 64 || m == 128,
            "cta_group::1 kind::f16: M is 64 or 128"
        );
        let n_step = if m == 128 { 16 } else { 8 };
        assert!(
            n >= n_step && n <= 256 && n.is_multiple_of(n_step),
            "kind::f16: N is a multiple of 8 (16 for M = 128) up to 256"
        );
        Self::encode_f16(ab, acc, m, n, a, b)
    }

    /// Descriptor of a CTA-pair (`cta_group::2`) `M × N × 16` MMA
    /// (`sm100::mma::mma_f16_ss_pair`): M (128 or 256) spans both CTAs, M / 2 rows of
    /// A and of D in each; N (a multiple of 16 in `32..=256`) is split
    /// between the CTAs' B tiles, N / 2 rows each. Same bit layout as
    /// [`f16`](Self::f16).
    pub const fn f16_pair(ab: F16Type, acc: AccType, m: u32, n: u32, a: Major, b: Major) -> Self {
        assert!(
            m == 128 || m == 256,
            "cta_group::2 kind::f16: M is 128 or 256"
        );
        assert!(
            n >= 32 && n <= 256 && n.is_multiple_of(16),
            "cta_group::2 kind::f16: N is a multiple of 16 in 32..=256"
        );
        Self::encode_f16(ab, acc, m, n, a, b)
    }

    const fn encode_f16(ab: F16Type, acc: AccType, m: u32, n: u32, a: Major, b: Major) -> Self {
        let ab = match ab {
            F16Type::F16 => 0u32,
            F16Type::Bf16 => 1,
        };
        let acc = match acc {
            AccType::F16 => 0u32,
            AccType::F32 => 1,
        };
        Self(
            (acc << 4)
                | (ab << 7)
                | (ab << 10)
                | (a.bit() << 15)
                | (b.bit() << 16)
                | ((n >> 3) << 17)
                | ((m >> 4) << 24),
        )
    }
}

/// Shared-memory layouts of an sm100 matrix descriptor (bits `[61, 64)`;
/// the codes differ from sm90's `wgmma` descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmemLayout {
    /// No swizzle: 8-row × 16-byte core matrices, placed by the leading and
    /// stride byte offsets.
    Interleave,
    /// 128-byte swizzle (TMA `SWIZZLE_128B`).
    Swizzle128B,
    /// 64-byte swizzle.
    Swizzle64B,
    /// 32-byte swizzle.
    Swizzle32B,
}

impl SmemLayout {
    const fn code(self) -> u64 {
        match self {
            SmemLayout::Interleave => 0,
            SmemLayout::Swizzle128B => 2,
            SmemLayout::Swizzle64B => 4,
            SmemLayout::Swizzle32B => 6,
        }
    }
}

/// A 64-bit `tcgen05` shared-memory matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct SmemDescriptor(pub u64);

impl SmemDescriptor {
    /// Descriptor of a matrix at shared address `addr` (16-byte aligned; the
    /// swizzle atom's alignment for swizzled layouts, base offset 0).
    ///
    /// `leading_bytes` / `stride_bytes` are the leading- and stride-dimension
    /// byte offsets of the PTX ISA's canonical layouts (for K-major
    /// `Interleave`: between core matrices adjacent in K, and between 8-row
    /// groups; for K-major swizzled: leading unused, stride = 8 rows of the
    /// swizzle width). Multiples of 16.
    ///
    /// Bits: `[0,14)` addr >> 4, `[16,30)` leading >> 4, `[32,46)` stride >>
    /// 4, `[46,48)` version = 1 (sm100), `[49,52)` base offset 0, 52
    /// leading-offset mode 0, `[61,64)` layout.
    #[inline(always)]
    pub const fn new(addr: u32, layout: SmemLayout, leading_bytes: u32, stride_bytes: u32) -> Self {
        let start = ((addr as u64) >> 4) & 0x3FFF;
        let lead = ((leading_bytes as u64) >> 4) & 0x3FFF;
        let stride = ((stride_bytes as u64) >> 4) & 0x3FFF;
        Self(start | (lead << 16) | (stride << 32) | (1 << 46) | (layout.code() << 61))
    }

    /// Adds `bytes` (a multiple of 16) to the start address — how a K loop
    /// steps through a swizzle atom.
    #[inline(always)]
    pub const fn advance(self, bytes: u32) -> Self {
        Self(self.0 + ((bytes as u64) >> 4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_m128_n128_matches_an_independent_encoding() {
        // 0x08200490 (136316048): the BF16 × BF16 → F32, M = 128, N = 128,
        // K-major descriptor another project's sm_100 kernel hard-codes.
        let d = InstrDescriptor::f16(F16Type::Bf16, AccType::F32, 128, 128, Major::K, Major::K);
        assert_eq!(d.0, 0x0820_0490);
    }

    #[test]
    fn instr_descriptor_fields() {
        let d = InstrDescriptor::f16(F16Type::F16, AccType::F16, 64, 8, Major::Mn, Major::K);
        assert_eq!(d.0, (1 << 15) | (1 << 17) | (4 << 24));
        let p =
            InstrDescriptor::f16_pair(F16Type::Bf16, AccType::F32, 256, 256, Major::K, Major::Mn);
        assert_eq!(p.0 >> 24 & 0x1F, 16, "M >> 4");
        assert_eq!(p.0 >> 17 & 0x3F, 32, "N >> 3");
        assert_eq!(p.0 >> 16 & 1, 1, "B MN-major");
    }

    #[test]
    #[should_panic(expected = "cta_group::1")]
    fn one_cta_rejects_m256() {
        let _ = InstrDescriptor::f16(F16Type::Bf16, AccType::F32, 256, 128, Major::K, Major::K);
    }

    #[test]
    #[should_panic(expected = "multiple of 8 (16 for M = 128)")]
    fn m128_rejects_odd_n() {
        let _ = InstrDescriptor::f16(F16Type::Bf16, AccType::F32, 128, 24, Major::K, Major::K);
    }

    #[test]
    fn smem_descriptor_fields() {
        let d = SmemDescriptor::new(0x1_2340, SmemLayout::Interleave, 128, 256);
        assert_eq!(d.0 & 0x3FFF, 0x1234, "start >> 4");
        assert_eq!(d.0 >> 16 & 0x3FFF, 8, "leading >> 4");
        assert_eq!(d.0 >> 32 & 0x3FFF, 16, "stride >> 4");
        assert_eq!(d.0 >> 46 & 0b111, 0b001, "sm100 fixed constant");
        assert_eq!(d.0 >> 61, 0, "no swizzle");
        let s = SmemDescriptor::new(0x400, SmemLayout::Swizzle128B, 16, 1024);
        assert_eq!(s.0 >> 61, 2);
        assert_eq!(s.advance(32).0, s.0 + 2);
        assert_eq!(
            SmemDescriptor::new(0, SmemLayout::Swizzle64B, 0, 0).0 >> 61,
            4
        );
        assert_eq!(
            SmemDescriptor::new(0, SmemLayout::Swizzle32B, 0, 0).0 >> 61,
            6
        );
    }
}
