//! TMA (`cp.async.bulk.tensor`) on Hopper: tiled loads into shared memory
//! that complete on an mbarrier (optionally multicast to CTAs of the
//! cluster), tiled stores from shared memory in bulk groups, and tensor-map
//! prefetch.
//!
//! Tensor maps live in **global** memory (`*const TensorMap`): rustc's nvptx
//! ABI cannot pass a 64-byte-aligned 128-byte struct by value, and a
//! by-value kernel parameter whose address is taken is copied to local
//! memory, which TMA cannot read. The host encodes the 128 bytes with
//! `cuTensorMapEncodeTiled` (after [`TensorMapDesc::validate`](crate::tensor_map::TensorMapDesc::validate))
//! and copies them to the device; kernels take the pointer.
//!
//! The CPU backend ([`crate::arch`] `cpu::tma`) has the same functions with
//! the same signatures, simulated byte-exactly, so tile-pipeline code is
//! arch-independent.

use super::{BarrierRef, cluster_size, trap};
use crate::protocol::tile_pipeline::Tile;
use crate::smem::SharedRef;
use core::arch::asm;

/// An encoded tensor map (`CUtensorMap`): 128 opaque bytes written by the
/// host, 64-byte aligned, in global memory.
#[repr(C, align(64))]
pub struct TensorMap {
    opaque: [u64; 16],
}

impl TensorMap {
    /// Wraps the driver-encoded bytes.
    pub const fn from_words(opaque: [u64; 16]) -> Self {
        Self { opaque }
    }

    /// The encoded bytes.
    pub const fn words(&self) -> &[u64; 16] {
        &self.opaque
    }
}

/// Checks a multicast CTA mask against the cluster in debug builds (traps
/// when the mask is empty or names a CTA rank ≥ `%cluster_nctarank`); no
/// code in release builds.
#[inline(always)]
pub fn validate_cta_mask(cta_mask: u16) {
    if cfg!(debug_assertions) {
        let n = cluster_size();
        if cta_mask == 0 || (n < 16 && (cta_mask as u32) >> n != 0) {
            trap();
        }
    }
}

/// TMA load of the 2-D box at element coordinates `(c0, c1)` (innermost
/// first: column, row) into `dst`; the bytes complete on `bar`
/// (`cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes`).
///
/// # Safety
/// `map` is the generic address of a live, encoded rank-2 tensor map in
/// global memory whose box fits `dst`; the calling thread holds `dst`'s
/// stage as producer and `bar`'s phase expects these bytes
/// (`arrive_expect_tx`).
#[inline(always)]
pub unsafe fn load_2d<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded to the caller (offset 0: the tile's start).
    unsafe { load_2d_at(map, dst, 0, bar, c0, c1) };
}

/// [`load_2d`] into `dst` from byte `offset` of the tile on (a multiple of
/// 128, TMA's shared-memory destination alignment), so that one tile
/// holds several boxes.
///
/// # Safety
/// As [`load_2d`], the box fitting `dst` from `offset` on; `offset` a
/// multiple of 128.
#[inline(always)]
pub unsafe fn load_2d_at<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    offset: u32,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}}}], [{b}];",
            d = in(reg32) dst.addr() + offset, m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1,
            b = in(reg32) bar.addr(), options(nostack)
        )
    };
}

/// TMA load of the 3-D box at `(c0, c1, c2)`; see [`load_2d`].
///
/// # Safety
/// As [`load_2d`], with a rank-3 map.
#[inline(always)]
pub unsafe fn load_3d<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    c2: i32,
) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}];",
            d = in(reg32) dst.addr(), m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1,
            c2 = in(reg32) c2, b = in(reg32) bar.addr(), options(nostack)
        )
    };
}

/// Multicast TMA load: the box lands at `dst`'s shared offset in every CTA
/// of `cta_mask` and completes on the barrier at `bar`'s offset in each
/// (`.multicast::cluster`). The mask is checked in debug builds
/// ([`validate_cta_mask`]).
///
/// # Safety
/// As [`load_2d`], for every CTA in the mask: each holds that stage free
/// and expects the bytes on its own barrier.
#[inline(always)]
pub unsafe fn load_2d_multicast<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    cta_mask: u16,
) {
    validate_cta_mask(cta_mask);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}}}], [{b}], {k};",
            d = in(reg32) dst.addr(), m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1,
            b = in(reg32) bar.addr(), k = in(reg16) cta_mask, options(nostack)
        )
    };
}

/// Multicast form of [`load_3d`].
///
/// # Safety
/// As [`load_2d_multicast`], with a rank-3 map.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn load_3d_multicast<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    c2: i32,
    cta_mask: u16,
) {
    validate_cta_mask(cta_mask);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}], {k};",
            d = in(reg32) dst.addr(), m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1,
            c2 = in(reg32) c2, b = in(reg32) bar.addr(), k = in(reg16) cta_mask, options(nostack)
        )
    };
}

/// TMA store of `src` to the 2-D box at `(c0, c1)`, clipping elements
/// outside the tensor (`cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`).
/// Commit with [`store_commit_group`]; reuse `src` after
/// [`store_wait_group_read`].
///
/// # Safety
/// `map` is a live rank-2 map whose box fits `src`; generic-proxy writes to
/// `src` were fenced with `fence_proxy_async_shared`; the caller holds
/// `src`'s stage until the store has read it.
#[inline(always)]
pub unsafe fn store_2d<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    src: SharedRef<'_, Tile<T, R, C>>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];",
            m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1, s = in(reg32) src.addr(),
            options(nostack)
        )
    };
}

/// TMA store to the 3-D box at `(c0, c1, c2)`; see [`store_2d`].
///
/// # Safety
/// As [`store_2d`], with a rank-3 map.
#[inline(always)]
pub unsafe fn store_3d<T, const R: usize, const C: usize>(
    map: *const TensorMap,
    src: SharedRef<'_, Tile<T, R, C>>,
    c0: i32,
    c1: i32,
    c2: i32,
) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];",
            m = in(reg64) map as u64, c0 = in(reg32) c0, c1 = in(reg32) c1, c2 = in(reg32) c2,
            s = in(reg32) src.addr(), options(nostack)
        )
    };
}

/// `cp.async.bulk.commit_group`: closes this thread's current group of bulk
/// stores.
#[inline(always)]
pub fn store_commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) };
}

/// `cp.async.bulk.wait_group.read N`: waits until at most `N` of this
/// thread's committed store groups still read shared memory.
#[inline(always)]
pub fn store_wait_group_read<const N: u32>() {
    // SAFETY: a wait.
    unsafe { asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack)) };
}

/// `cp.async.bulk.wait_group N`: waits until at most `N` of this thread's
/// committed store groups are incomplete (their writes are done).
#[inline(always)]
pub fn store_wait_group<const N: u32>() {
    // SAFETY: a wait.
    unsafe { asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack)) };
}

/// `prefetch.tensormap`: brings the tensor map into the descriptor cache.
///
/// # Safety
/// `map` is the generic address of a live tensor map.
#[inline(always)]
pub unsafe fn prefetch_tensormap(map: *const TensorMap) {
    // SAFETY: forwarded to the caller.
    unsafe { asm!("prefetch.tensormap [{m}];", m = in(reg64) map as u64, options(nostack)) };
}
