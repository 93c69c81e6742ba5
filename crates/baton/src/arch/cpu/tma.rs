//! Simulated TMA (CPU backend): the same functions as
//! [`arch::ptx::tma`](crate::arch) with the same byte layout.
//!
//! A [`TensorMap`] here describes a host tensor ([`TensorMapDesc`]: base
//! address, element type, dims, byte strides, box, swizzle). A load copies
//! the box at the given element coordinates into a shared [`Tile`] — row by
//! row, out-of-bounds elements as zeros, each byte at the shared offset the
//! hardware's swizzle puts it ([`Swizzle::apply`](crate::tensor_map::Swizzle::apply)) — and then completes the
//! box's bytes on the stage's barrier ([`BarrierRef::complete_tx`]), as the
//! copy engine does. A store copies a tile back, clipping elements outside
//! the tensor. Copies are synchronous, so the bulk-group commit/wait
//! functions are no-ops.
//!
//! Checked against the hardware (H100, driver 580, 2026-11-23): boxes
//! loaded by `cp.async.bulk.tensor` with no swizzle and with the 32-, 64-
//! and 128-byte swizzles, in bounds and hanging off every edge (negative
//! coordinates included), were dumped from shared memory and compared with
//! this simulation: byte-identical, zero fill included.
//!
//! The barrier update is an acquire-release RMW (loom's atomics under
//! `--cfg loom`) and the tile bytes go through the tile's `UnsafeCell`
//! (loom's under loom), so the model checker sees the copy as writes
//! published by the `complete_tx`.

use super::mbarrier::BarrierRef;
use crate::protocol::tile_pipeline::Tile;
use crate::smem::SharedRef;
use crate::tensor_map::{MAX_RANK, OobFill, TensorMapDesc, TensorMapError};

/// A validated tensor map of a host tensor (the CPU stand-in for the
/// driver-encoded 128-byte `CUtensorMap`; same 64-byte alignment).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    desc: TensorMapDesc,
}

impl TensorMap {
    /// Validates `desc` ([`TensorMapDesc::validate`]) and wraps it.
    ///
    /// # Safety
    /// `desc.base` is the host address of a tensor with `desc`'s dims and
    /// strides, valid for reads (loads) and writes (stores) for as long as
    /// the map is used, and not accessed by other code while copies run.
    ///
    /// # Errors
    /// The first constraint `desc` violates, or
    /// [`TensorMapError::NanFillNotSimulated`] for NaN fill.
    ///
    /// ```
    /// use baton::arch::cpu::tma::TensorMap;
    /// use baton::tensor_map::{ElemType, OobFill, Swizzle, TensorMapDesc, TensorMapError};
    ///
    /// let m = vec![0u128; 64]; // 16-byte aligned host memory: 32 × 16 bf16
    /// let desc = TensorMapDesc::matrix_2d(ElemType::BF16, m.as_ptr() as u64, 32, 16, 32, 8, 16, Swizzle::B32);
    /// // SAFETY: `m` outlives the map.
    /// let map = unsafe { TensorMap::new(desc) }.unwrap();
    /// assert_eq!(map.desc().box_bytes(), 8 * 16 * 2);
    /// let nan = TensorMapDesc { oob_fill: OobFill::NanRequestZeroFma, ..desc };
    /// assert_eq!(unsafe { TensorMap::new(nan) }, Err(TensorMapError::NanFillNotSimulated));
    /// ```
    pub unsafe fn new(desc: TensorMapDesc) -> Result<Self, TensorMapError> {
        desc.validate()?;
        if desc.oob_fill != OobFill::Zero {
            return Err(TensorMapError::NanFillNotSimulated);
        }
        Ok(Self { desc })
    }

    /// The description.
    pub fn desc(&self) -> &TensorMapDesc {
        &self.desc
    }
}

/// A tile-sized check shared by loads and stores.
fn check_tile<T, const R: usize, const C: usize>(desc: &TensorMapDesc, rank: u32) {
    assert_eq!(
        desc.rank, rank,
        "baton tma: {rank}-d copy with a rank-{} tensor map",
        desc.rank
    );
    assert_eq!(
        core::mem::size_of::<T>() as u32,
        desc.dtype.bytes(),
        "baton tma: tile element size differs from the tensor map's {:?}",
        desc.dtype
    );
    assert!(
        desc.box_bytes() <= Tile::<T, R, C>::BYTES,
        "baton tma: box of {} bytes does not fit a {}-byte tile",
        desc.box_bytes(),
        Tile::<T, R, C>::BYTES
    );
}

/// Visits every element of the box at `coords`: `f(global byte offset or
/// None when out of bounds, shared byte offset)`.
fn for_each_element(
    desc: &TensorMapDesc,
    coords: [i32; MAX_RANK],
    mut f: impl FnMut(Option<usize>, usize),
) {
    let es = desc.dtype.bytes() as usize;
    let rank = desc.rank as usize;
    let mut bx = [1u32; MAX_RANK];
    bx[..rank].copy_from_slice(&desc.box_dims[..rank]);
    let strides = [es as u64, desc.strides_bytes[0], desc.strides_bytes[1]];
    let mut linear = 0usize;
    for z in 0..bx[2] as i64 {
        for y in 0..bx[1] as i64 {
            for x in 0..bx[0] as i64 {
                let g = [
                    coords[0] as i64 + x,
                    coords[1] as i64 + y,
                    coords[2] as i64 + z,
                ];
                let inside = (0..rank).all(|d| g[d] >= 0 && (g[d] as u64) < desc.dims[d]);
                let global = inside
                    .then(|| (0..rank).map(|d| g[d] as u64 * strides[d]).sum::<u64>() as usize);
                f(global, desc.swizzle.apply(linear * es));
                linear += 1;
            }
        }
    }
}

/// Copies the box at `coords` into `dst` and completes its bytes on `bar`.
///
/// # Safety
/// See [`load_2d`].
unsafe fn load<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    coords: [i32; MAX_RANK],
    rank: u32,
) {
    // SAFETY: forwarded.
    unsafe { load_at(map, dst, 0, bar, coords, rank) }
}

/// [`load`] into `dst` from byte `offset` of the tile on.
///
/// # Safety
/// See [`load_2d_at`].
unsafe fn load_at<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    offset: u32,
    bar: BarrierRef<'_>,
    coords: [i32; MAX_RANK],
    rank: u32,
) {
    // SAFETY: the caller passes a live map.
    let desc = unsafe { &(*map).desc };
    check_tile::<T, R, C>(desc, rank);
    assert!(
        offset.is_multiple_of(128) && offset + desc.box_bytes() <= Tile::<T, R, C>::BYTES,
        "baton tma: a box of {} bytes at byte {offset} of a {}-byte tile (offsets are multiples of 128)",
        desc.box_bytes(),
        Tile::<T, R, C>::BYTES
    );
    let offset = offset as usize;
    let es = desc.dtype.bytes() as usize;
    let base = desc.base as usize as *const u8;
    // SAFETY: the producer holds the stage (caller contract); global offsets
    // are inside the tensor (bounds-checked above), shared offsets inside
    // the tile (box_bytes <= tile bytes; the swizzle permutes within it).
    unsafe {
        dst.get().with_mut_ptr(|tile| {
            for_each_element(desc, coords, |global, shared| match global {
                Some(g) => {
                    core::ptr::copy_nonoverlapping(base.add(g), tile.add(offset + shared), es)
                }
                None => core::ptr::write_bytes(tile.add(offset + shared), 0, es),
            })
        })
    };
    bar.complete_tx(desc.box_bytes());
}

/// Copies the tile to the box at `coords`, skipping out-of-bounds elements.
unsafe fn store<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    src: SharedRef<'_, Tile<T, R, C>>,
    coords: [i32; MAX_RANK],
    rank: u32,
) {
    // SAFETY: the caller passes a live map.
    let desc = unsafe { &(*map).desc };
    check_tile::<T, R, C>(desc, rank);
    let es = desc.dtype.bytes() as usize;
    let base = desc.base as usize as *mut u8;
    // SAFETY: as `load`, reading the tile and writing the host tensor.
    unsafe {
        src.get().with_ptr(|tile| {
            for_each_element(desc, coords, |global, shared| {
                if let Some(g) = global {
                    core::ptr::copy_nonoverlapping(tile.add(shared), base.add(g), es)
                }
            })
        })
    };
}

/// TMA load of the 2-D box at element coordinates `(c0, c1)` (innermost
/// first: column, row) into `dst`, completing the box's bytes on `bar`
/// (`cp.async.bulk.tensor.2d…mbarrier::complete_tx::bytes`).
///
/// The box is written densely (then swizzled) from the tile's first byte,
/// so a tile whose `COLS` equals the box's inner extent sees element
/// `(row, col)` of the box at `(row, col)`. Elements outside the tensor
/// read as zero; the full box counts toward the transaction bytes.
///
/// ```
/// use baton::arch::cpu::tma::{self, TensorMap};
/// use baton::arch::cpu::MbarrierCell;
/// use baton::arch::cpu::BarrierRef;
/// use baton::smem::SharedRef;
/// use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
/// use baton::tile_pipeline::Tile;
///
/// // A 3 × 4 f32 matrix (rows padded to 16 bytes), loaded as a 4 × 4 box.
/// let m: Vec<u128> = (0..3u32).map(|r| u128::from_le_bytes(bytemuck_row(r))).collect();
/// # fn bytemuck_row(r: u32) -> [u8; 16] {
/// #     let mut b = [0u8; 16];
/// #     for c in 0..4 { b[4 * c..4 * c + 4].copy_from_slice(&((r * 4 + c as u32) as f32).to_le_bytes()); }
/// #     b
/// # }
/// let desc = TensorMapDesc::matrix_2d(ElemType::F32, m.as_ptr() as u64, 3, 4, 16, 4, 4, Swizzle::None);
/// let map = unsafe { TensorMap::new(desc) }.unwrap();
/// let (tile, cell) = (Tile::<f32, 4, 4>::new(), MbarrierCell::new());
/// let bar = BarrierRef::new(SharedRef::from_ref(&cell));
/// unsafe { bar.init(1) };
/// bar.arrive_expect_tx(Tile::<f32, 4, 4>::BYTES);
/// // SAFETY: this thread owns the tile; the map is live.
/// unsafe { tma::load_2d(&map, SharedRef::from_ref(&tile), bar, 0, 0) };
/// assert!(bar.try_wait_parity(0), "the copy completed the 64 bytes");
/// assert_eq!(unsafe { tile.read(Swizzle::None, 2, 3) }, 11.0);
/// assert_eq!(unsafe { tile.read(Swizzle::None, 3, 0) }, 0.0); // row 3 is out of bounds
/// ```
///
/// # Safety
/// `map` points to a live [`TensorMap`] of rank 2 whose box fits `dst`; the
/// calling thread holds the stage `dst` belongs to as its producer, and an
/// `arrive_expect_tx` on `bar` accounts for the bytes.
pub unsafe fn load_2d<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded.
    unsafe { load(map, dst, bar, [c0, c1, 0], 2) }
}

/// [`load_2d`] into `dst` from byte `offset` of the tile on (a multiple of
/// 128: TMA's shared-memory destinations are 128-byte aligned), so that
/// one tile holds several boxes. Panics when the box does not fit behind
/// `offset`.
///
/// ```
/// use baton::arch::cpu::tma::{self, TensorMap};
/// use baton::arch::cpu::{BarrierRef, MbarrierCell};
/// use baton::smem::SharedRef;
/// use baton::tensor_map::{ElemType, TensorMapDesc};
/// use baton::tile_pipeline::Tile;
///
/// let v: Vec<f32> = (0..40).map(|i| i as f32).collect();
/// let map = unsafe { TensorMap::new(TensorMapDesc::vector(ElemType::F32, v.as_ptr() as u64, 40, 8)) }.unwrap();
/// let (tile, cell) = (Tile::<f32, 2, 64>::new(), MbarrierCell::new());
/// let bar = BarrierRef::new(SharedRef::from_ref(&cell));
/// unsafe { bar.init(1) };
/// bar.arrive_expect_tx(2 * 32);
/// // Floats 0..8 at the tile's start, 36..44 (40.. out of bounds) 128 bytes on.
/// unsafe { tma::load_2d_at(&map, SharedRef::from_ref(&tile), 0, bar, 0, 0) };
/// unsafe { tma::load_2d_at(&map, SharedRef::from_ref(&tile), 128, bar, 36, 0) };
/// assert!(bar.try_wait_parity(0));
/// let at = |i: usize| unsafe { tile.read(baton::tensor_map::Swizzle::None, i / 64, i % 64) };
/// assert_eq!((at(7), at(32), at(35), at(36)), (7.0, 36.0, 39.0, 0.0));
/// ```
///
/// # Safety
/// As [`load_2d`], the box fitting `dst` from `offset` on.
pub unsafe fn load_2d_at<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    offset: u32,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded.
    unsafe { load_at(map, dst, offset, bar, [c0, c1, 0], 2) }
}

/// TMA load of the 3-D box at `(c0, c1, c2)`; see [`load_2d`].
///
/// # Safety
/// As [`load_2d`], with a rank-3 map.
pub unsafe fn load_3d<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    c2: i32,
) {
    // SAFETY: forwarded.
    unsafe { load(map, dst, bar, [c0, c1, c2], 3) }
}

/// Checks a multicast CTA mask against the calling thread's simulated
/// cluster ([`CpuCluster`](super::CpuCluster); a cluster of one outside a
/// runner): panics when the mask is empty or names a CTA rank ≥
/// [`cluster_size`](super::cluster_size) — the check the PTX backend traps
/// on in debug builds.
///
/// ```
/// use baton::arch::cpu::tma::validate_cta_mask;
/// validate_cta_mask(0b1); // a plain thread is CTA 0 of a cluster of one
/// assert!(std::panic::catch_unwind(|| validate_cta_mask(0b10)).is_err());
/// ```
#[inline]
pub fn validate_cta_mask(cta_mask: u16) {
    let n = super::cluster_size();
    assert!(
        cta_mask != 0 && (cta_mask as u32) >> n == 0,
        "baton: multicast CTA mask {cta_mask:#06b} is empty or names CTAs outside the cluster of {n} CTA(s)"
    );
}

/// Runs `load_one(dst, bar)` for the tile and barrier at `dst`'s and
/// `bar`'s offsets in every CTA of `cta_mask`, in rank order.
fn for_each_cta<'a, T>(
    dst: SharedRef<'a, T>,
    bar: BarrierRef<'a>,
    cta_mask: u16,
    mut load_one: impl FnMut(SharedRef<'a, T>, BarrierRef<'a>),
) {
    validate_cta_mask(cta_mask);
    for rank in (0..16u32).filter(|r| cta_mask >> r & 1 != 0) {
        load_one(super::map_shared(dst, rank), bar.in_cta(rank));
    }
}

/// Multicast form of [`load_2d`]: the box lands at `dst`'s shared offset
/// in every CTA of `cta_mask` (bit `i` = CTA rank `i` of the calling
/// thread's simulated cluster, this CTA included only if its bit is set)
/// and completes its bytes on the barrier at `bar`'s offset in each —
/// `cp.async.bulk.tensor.2d…multicast::cluster`. Panics on a mask that
/// [`validate_cta_mask`] rejects.
///
/// ```
/// use baton::arch::cpu::tma::{self, TensorMap};
/// use baton::arch::cpu::{BarrierRef, CpuCluster, MbarrierCell, cluster_sync};
/// use baton::smem::SharedRef;
/// use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
/// use baton::tile_pipeline::Tile;
///
/// let m: Vec<f32> = (0..16).map(|i| i as f32).collect(); // 4 × 4
/// let desc = TensorMapDesc::matrix_2d(ElemType::F32, m.as_ptr() as u64, 4, 4, 16, 4, 4, Swizzle::None);
/// let map = unsafe { TensorMap::new(desc) }.unwrap();
/// let cluster = CpuCluster::new((0..2).map(|_| (Tile::<f32, 4, 4>::new(), MbarrierCell::new())));
/// cluster.run_warps(1, |warp, smem| {
///     let (tile, cell) = smem.get();
///     let bar = BarrierRef::new(SharedRef::from_ref(cell));
///     unsafe { bar.init(1) };
///     // Each CTA's elected lane expects the box.
///     baton::arch::cpu::elect_one(|| bar.arrive_expect_tx(Tile::<f32, 4, 4>::BYTES));
///     cluster_sync();
///     if warp.cta_rank() == 0 {
///         // CTA 0 issues one load for both CTAs.
///         unsafe { tma::load_2d_multicast(&map, SharedRef::from_ref(tile), bar, 0, 0, 0b11) };
///     }
///     bar.wait_parity(0, || unreachable!());
///     assert_eq!(unsafe { tile.read(Swizzle::None, 3, 2) }, 14.0);
/// });
/// ```
///
/// # Safety
/// As [`load_2d`], for the tile and barrier in every CTA of the mask (each
/// CTA's barrier expects the box's bytes).
pub unsafe fn load_2d_multicast<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    cta_mask: u16,
) {
    // SAFETY: forwarded, per CTA.
    for_each_cta(dst, bar, cta_mask, |d, b| unsafe {
        load_2d(map, d, b, c0, c1)
    })
}

/// Multicast form of [`load_3d`]; see [`load_2d_multicast`].
///
/// # Safety
/// As [`load_2d_multicast`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn load_3d_multicast<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    dst: SharedRef<'_, Tile<T, R, C>>,
    bar: BarrierRef<'_>,
    c0: i32,
    c1: i32,
    c2: i32,
    cta_mask: u16,
) {
    // SAFETY: forwarded, per CTA.
    for_each_cta(dst, bar, cta_mask, |d, b| unsafe {
        load_3d(map, d, b, c0, c1, c2)
    })
}

/// TMA store of `src` to the 2-D box at `(c0, c1)`; elements outside the
/// tensor are not written (`cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`).
///
/// # Safety
/// `map` is a live rank-2 map whose box fits `src`; the caller holds the
/// stage `src` belongs to (and on the GPU fenced its generic-proxy writes
/// with `fence_proxy_async_shared`); it must not release the stage before
/// [`store_wait_group_read`] says the tile was read.
pub unsafe fn store_2d<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    src: SharedRef<'_, Tile<T, R, C>>,
    c0: i32,
    c1: i32,
) {
    // SAFETY: forwarded.
    unsafe { store(map, src, [c0, c1, 0], 2) }
}

/// TMA store to the 3-D box at `(c0, c1, c2)`; see [`store_2d`].
///
/// # Safety
/// As [`store_2d`], with a rank-3 map.
pub unsafe fn store_3d<T: Copy, const R: usize, const C: usize>(
    map: *const TensorMap,
    src: SharedRef<'_, Tile<T, R, C>>,
    c0: i32,
    c1: i32,
    c2: i32,
) {
    // SAFETY: forwarded.
    unsafe { store(map, src, [c0, c1, c2], 3) }
}

/// Closes the current bulk group of stores (`cp.async.bulk.commit_group`).
/// CPU: stores are synchronous; no-op.
#[inline]
pub fn store_commit_group() {}

/// Waits until at most `N` committed store groups still *read* shared
/// memory (`cp.async.bulk.wait_group.read N`); then their tiles may be
/// reused. CPU: no-op.
#[inline]
pub fn store_wait_group_read<const N: u32>() {}

/// Waits until at most `N` committed store groups are incomplete (writes
/// visible in global memory; `cp.async.bulk.wait_group N`). CPU: no-op.
#[inline]
pub fn store_wait_group<const N: u32>() {}

/// Prefetches the tensor map into the descriptor cache
/// (`prefetch.tensormap`). CPU: no-op.
///
/// # Safety
/// `map` points to a live tensor map.
#[inline]
pub unsafe fn prefetch_tensormap(map: *const TensorMap) {
    let _ = map;
}
