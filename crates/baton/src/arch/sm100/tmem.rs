//! Tensor memory (TMEM): allocation, deallocation, and the epilogue's
//! `tcgen05.ld`.
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

/// `tcgen05.ld.sync.aligned.32x32b.x1.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 1 consecutive column starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 1 element of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 1 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x1(addr: TmemAddr) -> [u32; 1] {
    let mut r = [0u32; 1];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x1.b32 {{{r0}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            options(nostack)
        )
    };
    r
}

/// `tcgen05.ld.sync.aligned.32x32b.x2.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 2 consecutive columns starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 2 elements of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 2 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x2(addr: TmemAddr) -> [u32; 2] {
    let mut r = [0u32; 2];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x2.b32 {{{r0}, {r1}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            r1 = out(reg32) r[1],
            options(nostack)
        )
    };
    r
}

/// `tcgen05.ld.sync.aligned.32x32b.x4.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 4 consecutive columns starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 4 elements of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 4 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x4(addr: TmemAddr) -> [u32; 4] {
    let mut r = [0u32; 4];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x4.b32 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            r1 = out(reg32) r[1],
            r2 = out(reg32) r[2],
            r3 = out(reg32) r[3],
            options(nostack)
        )
    };
    r
}

/// `tcgen05.ld.sync.aligned.32x32b.x8.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 8 consecutive columns starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 8 elements of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 8 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x8(addr: TmemAddr) -> [u32; 8] {
    let mut r = [0u32; 8];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x8.b32 {{{r0}, {r1}, {r2}, {r3}, {r4}, {r5}, {r6}, {r7}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            r1 = out(reg32) r[1],
            r2 = out(reg32) r[2],
            r3 = out(reg32) r[3],
            r4 = out(reg32) r[4],
            r5 = out(reg32) r[5],
            r6 = out(reg32) r[6],
            r7 = out(reg32) r[7],
            options(nostack)
        )
    };
    r
}

/// `tcgen05.ld.sync.aligned.32x32b.x16.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 16 consecutive columns starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 16 elements of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 16 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x16(addr: TmemAddr) -> [u32; 16] {
    let mut r = [0u32; 16];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x16.b32 {{{r0}, {r1}, {r2}, {r3}, {r4}, {r5}, {r6}, {r7}, {r8}, {r9}, {r10}, {r11}, {r12}, {r13}, {r14}, {r15}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            r1 = out(reg32) r[1],
            r2 = out(reg32) r[2],
            r3 = out(reg32) r[3],
            r4 = out(reg32) r[4],
            r5 = out(reg32) r[5],
            r6 = out(reg32) r[6],
            r7 = out(reg32) r[7],
            r8 = out(reg32) r[8],
            r9 = out(reg32) r[9],
            r10 = out(reg32) r[10],
            r11 = out(reg32) r[11],
            r12 = out(reg32) r[12],
            r13 = out(reg32) r[13],
            r14 = out(reg32) r[14],
            r15 = out(reg32) r[15],
            options(nostack)
        )
    };
    r
}

/// `tcgen05.ld.sync.aligned.32x32b.x32.b32` then `tcgen05.wait::ld`: thread
/// `t` of the warp gets the 32 consecutive columns starting at `addr`'s column
/// in lane `addr.lane() + t` — for an M = 128 accumulator, 32 elements of
/// row `addr.lane() + t`.
///
/// Load and wait are one `asm` block, so the values are complete when this
/// returns (separate blocks would let the compiler move uses of the
/// registers above the wait).
///
/// # Safety
/// Executed by all 32 threads of the warp, converged, with the same `addr`;
/// `addr.lane()` is the first lane of this warp's lane quarter
/// ([`TmemAddr::warp_quarter`]); the 32 columns lie in a live allocation and
/// the MMAs writing them are complete and ordered before this call (their
/// commit barrier waited on, then
/// [`fence_after_thread_sync`](super::fence_after_thread_sync)).
#[inline(always)]
pub unsafe fn ld_32x32b_x32(addr: TmemAddr) -> [u32; 32] {
    let mut r = [0u32; 32];
    // SAFETY: see the contract above.
    unsafe {
        asm!(
            "tcgen05.ld.sync.aligned.32x32b.x32.b32 {{{r0}, {r1}, {r2}, {r3}, {r4}, {r5}, {r6}, {r7}, {r8}, {r9}, {r10}, {r11}, {r12}, {r13}, {r14}, {r15}, {r16}, {r17}, {r18}, {r19}, {r20}, {r21}, {r22}, {r23}, {r24}, {r25}, {r26}, {r27}, {r28}, {r29}, {r30}, {r31}}}, [{a}];",
            "tcgen05.wait::ld.sync.aligned;",
            a = in(reg32) addr.0,
            r0 = out(reg32) r[0],
            r1 = out(reg32) r[1],
            r2 = out(reg32) r[2],
            r3 = out(reg32) r[3],
            r4 = out(reg32) r[4],
            r5 = out(reg32) r[5],
            r6 = out(reg32) r[6],
            r7 = out(reg32) r[7],
            r8 = out(reg32) r[8],
            r9 = out(reg32) r[9],
            r10 = out(reg32) r[10],
            r11 = out(reg32) r[11],
            r12 = out(reg32) r[12],
            r13 = out(reg32) r[13],
            r14 = out(reg32) r[14],
            r15 = out(reg32) r[15],
            r16 = out(reg32) r[16],
            r17 = out(reg32) r[17],
            r18 = out(reg32) r[18],
            r19 = out(reg32) r[19],
            r20 = out(reg32) r[20],
            r21 = out(reg32) r[21],
            r22 = out(reg32) r[22],
            r23 = out(reg32) r[23],
            r24 = out(reg32) r[24],
            r25 = out(reg32) r[25],
            r26 = out(reg32) r[26],
            r27 = out(reg32) r[27],
            r28 = out(reg32) r[28],
            r29 = out(reg32) r[29],
            r30 = out(reg32) r[30],
            r31 = out(reg32) r[31],
            options(nostack)
        )
    };
    r
}
