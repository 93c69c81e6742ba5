//! `tcgen05.mma` (kind `f16`, one CTA), its instruction and shared-memory
//! descriptors, and `tcgen05.commit` to an mbarrier.
//!
//! The MMA is issued by **one thread** and runs asynchronously: it reads A
//! and B from shared memory through 64-bit matrix descriptors
//! ([`SmemDescriptor`]) and accumulates into TMEM (`D = A·B + D`, or
//! `D = A·B` when `accumulate` is false). [`commit`] makes an mbarrier track
//! completion of every earlier MMA the thread issued: one arrival on it when
//! they are done, after which the epilogue may read D and the producer may
//! refill the A/B stages.
//!
//! Encodings follow the PTX ISA ("Instruction descriptor", "Shared memory
//! descriptor" of the `tcgen05` family) and CUTLASS's
//! `cute/arch/mma_sm100_desc.hpp` (`UMMA::InstrDescriptor`,
//! `UMMA::SmemDescriptor`); not yet checked on hardware.

use crate::arch::sm90::BarrierRef;
use core::arch::asm;

use super::tmem::TmemAddr;

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
            n >= n_step && n <= 256 && n % n_step == 0,
            "kind::f16: N is a multiple of 8 (16 for M = 128) up to 256"
        );
        Self::encode_f16(ab, acc, m, n, a, b)
    }

    /// Descriptor of a CTA-pair (`cta_group::2`) `M × N × 16` MMA
    /// ([`mma_f16_ss_pair`]): M (128 or 256) spans both CTAs, M / 2 rows of
    /// A and of D in each; N (a multiple of 16 in `32..=256`) is split
    /// between the CTAs' B tiles, N / 2 rows each. Same bit layout as
    /// [`f16`](Self::f16).
    pub const fn f16_pair(ab: F16Type, acc: AccType, m: u32, n: u32, a: Major, b: Major) -> Self {
        assert!(
            m == 128 || m == 256,
            "cta_group::2 kind::f16: M is 128 or 256"
        );
        assert!(
            n >= 32 && n <= 256 && n % 16 == 0,
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

/// `tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc, p`: `D = A·B + D`
/// (`accumulate`) or `D = A·B`, asynchronously, with A and B in shared
/// memory and D in TMEM at `d` (lane 0 of the accumulator's columns).
///
/// Completion is observed only through [`commit`] by the same thread.
///
/// # Safety
/// Executed by one thread (e.g. the [`elect_one`](crate::arch::sm90::elect_one)
/// lane of the MMA warp); `a` and `b` describe operands fully written to
/// shared memory and visible to the async proxy (TMA completion observed on
/// their barrier, or `fence.proxy.async.shared::cta` after generic-proxy
/// stores, then a barrier); `d` addresses live TMEM columns wide enough for
/// `idesc`'s N (f32: N columns), not being read by the epilogue
/// ([`fence_after_thread_sync`](super::fence_after_thread_sync) after the wait
/// that handed the stage to the MMA thread).
#[inline(always)]
pub unsafe fn mma_f16_ss(
    d: TmemAddr,
    a: SmemDescriptor,
    b: SmemDescriptor,
    idesc: InstrDescriptor,
    accumulate: bool,
) {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.b32 p, {acc}, 0; tcgen05.mma.cta_group::1.kind::f16 [{d}], {a}, {b}, {i}, p; }}",
            d = in(reg32) d.0,
            a = in(reg64) a.0,
            b = in(reg64) b.0,
            i = in(reg32) idesc.0,
            acc = in(reg32) accumulate as u32,
            options(nostack)
        )
    };
}

/// `tcgen05.mma.cta_group::2.kind::f16 [d], a, b, idesc, p`: the CTA-pair
/// MMA. Issued by one thread of the pair's *leader* CTA (even cluster rank);
/// reads A (M / 2 rows) and B (N / 2 rows) from the same shared offsets in
/// both CTAs and writes D (M / 2 lanes × N columns) at `d` in each CTA's
/// TMEM. `idesc` comes from [`InstrDescriptor::f16_pair`].
///
/// # Safety
/// As [`mma_f16_ss`], for both CTAs: the peer's operands are written and
/// visible (its TMA completion, or its stores + proxy fence + a cluster
/// barrier), `d` is from [`alloc_pair`](super::tmem::alloc_pair); completion
/// is observed through [`commit_pair_multicast`] by the same thread.
#[inline(always)]
pub unsafe fn mma_f16_ss_pair(
    d: TmemAddr,
    a: SmemDescriptor,
    b: SmemDescriptor,
    idesc: InstrDescriptor,
    accumulate: bool,
) {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.b32 p, {acc}, 0; tcgen05.mma.cta_group::2.kind::f16 [{d}], {a}, {b}, {i}, p; }}",
            d = in(reg32) d.0,
            a = in(reg64) a.0,
            b = in(reg64) b.0,
            i = in(reg32) idesc.0,
            acc = in(reg32) accumulate as u32,
            options(nostack)
        )
    };
}

/// `tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask`:
/// one arrival on the barrier at `bar`'s offset in every CTA of `cta_mask`
/// once this thread's earlier CTA-pair MMAs ([`mma_f16_ss_pair`]) have
/// completed — how the leader tells both CTAs of the pair that D is ready,
/// or that both CTAs' A/B stages may be refilled (mask `0b11 << (2 * pair)`).
///
/// # Safety
/// As [`commit_multicast`], executed by the thread that issued the pair MMAs.
#[inline(always)]
pub unsafe fn commit_pair_multicast(bar: BarrierRef<'_>, cta_mask: u16) {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{b}], {m};",
            b = in(reg32) bar.addr(),
            m = in(reg16) cta_mask,
            options(nostack)
        )
    };
}

/// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
/// [bar]`: one arrival on `bar` once every `tcgen05.mma` (and `tcgen05.cp`)
/// this thread issued before has completed. Implies
/// `tcgen05.fence::before_thread_sync`.
///
/// `bar` is this CTA's barrier (a `.shared::cta` address is a valid
/// `.shared::cluster` address of the executing CTA). Its arrival count must
/// include this one arrival; waiters then need
/// [`fence_after_thread_sync`](super::fence_after_thread_sync) before reading
/// TMEM.
///
/// # Safety
/// Executed by the thread that issued the MMAs; `bar` is initialized.
#[inline(always)]
pub unsafe fn commit(bar: BarrierRef<'_>) {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{b}];",
            b = in(reg32) bar.addr(),
            options(nostack)
        )
    };
}

/// The multicast form: one arrival on the barrier at `bar`'s shared offset
/// in every CTA of the cluster whose bit is set in `cta_mask` (bit `i` = CTA
/// rank `i`), once this thread's earlier MMAs have completed —
/// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask`.
///
/// How an MMA thread releases an A/B stage whose TMA load was multicast to
/// a CTA pair: both CTAs' `empty` barriers must count this arrival.
///
/// # Safety
/// As [`commit`]; `cta_mask` names only CTAs of this cluster, each of which
/// has initialized its barrier at that offset (cluster barrier after init).
#[inline(always)]
pub unsafe fn commit_multicast(bar: BarrierRef<'_>, cta_mask: u16) {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{b}], {m};",
            b = in(reg32) bar.addr(),
            m = in(reg16) cta_mask,
            options(nostack)
        )
    };
}
