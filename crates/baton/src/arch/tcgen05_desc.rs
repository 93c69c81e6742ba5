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

/// Operand format of a block-scaled `tcgen05.mma` (A and B; bits `[7, 10)`
/// and `[10, 13)` of [`BlockScaledDescriptor`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockScaledType {
    /// FP8 e4m3 (`kind::mxf8f6f4`, code 0).
    E4m3,
    /// FP8 e5m2 (`kind::mxf8f6f4`, code 1).
    E5m2,
    /// FP4 e2m1 read by `kind::mxf4nvf4` (code 1 in that kind).
    E2m1,
}

/// Scale-factor format of a block-scaled MMA (bit 23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleType {
    /// `ue4m3` (NVFP4's per-16 scale; code 0).
    Ue4m3,
    /// `ue8m0` (MX formats' power-of-two scale; code 1).
    Ue8m0,
}

/// Which block-scaled MMA an instruction descriptor is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockScaledKind {
    /// `kind::mxf8f6f4.block_scale.scale_vec::1X`: K = 32 per MMA, one scale
    /// per 32 K elements (MXFP8).
    Mxf8f6f4,
    /// `kind::mxf4nvf4.block_scale.scale_vec::4X`: K = 64 per MMA, one scale
    /// per 16 K elements (NVFP4).
    Mxf4nvf4,
}

impl BlockScaledKind {
    /// K elements per MMA instruction.
    pub const fn k(self) -> u32 {
        match self {
            BlockScaledKind::Mxf8f6f4 => 32,
            BlockScaledKind::Mxf4nvf4 => 64,
        }
    }

    /// K elements sharing one scale factor.
    pub const fn scale_block(self) -> u32 {
        match self {
            BlockScaledKind::Mxf8f6f4 => 32,
            BlockScaledKind::Mxf4nvf4 => 16,
        }
    }
}

/// The 32-bit instruction descriptor of a block-scaled `tcgen05.mma`
/// (`kind::mxf8f6f4` / `kind::mxf4nvf4`). Its layout differs from
/// [`InstrDescriptor`]'s: no accumulator type (always f32), a scale-factor
/// format bit, and two scale-factor ids.
///
/// Bits: `[4,6)` B scale-factor id, `[7,10)` A format, `[10,13)` B format,
/// 15 A major, 16 B major (K 0), `[17,23)` N >> 3, 23 scale format (ue4m3 0,
/// ue8m0 1), `[24,29)` M >> 4, `[29,31)` A scale-factor id, 31 K size (0:
/// dense K = 32 for mxf8f6f4, 64 for mxf4nvf4).
///
/// The scale-factor ids pick the byte of each TMEM scale-factor cell the
/// MMA reads ([`with_scale_ids`](Self::with_scale_ids)): with one scale per
/// row per MMA (mxf8f6f4) four consecutive K steps share one 32-bit cell.
///
/// ```
/// use baton::arch::tcgen05_desc::{BlockScaledDescriptor, BlockScaledType, ScaleType};
/// let d = BlockScaledDescriptor::mxf8f6f4(BlockScaledType::E4m3, BlockScaledType::E4m3, 128, 128);
/// assert_eq!(d.0, 0x08A0_0000); // M 128, N 128, e4m3 × e4m3, ue8m0
/// let nv = BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, 128, 8);
/// assert_eq!(nv.m(), 128);
/// assert_eq!(nv.with_scale_ids(1, 2).0 >> 29 & 3, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct BlockScaledDescriptor(pub u32);

impl BlockScaledDescriptor {
    /// MXFP8 (`kind::mxf8f6f4`, ue8m0 scales per 32 K elements), K-major A
    /// and B, `cta_group::1`: M 64 or 128, N a multiple of 8 in `8..=256`. Panics (at compile time in a `const`) otherwise,
    /// or when an operand is not an FP8 type.
    pub const fn mxf8f6f4(a: BlockScaledType, b: BlockScaledType, m: u32, n: u32) -> Self {
        check_one_cta(m, n);
        Self::encode(fp8_code(a), fp8_code(b), ScaleType::Ue8m0, m, n)
    }

    /// The CTA-pair (`cta_group::2`) form of [`mxf8f6f4`](Self::mxf8f6f4): M
    /// 128 or 256 across the pair, N a multiple of 16 in `32..=256`.
    pub const fn mxf8f6f4_pair(a: BlockScaledType, b: BlockScaledType, m: u32, n: u32) -> Self {
        check_pair(m, n);
        Self::encode(fp8_code(a), fp8_code(b), ScaleType::Ue8m0, m, n)
    }

    /// NVFP4 (`kind::mxf4nvf4.scale_vec::4X`: e2m1 operands, one `scale`
    /// per 16 K elements; NVFP4 uses [`ScaleType::Ue4m3`]), K-major,
    /// `cta_group::1`; shapes as [`mxf8f6f4`](Self::mxf8f6f4).
    pub const fn nvf4(scale: ScaleType, m: u32, n: u32) -> Self {
        check_one_cta(m, n);
        Self::encode(1, 1, scale, m, n)
    }

    /// The CTA-pair form of [`nvf4`](Self::nvf4).
    pub const fn nvf4_pair(scale: ScaleType, m: u32, n: u32) -> Self {
        check_pair(m, n);
        Self::encode(1, 1, scale, m, n)
    }

    const fn encode(a: u32, b: u32, scale: ScaleType, m: u32, n: u32) -> Self {
        let s = match scale {
            ScaleType::Ue4m3 => 0u32,
            ScaleType::Ue8m0 => 1,
        };
        Self((a << 7) | (b << 10) | ((n >> 3) << 17) | (s << 23) | ((m >> 4) << 24))
    }

    /// This descriptor with scale-factor ids `a_id` (bits `[29,31)`) and
    /// `b_id` (bits `[4,6)`), each in `0..4`: the byte of the scale-factor
    /// cells the MMA starts reading at. Panics when an id is out of range.
    pub const fn with_scale_ids(self, a_id: u32, b_id: u32) -> Self {
        assert!(a_id < 4 && b_id < 4, "scale-factor ids are in 0..4");
        Self((self.0 & !((3 << 29) | (3 << 4))) | (a_id << 29) | (b_id << 4))
    }

    /// M (rows of A and D).
    pub const fn m(self) -> u32 {
        ((self.0 >> 24) & 0x1F) << 4
    }

    /// N (rows of B, columns of D).
    pub const fn n(self) -> u32 {
        ((self.0 >> 17) & 0x3F) << 3
    }

    /// Scale-factor format.
    pub const fn scale_type(self) -> ScaleType {
        if self.0 >> 23 & 1 == 1 {
            ScaleType::Ue8m0
        } else {
            ScaleType::Ue4m3
        }
    }

    /// A's and B's scale-factor ids.
    pub const fn scale_ids(self) -> (u32, u32) {
        ((self.0 >> 29) & 3, (self.0 >> 4) & 3)
    }

    /// A's and B's raw format codes (their meaning depends on the kind).
    pub const fn format_codes(self) -> (u32, u32) {
        ((self.0 >> 7) & 7, (self.0 >> 10) & 7)
    }
}

const fn fp8_code(t: BlockScaledType) -> u32 {
    match t {
        BlockScaledType::E4m3 => 0,
        BlockScaledType::E5m2 => 1,
        BlockScaledType::E2m1 => {
            panic!("kind::mxf8f6f4 here takes FP8 operands (use nvf4 for e2m1)")
        }
    }
}

const fn check_one_cta(m: u32, n: u32) {
    assert!(
        m == 64 || m == 128,
        "cta_group::1 block-scaled: M is 64 or 128"
    );
    // N = 8 with M = 128 is what a public NVFP4 test runs on sm_100; the
    // f16 kind needs multiples of 16 there.
    assert!(
        n >= 8 && n <= 256 && n.is_multiple_of(8),
        "block-scaled: N is a multiple of 8 up to 256"
    );
}

const fn check_pair(m: u32, n: u32) {
    assert!(
        m == 128 || m == 256,
        "cta_group::2 block-scaled: M is 128 or 256"
    );
    assert!(
        n >= 32 && n <= 256 && n.is_multiple_of(16),
        "cta_group::2 block-scaled: N is a multiple of 16 in 32..=256"
    );
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

    #[test]
    fn block_scaled_descriptors_match_independent_encodings() {
        // NVFP4 (e2m1, ue4m3), M = 128, N = 8, as a public sm_100 test kernel
        // builds it field by field: (1 << 7) | (1 << 10) | (1 << 17) | (8 << 24).
        assert_eq!(
            BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, 128, 8).0,
            0x0802_0480
        );
        // MXFP8 e4m3 × e4m3, ue8m0, M = 128, N = 128 from the field layout
        // of CUTLASS's `UMMA::InstrDescriptorBlockScaled` (scale format bit
        // 23, M at [24, 29)).
        let d =
            BlockScaledDescriptor::mxf8f6f4(BlockScaledType::E4m3, BlockScaledType::E4m3, 128, 128);
        assert_eq!(d.0, (1 << 23) | ((128 >> 3) << 17) | ((128 >> 4) << 24));
    }

    #[test]
    fn block_scaled_fields_round_trip() {
        let d = BlockScaledDescriptor::mxf8f6f4_pair(
            BlockScaledType::E5m2,
            BlockScaledType::E4m3,
            256,
            224,
        )
        .with_scale_ids(3, 2);
        assert_eq!((d.m(), d.n()), (256, 224));
        assert_eq!(d.scale_ids(), (3, 2));
        assert_eq!(d.format_codes(), (1, 0));
        assert_eq!(d.scale_type(), ScaleType::Ue8m0);
        assert_eq!(d.with_scale_ids(0, 0).scale_ids(), (0, 0));
        assert_eq!(
            BlockScaledDescriptor::nvf4_pair(ScaleType::Ue8m0, 128, 32).scale_type(),
            ScaleType::Ue8m0
        );
        assert_eq!(
            BlockScaledKind::Mxf4nvf4.k() / BlockScaledKind::Mxf4nvf4.scale_block(),
            4
        );
    }

    #[test]
    #[should_panic(expected = "scale-factor ids are in 0..4")]
    fn scale_id_out_of_range_panics() {
        let _ = BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, 128, 16).with_scale_ids(4, 0);
    }

    #[test]
    #[should_panic(expected = "FP8 operands")]
    fn mxf8f6f4_rejects_e2m1() {
        let _ =
            BlockScaledDescriptor::mxf8f6f4(BlockScaledType::E2m1, BlockScaledType::E4m3, 128, 128);
    }
}
