//! Tensor memory (TMEM): allocation, deallocation, the epilogue's
//! `tcgen05.ld`, `tcgen05.st`, and `tcgen05.cp` of scale factors from shared
//! memory.
//!
//! TMEM is 128 lanes × 512 columns of 32-bit cells per SM. An address is
//! `lane << 16 | column` ([`TmemAddr`]). Warp `w` of a warpgroup may only
//! access lanes `32 * (w % 4) .. 32 * (w % 4) + 32` (its *lane quarter*).
//!
//! Allocation is by columns (a power of two in `32..=512`), for all 128
//! lanes, by one warp of the CTA (`cta_group::1`). The same warp must later
//! deallocate, and a CTA must have freed all its columns before it exits.

use crate::smem::SharedRef;
use core::arch::asm;

pub use crate::arch::tcgen05_desc::SmemDescriptor;

#[rustfmt::skip]
#[path = "tmem_ops.rs"]
mod ops;
pub use ops::*;

pub use crate::arch::tmem_addr::{TMEM_COLUMNS, TMEM_LANES, TmemAddr};

const fn check_columns(cols: u32) {
    assert!(
        cols >= 32 && cols <= TMEM_COLUMNS && cols.is_power_of_two(),
        "TMEM allocations are a power of two of columns in 32..=512"
    );
}

/// `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], COLS`:
/// allocates `COLS` columns (all 128 lanes) and writes their base address
/// ([`TmemAddr`], lane 0) to `dst` in shared memory.
///
/// Blocks until the columns are free (another CTA on the SM may hold them).
/// The address is in `dst` once this returns, for this warp; other threads
/// read it after [`fence_before_thread_sync`](super::fence_before_thread_sync)
/// (this warp), a block barrier, and
/// [`fence_after_thread_sync`](super::fence_after_thread_sync) (readers).
///
/// # Safety
/// Executed by all 32 threads of one warp, converged (`.sync.aligned`), with
/// the same `dst`; the CTA has not relinquished its allocation permit; the
/// same warp later calls [`dealloc`] with `COLS` on the result, before the
/// CTA exits. No other warp of the CTA allocates concurrently.
#[inline(always)]
pub unsafe fn alloc<const COLS: u32>(dst: SharedRef<'_, u32>) {
    const { check_columns(COLS) };
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [{d}], {n};",
            d = in(reg32) dst.addr(), n = const COLS, options(nostack)
        )
    };
}

/// `tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned`: this CTA
/// will allocate no more TMEM, so a CTA waiting in [`alloc`] on this SM may
/// proceed once columns are freed. Call right after the last `alloc`.
///
/// # Safety
/// Executed by all 32 threads of one warp, converged; no [`alloc`] by this
/// CTA follows.
#[inline(always)]
pub unsafe fn relinquish_alloc_permit() {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
            options(nostack)
        )
    };
}

/// `tcgen05.dealloc.cta_group::1.sync.aligned.b32 addr, COLS`: frees the
/// `COLS` columns allocated at `addr`.
///
/// # Safety
/// Executed by all 32 threads of the warp that allocated `addr` with
/// [`alloc::<COLS>`](alloc), converged; every `tcgen05` access to these
/// columns by any thread has completed and is ordered before this call
/// (readers: [`wait_ld`]/[`wait_st`], then
/// [`fence_before_thread_sync`](super::fence_before_thread_sync) and a
/// barrier; this warp: [`fence_after_thread_sync`](super::fence_after_thread_sync)
/// after that barrier).
#[inline(always)]
pub unsafe fn dealloc<const COLS: u32>(addr: TmemAddr) {
    const { check_columns(COLS) };
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.dealloc.cta_group::1.sync.aligned.b32 {a}, {n};",
            a = in(reg32) addr.0, n = const COLS, options(nostack)
        )
    };
}

/// `tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [dst], COLS`:
/// the CTA-pair form of [`alloc`] — allocates `COLS` columns in the TMEM of
/// both CTAs of a pair (cluster ranks `2i`, `2i + 1`) and writes the address
/// to `dst` in each.
///
/// # Safety
/// As [`alloc`], and: one warp with the same warp index in each CTA of the
/// pair executes it, both with the same `dst` offset; the pair later frees
/// the columns with [`dealloc_pair`].
#[inline(always)]
pub unsafe fn alloc_pair<const COLS: u32>(dst: SharedRef<'_, u32>) {
    const { check_columns(COLS) };
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [{d}], {n};",
            d = in(reg32) dst.addr(), n = const COLS, options(nostack)
        )
    };
}

/// `tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned`: the
/// CTA-pair form of [`relinquish_alloc_permit`].
///
/// # Safety
/// As [`relinquish_alloc_permit`], executed by the allocating warp of each
/// CTA of the pair.
#[inline(always)]
pub unsafe fn relinquish_alloc_permit_pair() {
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;",
            options(nostack)
        )
    };
}

/// `tcgen05.dealloc.cta_group::2.sync.aligned.b32 addr, COLS`: the CTA-pair
/// form of [`dealloc`].
///
/// # Safety
/// As [`dealloc`], for columns from [`alloc_pair::<COLS>`](alloc_pair),
/// executed by the allocating warp of each CTA of the pair; no MMA of the
/// pair still writes them.
#[inline(always)]
pub unsafe fn dealloc_pair<const COLS: u32>(addr: TmemAddr) {
    const { check_columns(COLS) };
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.dealloc.cta_group::2.sync.aligned.b32 {a}, {n};",
            a = in(reg32) addr.0, n = const COLS, options(nostack)
        )
    };
}

/// `tcgen05.wait::ld.sync.aligned`: waits until this thread's earlier
/// `tcgen05.ld`s have completed. The `ld_32x32b_x*` functions already end
/// with it; a kernel calls it itself before [`dealloc`] or a barrier that
/// hands the columns back to the MMA warp when it issued loads another way.
#[inline(always)]
pub fn wait_ld() {
    // SAFETY: warp-collective wait, no operands.
    unsafe { asm!("tcgen05.wait::ld.sync.aligned;", options(nostack)) };
}

/// `tcgen05.wait::st.sync.aligned`: waits until this thread's earlier
/// `tcgen05.st`s have completed (before an MMA reads the stored cells or the
/// columns are freed).
#[inline(always)]
pub fn wait_st() {
    // SAFETY: warp-collective wait, no operands.
    unsafe { asm!("tcgen05.wait::st.sync.aligned;", options(nostack)) };
}

macro_rules! tmem_cp {
    ($(#[$doc:meta])* $name:ident, $ptx:literal) => {
        $(#[$doc])*
        ///
        /// Issued by **one thread** (like an MMA) and asynchronous: its
        /// completion is tracked by the same thread's next
        /// [`commit`](super::mma::commit), and an MMA this thread issues after
        /// it sees the copied cells (`tcgen05.cp` and `tcgen05.mma` of one
        /// thread execute in order).
        ///
        /// # Safety
        /// One thread; `src` describes shared memory fully written and visible
        /// to the async proxy (TMA completion observed, or stores +
        /// `fence.proxy.async.shared::cta` + a barrier) that stays unmodified
        /// until the commit completes; `dst` lies in a live allocation that no
        /// MMA reads concurrently except MMAs issued later by this thread.
        #[inline(always)]
        pub unsafe fn $name(dst: TmemAddr, src: SmemDescriptor) {
            // SAFETY: see the contract above.
            unsafe { asm!(concat!($ptx, " [{d}], {s};"), d = in(reg32) dst.0, s = in(reg64) src.0, options(nostack)) };
        }
    };
}

tmem_cp!(
    /// `tcgen05.cp.cta_group::1.32x128b.warpx4 [dst], src`: copies 32 rows of
    /// 16 bytes (a 512-byte block of scale factors) from shared memory to
    /// lanes `dst.lane() .. + 32`, 4 columns from `dst.column()`, **and the
    /// same cells of the other three lane quarters** (each warp of a
    /// warpgroup sees the scale factors in its own quarter) — CUTLASS's
    /// copy of one scale-factor atom.
    cp_32x128b_warpx4, "tcgen05.cp.cta_group::1.32x128b.warpx4"
);
tmem_cp!(
    /// `tcgen05.cp.cta_group::1.128x128b [dst], src`: copies 128 rows of 16
    /// bytes to lanes `0..128`, 4 columns from `dst.column()`.
    cp_128x128b, "tcgen05.cp.cta_group::1.128x128b"
);
tmem_cp!(
    /// `tcgen05.cp.cta_group::1.4x256b [dst], src`: copies 4 rows of 32 bytes
    /// to lanes `dst.lane() .. + 4`, 8 columns from `dst.column()`.
    cp_4x256b, "tcgen05.cp.cta_group::1.4x256b"
);
tmem_cp!(
    /// `tcgen05.cp.cta_group::2.32x128b.warpx4 [dst], src`: the CTA-pair form
    /// of [`cp_32x128b_warpx4`], issued by the leader CTA's MMA thread; each
    /// CTA's shared memory at `src` goes to its own TMEM (for a pair MMA's
    /// scale factors).
    cp_32x128b_warpx4_pair, "tcgen05.cp.cta_group::2.32x128b.warpx4"
);
