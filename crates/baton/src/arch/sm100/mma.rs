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

use crate::arch::ptx::BarrierRef;
use core::arch::asm;

use super::tmem::TmemAddr;

pub use crate::arch::tcgen05_desc::{
    AccType, BlockScaledDescriptor, BlockScaledKind, BlockScaledType, F16Type, InstrDescriptor,
    Major, ScaleType, SmemDescriptor, SmemLayout,
};

/// `tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc, p`: `D = A·B + D`
/// (`accumulate`) or `D = A·B`, asynchronously, with A and B in shared
/// memory and D in TMEM at `d` (lane 0 of the accumulator's columns).
///
/// Completion is observed only through [`commit`] by the same thread.
///
/// # Safety
/// Executed by one thread (e.g. the [`elect_one`](crate::arch::ptx::elect_one)
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

macro_rules! block_scaled_mma {
    ($(#[$doc:meta])* $name:ident, $ptx:literal) => {
        $(#[$doc])*
        ///
        /// `D = (A·SFA)·(B·SFB) + D` (`accumulate`) or without `+ D`, f32
        /// accumulators in TMEM at `d`; A and B in shared memory (K-major
        /// descriptors), their scale factors in TMEM at `sfa` / `sfb` (lane 0;
        /// row `r`'s scale word at column `+ r / 32`, lane `r % 32` of every
        /// 32-lane partition — what
        /// [`tmem::cp_32x128b_warpx4`](super::tmem::cp_32x128b_warpx4) of a
        /// [`block_scale`](crate::block_scale) SF atom writes; the PTX ISA
        /// requires the four copies). Completion is
        /// observed only through [`commit`] (or its multicast forms) by the
        /// same thread.
        ///
        /// # Safety
        /// As [`mma_f16_ss`]; in addition the scale-factor columns at `sfa` and
        /// `sfb` are live, written (a `tcgen05.cp` issued earlier by this
        /// thread, or `tcgen05.st` + `wait_st` + fence + barrier), and not
        /// overwritten until this MMA's commit completes.
        #[inline(always)]
        pub unsafe fn $name(
            d: TmemAddr,
            a: SmemDescriptor,
            b: SmemDescriptor,
            idesc: BlockScaledDescriptor,
            sfa: TmemAddr,
            sfb: TmemAddr,
            accumulate: bool,
        ) {
            // SAFETY: see the contract above.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {acc}, 0; ", $ptx, " [{d}], {a}, {b}, {i}, [{sa}], [{sb}], p; }}"),
                    d = in(reg32) d.0,
                    a = in(reg64) a.0,
                    b = in(reg64) b.0,
                    i = in(reg32) idesc.0,
                    sa = in(reg32) sfa.0,
                    sb = in(reg32) sfb.0,
                    acc = in(reg32) accumulate as u32,
                    options(nostack)
                )
            };
        }
    };
}

block_scaled_mma!(
    /// `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X`:
    /// the MXFP8 MMA, `M × N × 32` (e4m3/e5m2 operands, one ue8m0 scale per
    /// row per 32 K elements). `idesc` from
    /// [`BlockScaledDescriptor::mxf8f6f4`]; its scale-factor ids pick the
    /// byte of each scale cell. (PTX 8.8 spells the same `.block32`; ptxas
    /// 13.0 requires 8.8 for the form without a suffix.)
    mma_mxf8f6f4_ss, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X"
);
block_scaled_mma!(
    /// The CTA-pair form of [`mma_mxf8f6f4_ss`] (`cta_group::2`), issued by
    /// one thread of the leader CTA; idesc from
    /// [`BlockScaledDescriptor::mxf8f6f4_pair`]; each CTA's TMEM holds the
    /// scale factors of its own rows.
    mma_mxf8f6f4_ss_pair, "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X"
);
block_scaled_mma!(
    /// `tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X`:
    /// the NVFP4 MMA, `M × N × 64` (e2m1 operands packed two per byte, four
    /// scales per row per MMA: one per 16 K elements, the four bytes of one
    /// TMEM cell). `idesc` from [`BlockScaledDescriptor::nvf4`]. Needs PTX
    /// ISA 8.7 (the sm_100a build passes `+ptx87`); PTX 8.8 spells it
    /// `.block16`.
    mma_mxf4nvf4_ss, "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
);
block_scaled_mma!(
    /// The CTA-pair form of [`mma_mxf4nvf4_ss`]; idesc from
    /// [`BlockScaledDescriptor::nvf4_pair`].
    mma_mxf4nvf4_ss_pair, "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X"
);
