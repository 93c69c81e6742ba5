//! Pieces the GEMM kernels share: tile rasterization, bf16 packing, the
//! epilogue's swizzled staging layout, and the stream-K fixup.

use baton::arch::sm90::BarrierRef;
use baton::arch::sm90::tma::{TensorMap, load_2d, load_2d_multicast};
use baton::arch::sm90::wgmma::{SmemLayout, SplitDescriptor, descriptor_k_major};
use baton::arch::sm90::{
    block_idx_x, cluster_cta_rank, grid_dim_x, ld_global_v4_f32, named_barrier_sync,
    st_global_v4_f32,
};
use baton::pipeline::PendingRelease;
use baton::protocol::stream_k::FixupFlags;
use baton::protocol::tile_scheduler::{Segments, StreamKSchedule};
use baton::smem::SharedRef;
use baton::tile_pipeline::Tile;
use core::arch::asm;

/// Tile `t` of the grouped rasterization → (tile row, tile column): runs of
/// `group_m` tile rows (≥ 1) are walked column by column, so the CTAs in
/// flight share A rows and B columns in L2.
#[inline(always)]
pub fn tile_coords(t: u32, tiles_m: u32, tiles_n: u32, group_m: u32) -> (u32, u32) {
    let per_group = group_m * tiles_n;
    let group = t / per_group;
    let first_m = group * group_m;
    let group_rows = if tiles_m - first_m < group_m {
        tiles_m - first_m
    } else {
        group_m
    };
    let in_group = t % per_group;
    (first_m + in_group % group_rows, in_group / group_rows)
}

/// The `wgmma` descriptors (K-major, 128-byte swizzle) of the A and B tiles
/// of every input stage, derived from stage 0's by the stage index: one
/// multiply-add per operand in the main loop instead of re-encoding each
/// stage's addresses (shift, mask, or).
#[derive(Clone, Copy)]
pub struct StageDescriptors {
    a0: SplitDescriptor,
    b0: SplitDescriptor,
    /// Stage stride in 16-byte units.
    stage_units: u32,
}

impl StageDescriptors {
    /// Descriptors of stage 0's A tile at `a0` and B tile at `b0` (shared
    /// addresses), stages `stage_bytes` apart (a multiple of 16; the stages
    /// lie below 256 KiB, so the start-address field never overflows: see
    /// `SplitDescriptor::advance`).
    #[inline(always)]
    pub fn new(a0: u32, b0: u32, stage_bytes: u32) -> Self {
        Self {
            a0: SplitDescriptor::new(descriptor_k_major(a0, SmemLayout::Swizzle128B)),
            b0: SplitDescriptor::new(descriptor_k_major(b0, SmemLayout::Swizzle128B)),
            stage_units: stage_bytes / 16,
        }
    }

    /// (A, B) descriptors of stage `stage`.
    #[inline(always)]
    pub fn at(self, stage: u32) -> (SplitDescriptor, SplitDescriptor) {
        let units = stage * self.stage_units;
        (self.a0.advance_units(units), self.b0.advance_units(units))
    }
}

/// Packs two f32 into a bf16x2 word (round to nearest even), `lo` in the
/// low half: the element at the lower address.
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: pure conversion.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
    };
    r
}

/// Byte offset of (row, 4-byte column pair `pair`) in a 64×32 bf16 sub-tile
/// with TMA's 64-byte swizzle (16-byte chunk index XOR bits 1..2 of the row).
#[inline(always)]
pub fn swizzled64(row: u32, pair: u32) -> u32 {
    let byte = pair * 4;
    row * 64 + ((((byte >> 4) ^ (row >> 1)) & 3) << 4) + (byte & 15)
}

/// The persistent schedule every role of a Hopper GEMM CTA walks: work
/// units are `CLUSTER_M` vertically adjacent tiles sharing one B tile, a
/// worker is a cluster (CTA `rank` of it takes tile row
/// `unit_row · CLUSTER_M + rank`; a row past M is computed on zero-filled A
/// and clipped by the store), units go in grouped order (`group_m` unit
/// rows walked column by column), data-parallel first, then — with
/// stream-K — this worker's share of the K iterations of the rest.
#[derive(Clone, Copy)]
pub struct ClusterWork<const CLUSTER_M: u32> {
    /// The launch's schedule (the same in every CTA).
    pub sched: StreamKSchedule,
    /// This CTA's worker (cluster) index.
    pub worker: u32,
    /// This CTA's rank in its cluster.
    pub rank: u32,
    units_m: u32,
    tiles_n: u32,
    group_m: u32,
}

impl<const CLUSTER_M: u32> ClusterWork<CLUSTER_M> {
    /// The schedule of a `tiles_m × tiles_n` tile grid with `k_blocks` K
    /// blocks per tile on this launch's grid; stream-K per
    /// `(min_segment, extra_waves)` (`min_segment == 0`: off).
    #[inline(always)]
    pub fn new(
        tiles_m: u32,
        tiles_n: u32,
        k_blocks: u32,
        group_m: u32,
        (min_segment, extra_waves): (u32, u32),
    ) -> Self {
        let units_m = tiles_m.div_ceil(CLUSTER_M);
        let workers = grid_dim_x() / CLUSTER_M;
        Self {
            sched: StreamKSchedule::with_extra_waves(
                units_m * tiles_n,
                k_blocks,
                workers,
                min_segment,
                extra_waves,
            ),
            worker: block_idx_x() / CLUSTER_M,
            rank: if CLUSTER_M > 1 { cluster_cta_rank() } else { 0 },
            units_m,
            tiles_n,
            group_m,
        }
    }

    /// This worker's segments, in order.
    #[inline(always)]
    pub fn segments(&self) -> Segments {
        self.sched.segments(self.worker)
    }

    /// Unit `u` → this CTA's (tile row, tile column).
    #[inline(always)]
    pub fn tile_of(&self, u: u32) -> (u32, u32) {
        let (um, tn) = tile_coords(u, self.units_m, self.tiles_n, self.group_m);
        (um * CLUSTER_M + self.rank, tn)
    }
}

/// Rows of A that tile row `tm` loads: all `bm`, the ragged last row's
/// `tail_rows` (`M mod bm`, through a map whose box has just those rows), or
/// none for a cluster's row past M. TMA's zero fill of a box's rows past M
/// costs as much as loading them (at M = 8 a whole GEMM took 1.5× as long),
/// so they are not requested: the rows left unloaded keep stale stage data
/// and only feed D rows ≥ M, which the stores clip (rows of a product are
/// independent).
#[inline(always)]
pub fn a_rows_loaded(tm: u32, tiles_m: u32, tail_rows: u32, bm: u32) -> u32 {
    if tm >= tiles_m {
        0
    } else if tail_rows != 0 && tm == tiles_m - 1 {
        tail_rows
    } else {
        bm
    }
}

/// Hands a retired input stage back: to this CTA's `empty` barrier, or in
/// 2-CTA clusters to both CTAs' (each CTA's half of B was multicast into
/// the stage of both, so both producers wait for both CTAs' consumers).
/// CTA-scope remote arrivals suffice: the stage was only read, and the
/// MMAs that read it have retired.
#[inline(always)]
pub fn release_stage<const CLUSTER_M: u32>(pending: PendingRelease<'_>, signaller: bool) {
    if CLUSTER_M > 1 {
        pending.release_multicast_if(0b11, signaller);
    } else {
        pending.release_if(signaller);
    }
}

/// TMA load of a stage's B tile (`BN` rows of N from row `n0`, `BK`
/// elements of K from `kc`): the whole tile, or in 2-CTA clusters this
/// CTA's half (`HALF = BN / 2` rows, rank `rank`) multicast into both
/// CTAs' stage.
///
/// # Safety
/// As [`load_2d`] / [`load_2d_multicast`]: `map` describes B with box
/// {BK, BN / CLUSTER_M}; with clusters every CTA of the pair holds this
/// stage free and expects the whole tile's bytes on its own barrier.
#[inline(always)]
pub unsafe fn load_b_tile<
    T,
    const BN: usize,
    const HALF: usize,
    const BK: usize,
    const CLUSTER_M: u32,
>(
    map: *const TensorMap,
    b_tile: SharedRef<'_, Tile<T, BN, BK>>,
    bar: BarrierRef<'_>,
    kc: i32,
    n0: u32,
    rank: u32,
) {
    const { assert!(CLUSTER_M == 1 || (CLUSTER_M == 2 && 2 * HALF == BN)) };
    if CLUSTER_M == 1 {
        // SAFETY: forwarded to the caller.
        unsafe { load_2d(map, b_tile, bar, kc, n0 as i32) };
    } else {
        // SAFETY: rank < 2 and 2·HALF = BN: the half lies inside the tile.
        let half: SharedRef<'_, Tile<T, HALF, BK>> = unsafe {
            SharedRef::from_addr(
                b_tile.addr() + rank * (HALF * BK * core::mem::size_of::<T>()) as u32,
            )
        };
        // SAFETY: forwarded to the caller.
        unsafe { load_2d_multicast(map, half, bar, kc, (n0 + rank * HALF as u32) as i32, 0b11) };
    }
}

/// A launch's stream-K fixup state in global memory (see
/// `baton::protocol::stream_k`): one partial-accumulator slot and one flag
/// per consumer warpgroup of every CTA, and the launch's epoch.
///
/// Slot `s` holds a warpgroup's `128 × ACC` fp32 accumulators, thread-major
/// in 16-byte chunks: chunk `i` of thread `tid` at float `(i·128 + tid)·4`,
/// so each `st.global.v4` of the warpgroup writes 2 KiB contiguously.
/// Contributor and finalizer run the same kernel, so their register layouts
/// agree and the slot never needs the (row, column) of a value.
#[derive(Clone, Copy)]
pub struct StreamKFixup {
    partials: *mut f32,
    flags: *mut u32,
    epoch: u32,
}

impl StreamKFixup {
    /// # Safety
    /// Unless the schedule has no stream-K units (then nothing is
    /// accessed): with `slots` the kernel's slot count (2 per CTA),
    /// `partials` points at `slots · 128 · ACC` floats and
    /// `flags` at `slots` zero-initialized-once `u32`s, both global,
    /// 16-byte / 4-byte aligned, used by this launch alone; `epoch ≠ 0`
    /// differs from the previous launch's.
    #[inline(always)]
    pub unsafe fn new(partials: *mut f32, flags: *mut u32, epoch: u32) -> Self {
        Self {
            partials,
            flags,
            epoch,
        }
    }

    /// The flag of `slot` alone (a one-flag view: no bounds check, hence
    /// no panic path, in the kernel).
    ///
    /// # Safety
    /// `slot < slots`.
    #[inline(always)]
    unsafe fn flag(&self, slot: u32) -> FixupFlags<'_> {
        // SAFETY: per `new`'s contract and slot < slots.
        unsafe { FixupFlags::from_raw(self.flags.add(slot as usize), 1) }
    }

    /// Contributor warpgroup: writes its partial accumulators to `slot`,
    /// orders all 128 threads' writes before thread 0 (named barrier `bar`
    /// over the warpgroup), and thread 0 publishes the flag (release).
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup; `slot < slots` is this
    /// warpgroup's own, written once per launch.
    #[inline(always)]
    pub unsafe fn publish<const ACC: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        acc: &[f32; ACC],
    ) {
        let base = self.slot_ptr::<ACC>(slot);
        baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
            if (I as usize) < ACC / 4 {
                let i = 4 * I as usize;
                // SAFETY: inside this slot (chunk I of thread tid < 128).
                unsafe {
                    st_global_v4_f32(
                        base.add((I * 128 + tid) as usize * 4),
                        [acc[i], acc[i + 1], acc[i + 2], acc[i + 3]],
                    )
                };
            }
        });
        named_barrier_sync(bar, 128);
        if tid == 0 {
            // SAFETY: slot < slots (caller).
            unsafe { self.flag(slot) }.publish(0, self.epoch);
        }
    }

    /// Finalizer warpgroup: waits (thread 0, acquire; then named barrier
    /// `bar`) until `slot` is published in this launch, and adds it into
    /// `acc`.
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup; `slot < slots` is
    /// published by a contributor of this launch (the schedule's
    /// `contributors`), or this waits forever.
    #[inline(always)]
    pub unsafe fn accumulate<const ACC: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        acc: &mut [f32; ACC],
    ) {
        if tid == 0 {
            // SAFETY: slot < slots (caller).
            unsafe { self.flag(slot) }.wait(0, self.epoch);
        }
        named_barrier_sync(bar, 128);
        let base = self.slot_ptr::<ACC>(slot);
        baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
            if (I as usize) < ACC / 4 {
                let i = 4 * I as usize;
                // SAFETY: inside the slot; published (acquire) and ordered
                // before every thread by the barrier.
                let v = unsafe { ld_global_v4_f32(base.add((I * 128 + tid) as usize * 4)) };
                acc[i] += v[0];
                acc[i + 1] += v[1];
                acc[i + 2] += v[2];
                acc[i + 3] += v[3];
            }
        });
    }

    #[inline(always)]
    fn slot_ptr<const ACC: usize>(&self, slot: u32) -> *mut f32 {
        const { assert!(ACC % 4 == 0 && ACC <= 128) };
        self.partials.wrapping_add(slot as usize * 128 * ACC)
    }
}

/// The stream-K fixup step of a consumer warpgroup after the main loop of
/// segment `$seg` (all 128 threads; named barrier `1 + $wg`), inside the
/// loop over `$sched.segments(worker)`:
///
/// * a contributor (its segment does not start the unit) publishes its
///   partial to its own slot and `continue`s: it has no epilogue;
/// * a finalizer of a split unit adds the contributors' partials (the same
///   rank's CTA of each worker in `StreamKSchedule::contributors`, in
///   worker order), then falls through to the epilogue, as does a whole unit.
///
/// Slots are per consumer warpgroup (`$wg` 0 or 1) of each CTA; worker
/// `w`'s CTA of rank `$rank` is CTA `w · $cluster_m + $rank` of the 1-D grid.
/// (A macro, not a function: the same instructions as written inline — a
/// function of the same body made ptxas spill in the 128×256 kernel.)
///
/// Safety: the kernel's stream-K buffers per [`StreamKFixup::new`];
/// `$seg` comes from this launch's schedule, walked in order.
macro_rules! stream_k_fixup {
    ($fixup:expr, $sched:expr, $seg:expr, $cluster_m:expr, $rank:expr, $wg:expr, $tid:expr, $acc:expr, $acc_len:expr) => {
        let bar = 1 + $wg;
        if $seg.is_contributor() {
            let slot = baton::arch::sm90::block_idx_x() * 2 + $wg;
            // SAFETY: all 128 threads; the slot is ours, published once per
            // launch (a worker has one contributor segment at most).
            unsafe { $fixup.publish::<{ $acc_len }>(slot, $tid, bar, &$acc) };
            continue;
        }
        if !$seg.is_whole() {
            let (first, last) = $sched.contributors($seg.unit);
            for c in first..=last {
                let slot = (c * $cluster_m + $rank) * 2 + $wg;
                // SAFETY: all 128 threads; worker c contributes to this unit
                // in this launch (StreamKSchedule::contributors).
                unsafe { $fixup.accumulate::<{ $acc_len }>(slot, $tid, bar, &mut $acc) };
            }
        }
    };
}
pub(crate) use stream_k_fixup;
