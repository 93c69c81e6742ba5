//! The TMA producer role: one elected lane walks the schedule and fills the
//! input stages of an `InputTilePipeline` by TMA — A and B tiles (or this
//! CTA's multicast half of B in 2-CTA clusters), the ragged last tile row's
//! rows only, and whatever else a stage holds (FP8 A scales) through the
//! kernel's loader.

use super::schedule::{ClusterWork, TileRows};
use crate::trace::{self, Event};
use baton::arch::ptx::BarrierRef;
use baton::arch::ptx::tma::{TensorMap, load_2d, load_2d_multicast, load_3d, load_3d_multicast};
use baton::smem::SharedRef;
use baton::tile_pipeline::{InputTilePipeline, Tile, TilePayload};

/// The tile a segment's stages belong to, as the producer hands it to the
/// kernel's loader.
#[derive(Clone, Copy)]
pub struct ProducerTile {
    /// Tile row (M).
    pub tm: u32,
    /// Tile column (N).
    pub tn: u32,
    /// Rows of A this tile row loads ([`TileRows::a_rows`]): `bm`, the
    /// ragged tail's, or 0 past M.
    pub a_rows: u32,
    /// Matrix of the batch ([`TmaProducer::run_batched`]; 0 from
    /// [`TmaProducer::run`]).
    pub batch: u32,
}

/// The TMA producer role of a Hopper GEMM CTA (one elected lane of the
/// producer warp runs it).
///
/// Protocol contract (`InputTilePipeline`): per K block of every segment of
/// [`ClusterWork::segments`], in order, it waits for the stage's `empty`
/// barrier (its `init` count: one arrival per consumer warpgroup of every
/// CTA whose TMA writes into the stage — `2 · CLUSTER_M`), arrives once on
/// `full` with the expected transaction bytes — the payload's `TMA_BYTES`
/// for a full tile row, the loader's trimmed count for a ragged or empty
/// one — and issues the loads, which complete those bytes. At the end it
/// drains: waits until the consumers of every CTA released every stage, so
/// no peer's arrival or multicast targets this CTA after it exits.
///
/// ```ignore
/// TmaProducer { input, work, rows }.run(|t| {
///     let map_a = if t.a_rows == BM { tma_a } else { tma_a_tail };
///     (t.a_rows * BK * 2 + B_BYTES, move |tiles, bar, kb| unsafe {
///         if t.a_rows != 0 { load_2d(map_a, smem_field!(tiles, Stage, a), bar, (kb * BK) as i32, (t.tm * BM) as i32) }
///         load_b_tile::<u16, BN, HALF, 64, CLUSTER_M>(tma_b, smem_field!(tiles, Stage, b), bar, (kb * BK) as i32, t.tn * BN, rank);
///     })
/// });
/// ```
pub struct TmaProducer<'a, P: TilePayload, const STAGES: usize, const CLUSTER_M: u32> {
    /// The main-loop pipeline (barriers initialized, cluster-synced).
    pub input: InputTilePipeline<'a, P, STAGES>,
    /// The schedule every role walks.
    pub work: ClusterWork<CLUSTER_M>,
    /// The tile rows of A (tail rows, rows past M).
    pub rows: TileRows,
}

impl<'a, P: TilePayload, const STAGES: usize, const CLUSTER_M: u32>
    TmaProducer<'a, P, STAGES, CLUSTER_M>
{
    /// Runs the role. `per_tile` is called once per segment with its tile
    /// and returns the `full` byte count of a trimmed stage (used when
    /// `a_rows != bm`) and the stage loader, called per K block `kb` with
    /// the stage's tiles and `full` barrier; it must issue exactly the
    /// bytes announced.
    ///
    /// ```ignore
    /// producer.run(|t| (trimmed_bytes(t.a_rows), move |tiles, bar, kb| { /* TMA loads */ }));
    /// ```
    #[inline(always)]
    pub fn run<L: FnMut(SharedRef<'a, P::Stage>, BarrierRef<'a>, u32)>(
        self,
        per_tile: impl FnMut(ProducerTile) -> (u32, L),
    ) {
        self.run_with(
            #[inline(always)]
            |work, u| {
                let (tm, tn) = work.tile_of(u);
                (0, tm, tn)
            },
            per_tile,
        )
    }

    /// [`run`](Self::run) over a [`ClusterWork::batched`] schedule: each
    /// tile's [`ProducerTile::batch`] is its matrix of the batch.
    ///
    /// ```ignore
    /// producer.run_batched(|t| (trimmed_bytes(t.a_rows), move |tiles, bar, kb| { /* 3-D TMA loads at t.batch */ }));
    /// ```
    #[inline(always)]
    pub fn run_batched<L: FnMut(SharedRef<'a, P::Stage>, BarrierRef<'a>, u32)>(
        self,
        per_tile: impl FnMut(ProducerTile) -> (u32, L),
    ) {
        self.run_with(
            #[inline(always)]
            |work, u| work.batch_tile_of(u),
            per_tile,
        )
    }

    #[inline(always)]
    fn run_with<L: FnMut(SharedRef<'a, P::Stage>, BarrierRef<'a>, u32)>(
        self,
        tile_of: impl Fn(&ClusterWork<CLUSTER_M>, u32) -> (u32, u32, u32),
        mut per_tile: impl FnMut(ProducerTile) -> (u32, L),
    ) {
        trace::stamp(Event::ProducerStart, false);
        let mut producer = self.input.producer();
        for seg in self.work.segments() {
            let (batch, tm, tn) = tile_of(&self.work, seg.unit);
            let a_rows = self.rows.a_rows(tm);
            let (trimmed_bytes, mut load) = per_tile(ProducerTile {
                tm,
                tn,
                a_rows,
                batch,
            });
            for kb in seg.k_begin..seg.k_end {
                let stage = producer.acquire();
                if a_rows == self.rows.bm {
                    stage.arrive_expect_tx();
                } else {
                    stage.arrive_expect_tx_bytes(trimmed_bytes);
                }
                load(stage.tiles(), stage.barrier(), kb);
            }
        }
        trace::stamp(Event::LastLoadIssued, false);
        producer.drain();
        trace::stamp(Event::ProducerDone, false);
    }

    /// [`run`](Self::run) where every stage's `full` barrier expects the
    /// byte count `per_tile` returns, whole tile rows included (the
    /// swap-AB kernels load a B box of fewer rows than the payload's).
    ///
    /// ```ignore
    /// producer.run_exact_bytes(|t| (t.a_rows * a_row_bytes + b_bytes, move |tiles, bar, kb| { /* TMA loads */ }));
    /// ```
    #[inline(always)]
    pub fn run_exact_bytes<L: FnMut(SharedRef<'a, P::Stage>, BarrierRef<'a>, u32)>(
        self,
        mut per_tile: impl FnMut(ProducerTile) -> (u32, L),
    ) {
        trace::stamp(Event::ProducerStart, false);
        let mut producer = self.input.producer();
        for seg in self.work.segments() {
            let (tm, tn) = self.work.tile_of(seg.unit);
            let a_rows = self.rows.a_rows(tm);
            let (bytes, mut load) = per_tile(ProducerTile {
                tm,
                tn,
                a_rows,
                batch: 0,
            });
            for kb in seg.k_begin..seg.k_end {
                let stage = producer.acquire();
                stage.arrive_expect_tx_bytes(bytes);
                load(stage.tiles(), stage.barrier(), kb);
            }
        }
        trace::stamp(Event::LastLoadIssued, false);
        producer.drain();
        trace::stamp(Event::ProducerDone, false);
    }
}

/// The multicast mask of every CTA of a `CLUSTER_M`-CTA cluster (2: `0b11`).
///
/// ```ignore
/// assert_eq!(cluster_mask::<4>(), 0b1111);
/// ```
#[inline(always)]
pub const fn cluster_mask<const CLUSTER_M: u32>() -> u16 {
    ((1u32 << CLUSTER_M) - 1) as u16
}

/// TMA load of a stage's B tile (`BN` rows of N from row `n0`, `BK`
/// elements of K from `kc`): the whole tile, or in clusters of
/// `CLUSTER_M` (2 to 4) CTAs this CTA's part (`HALF = BN / CLUSTER_M`
/// rows, rank `rank`) multicast into every CTA's stage.
///
/// # Safety
/// As [`load_2d`] / [`load_2d_multicast`]: `map` describes B with box
/// {BK, BN / CLUSTER_M}; with clusters every CTA of the pair holds this
/// stage free and expects the whole tile's bytes on its own barrier.
///
/// ```ignore
/// unsafe { load_b_tile::<u16, 256, 128, 64, 2>(tma_b, smem_field!(tiles, Stage, b), bar, kc, tn * 256, rank) };
/// ```
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
    const { assert!(CLUSTER_M == 1 || (CLUSTER_M <= 4 && CLUSTER_M as usize * HALF == BN)) };
    if CLUSTER_M == 1 {
        // SAFETY: forwarded to the caller.
        unsafe { load_2d(map, b_tile, bar, kc, n0 as i32) };
    } else {
        // SAFETY: rank < CLUSTER_M and CLUSTER_M·HALF = BN: the part lies
        // inside the tile.
        let half: SharedRef<'_, Tile<T, HALF, BK>> = unsafe {
            SharedRef::from_addr(
                b_tile.addr() + rank * (HALF * BK * core::mem::size_of::<T>()) as u32,
            )
        };
        // SAFETY: forwarded to the caller.
        unsafe {
            load_2d_multicast(
                map,
                half,
                bar,
                kc,
                (n0 + rank * HALF as u32) as i32,
                cluster_mask::<CLUSTER_M>(),
            )
        };
    }
}

/// [`load_b_tile`] at matrix `batch` of a rank-3 map (dims {K, N, batch}).
///
/// # Safety
/// As [`load_b_tile`], with a rank-3 map of box {BK, BN / CLUSTER_M, 1}.
///
/// ```ignore
/// unsafe { load_b_tile_3d::<u16, 256, 128, 64, 2>(tma_b, smem_field!(tiles, Stage, b), bar, kc, tn * 256, rank, batch) };
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn load_b_tile_3d<
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
    batch: i32,
) {
    const { assert!(CLUSTER_M == 1 || (CLUSTER_M <= 4 && CLUSTER_M as usize * HALF == BN)) };
    if CLUSTER_M == 1 {
        // SAFETY: forwarded to the caller.
        unsafe { load_3d(map, b_tile, bar, kc, n0 as i32, batch) };
    } else {
        // SAFETY: rank < CLUSTER_M and CLUSTER_M·HALF = BN: the part lies
        // inside the tile.
        let half: SharedRef<'_, Tile<T, HALF, BK>> = unsafe {
            SharedRef::from_addr(
                b_tile.addr() + rank * (HALF * BK * core::mem::size_of::<T>()) as u32,
            )
        };
        // SAFETY: forwarded to the caller.
        unsafe {
            load_3d_multicast(
                map,
                half,
                bar,
                kc,
                (n0 + rank * HALF as u32) as i32,
                batch,
                cluster_mask::<CLUSTER_M>(),
            )
        };
    }
}
