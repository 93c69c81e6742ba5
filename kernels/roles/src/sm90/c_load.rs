//! The C-load role: one elected lane TMA-loads the C sub-tiles of every
//! tile the CTA finishes into the two consumer warpgroups'
//! `EpiLoadPipeline`s (only launched when `beta ≠ 0`).

use super::schedule::ClusterWork;
use baton::arch::ptx::tma::{TensorMap, load_3d};
use baton::epi_load::EpiLoadPipeline;
use baton::protocol::stream_k::split_share;
use baton::smem::SharedRef;
use baton::tile_pipeline::Tile;

/// The C-load role of a Hopper GEMM CTA: for every finalizing segment of
/// [`ClusterWork::segments`] (the segments that write D), `subtiles`
/// sub-tiles of `ROWS × COLS` per consumer warpgroup, warpgroup `w` taking
/// rows `w · ROWS..` of the tile.
///
/// Protocol contract (`EpiLoadPipeline`, per warpgroup): per sub-tile it
/// waits for the stage's `empty` barrier (count 1: the consumer
/// warpgroup's signalling thread, once the TMA store of the D written over
/// the C sub-tile has read it), arrives once on `full` with
/// `Tile::BYTES` expected (count 1), and the TMA load completes them. At
/// the end it waits until both warpgroups consumed every stage
/// (`drain`). Consumers see the sub-tiles in the order of
/// [`StoreEpilogue::store`](super::epilogue::StoreEpilogue::store):
/// segment by segment, sub-tile `j` of warpgroup 0 and 1 in turn.
///
/// ```ignore
/// let c_load = CLoad { pipes: [epi_for(0), epi_for(1)], tiles: epi_tiles, map_c: tma_c, work, batch_step: 1, tile_m: 128, tile_n: BN as u32, subtiles: BN as u32 / 32 };
/// unsafe { c_load.run() };
/// ```
pub struct CLoad<
    'a,
    T,
    const ROWS: usize,
    const COLS: usize,
    const RING: usize,
    const CLUSTER_M: u32,
> {
    /// The consumer warpgroups' C pipelines (barriers initialized with
    /// counts 1 and 1).
    pub pipes: [EpiLoadPipeline<'a, RING>; 2],
    /// Their stages' sub-tile buffers, `[warpgroup][stage]`.
    pub tiles: SharedRef<'a, [[Tile<T, ROWS, COLS>; RING]; 2]>,
    /// C's rank-3 tensor map (dims {N, M, batch}, box {COLS, ROWS, 1}).
    pub map_c: *const TensorMap,
    /// The schedule every role walks ([`ClusterWork::batched`]).
    pub work: ClusterWork<CLUSTER_M>,
    /// C's matrix of batch `b` is `b · batch_step`: 1, or 0 for one C
    /// shared by the whole batch.
    pub batch_step: u32,
    /// Tile rows (M).
    pub tile_m: u32,
    /// Tile columns (N).
    pub tile_n: u32,
    /// Sub-tiles per warpgroup and tile (`tile_n / COLS`).
    pub subtiles: u32,
}

impl<T, const ROWS: usize, const COLS: usize, const RING: usize, const CLUSTER_M: u32>
    CLoad<'_, T, ROWS, COLS, RING, CLUSTER_M>
{
    /// Runs the role.
    ///
    /// # Safety
    /// `map_c` is a valid tensor map of C in global memory, as described
    /// on the fields.
    ///
    /// ```ignore
    /// unsafe { c_load.run() };
    /// ```
    #[inline(always)]
    pub unsafe fn run(self) {
        // SAFETY: forwarded.
        unsafe { self.run_with::<false>() }
    }

    /// [`run`](Self::run) for a kernel whose consumers take the
    /// distributed split-K fixup
    /// (`StreamKFixup::reduce_split_share`): for a segment of a split unit
    /// (`StreamKSchedule::distributed_workers` is `Some((first, splits))`) this
    /// worker's consumer warpgroup `w` stores only its share
    /// `split_share(worker − first, splits, subtiles, w)` of the tile
    /// (`StoreEpilogue::store_range`), so only those sub-tiles are loaded,
    /// into that warpgroup's pipeline, in increasing order (sub-tile `j`
    /// of warpgroup 0 then 1, as in `run`); every other segment as in
    /// `run` (finalizers only).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    ///
    /// ```ignore
    /// unsafe { c_load.run_distributed() };
    /// ```
    #[inline(always)]
    pub unsafe fn run_distributed(self) {
        // SAFETY: forwarded.
        unsafe { self.run_with::<true>() }
    }

    #[inline(always)]
    unsafe fn run_with<const DISTRIBUTED: bool>(self) {
        let [mut epi0, mut epi1] = self.pipes;
        let (tiles, map_c) = (self.tiles, self.map_c);
        let load_c =
            |pipe: &mut EpiLoadPipeline<'_, RING>, w: usize, (col, row, b): (i32, i32, i32)| {
                let stage = pipe.produce_explicit();
                stage.arrive_expect_tx(Tile::<T, ROWS, COLS>::BYTES);
                // SAFETY: C map per the contract; the stage is ours.
                unsafe {
                    load_3d(
                        map_c,
                        tiles.at(w).at(stage.index() as usize),
                        stage.mbar(),
                        col,
                        row,
                        b,
                    )
                };
            };
        // C is read by the segments that write D: the finalizers.
        for seg in self.work.segments() {
            // Each warpgroup's sub-tiles `b..e` of this segment.
            let mut shares = [(0, self.subtiles); 2];
            match self.work.sched.distributed_workers(seg.unit) {
                Some((first, splits)) if DISTRIBUTED => {
                    let position = self.work.worker - first;
                    shares = [
                        split_share(position, splits, self.subtiles, 0),
                        split_share(position, splits, self.subtiles, 1),
                    ];
                }
                _ => {
                    if !seg.is_finalizer() {
                        continue;
                    }
                }
            }
            let (b, tm, tn) = self.work.batch_tile_of(seg.unit);
            let b = (b * self.batch_step) as i32;
            for j in 0..self.subtiles {
                let col = (tn * self.tile_n) as i32 + (j as usize * COLS) as i32;
                let row = (tm * self.tile_m) as i32;
                if j >= shares[0].0 && j < shares[0].1 {
                    load_c(&mut epi0, 0, (col, row, b));
                }
                if j >= shares[1].0 && j < shares[1].1 {
                    load_c(&mut epi1, 1, (col, row + ROWS as i32, b));
                }
            }
        }
        epi0.drain();
        epi1.drain();
    }

    /// Runs the role for a ping-pong kernel: segment `i` belongs to
    /// consumer warpgroup `i mod 2`, which stores the whole tile — rows
    /// `0..ROWS` then `ROWS..2·ROWS`, `subtiles` sub-tiles each, in the
    /// order of its two [`StoreEpilogue::store`](super::epilogue::StoreEpilogue::store)
    /// calls — so all of a tile's C goes to that warpgroup's pipeline.
    /// Same per-stage protocol as [`run`](Self::run); the warpgroups'
    /// epilogues take turns in segment order, which is the order of the
    /// loads, so neither ring waits on the other. Stream-K must be off
    /// (every segment a whole unit).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    ///
    /// ```ignore
    /// unsafe { c_load.run_pingpong() };
    /// ```
    #[inline(always)]
    pub unsafe fn run_pingpong(self) {
        let [mut epi0, mut epi1] = self.pipes;
        let (tiles, map_c) = (self.tiles, self.map_c);
        let load_c =
            |pipe: &mut EpiLoadPipeline<'_, RING>, w: usize, (col, row, b): (i32, i32, i32)| {
                let stage = pipe.produce_explicit();
                stage.arrive_expect_tx(Tile::<T, ROWS, COLS>::BYTES);
                // SAFETY: C map per the contract; the stage is ours.
                unsafe {
                    load_3d(
                        map_c,
                        tiles.at(w).at(stage.index() as usize),
                        stage.mbar(),
                        col,
                        row,
                        b,
                    )
                };
            };
        let mut w = 0usize;
        for seg in self.work.segments() {
            let (b, tm, tn) = self.work.batch_tile_of(seg.unit);
            let b = (b * self.batch_step) as i32;
            let pipe = if w == 0 { &mut epi0 } else { &mut epi1 };
            for half in 0..2u32 {
                let row = (tm * self.tile_m + half * ROWS as u32) as i32;
                for j in 0..self.subtiles {
                    let col = (tn * self.tile_n) as i32 + (j as usize * COLS) as i32;
                    load_c(pipe, w, (col, row, b));
                }
            }
            w ^= 1;
        }
        epi0.drain();
        epi1.drain();
    }

    /// Runs the role for a tall kernel (`tile_m = 4 · ROWS`: each consumer
    /// warpgroup computes `2 · ROWS` rows of every tile and stores rows
    /// `w · 2·ROWS..+ROWS` then `+ROWS..+2·ROWS`, `subtiles` sub-tiles
    /// each, in the order of its two
    /// [`StoreEpilogue::store`](super::epilogue::StoreEpilogue::store)
    /// calls). Same per-stage protocol as [`run`](Self::run); the loads
    /// alternate between the warpgroups, sub-tile by sub-tile, as there.
    /// Stream-K must be off (every segment a whole unit).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    ///
    /// ```ignore
    /// unsafe { c_load.run_tall() };
    /// ```
    #[inline(always)]
    pub unsafe fn run_tall(self) {
        let [mut epi0, mut epi1] = self.pipes;
        let (tiles, map_c) = (self.tiles, self.map_c);
        let load_c =
            |pipe: &mut EpiLoadPipeline<'_, RING>, w: usize, (col, row, b): (i32, i32, i32)| {
                let stage = pipe.produce_explicit();
                stage.arrive_expect_tx(Tile::<T, ROWS, COLS>::BYTES);
                // SAFETY: C map per the contract; the stage is ours.
                unsafe {
                    load_3d(
                        map_c,
                        tiles.at(w).at(stage.index() as usize),
                        stage.mbar(),
                        col,
                        row,
                        b,
                    )
                };
            };
        for seg in self.work.segments() {
            let (b, tm, tn) = self.work.batch_tile_of(seg.unit);
            let b = (b * self.batch_step) as i32;
            let col0 = (tn * self.tile_n) as i32;
            let row0 = (tm * self.tile_m) as i32;
            // One loop over the 2 · subtiles sub-tiles of each warpgroup
            // (rows of the top half, then of the bottom half). Its bound
            // is hidden from the optimizer: fully unrolled (16 loads over
            // two 4-stage rings) it needed more than the producer
            // warpgroup's 40 registers (ptxas spilled 88 bytes).
            for i in 0..opaque_u32(2 * self.subtiles) {
                let (half, j) = (i / self.subtiles, i % self.subtiles);
                let col = col0 + (j as usize * COLS) as i32;
                let row = row0 + (half as usize * ROWS) as i32;
                load_c(&mut epi0, 0, (col, row, b));
                load_c(&mut epi1, 1, (col, row + 2 * ROWS as i32, b));
            }
        }
        epi0.drain();
        epi1.drain();
    }
}

/// `x`, hidden from the optimizer by an opaque register move, so that a
/// loop bounded by it is not unrolled (what the C-load role of the tall
/// kernels needs to fit the producer warpgroup's registers).
///
/// ```ignore
/// for i in 0..opaque_u32(8) { /* not unrolled */ }
/// ```
#[inline(always)]
fn opaque_u32(x: u32) -> u32 {
    let y: u32;
    // SAFETY: a register-to-register move: no memory, no side effects.
    unsafe {
        core::arch::asm!("mov.u32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
    };
    y
}
