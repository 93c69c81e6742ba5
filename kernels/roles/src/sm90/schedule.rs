//! The tile scheduler every role of a Hopper GEMM CTA walks: grouped
//! rasterization of the tile grid, the persistent cluster schedule with its
//! stream-K share ([`ClusterWork`]), and which rows of A a tile row loads
//! ([`TileRows`]).

//!
//! [`tile_coords`], [`TileRows`] and [`a_rows_loaded`] are plain arithmetic
//! and compile (and are tested) on the host too; [`ClusterWork`] reads the
//! grid and cluster registers and is nvptx-only.

#[cfg(target_arch = "nvptx64")]
use baton::arch::ptx::{block_idx_x, cluster_cta_rank, grid_dim_x};
#[cfg(target_arch = "nvptx64")]
use baton::protocol::tile_scheduler::{Segments, StreamKSchedule};

/// Tile `t` of the grouped rasterization → (tile row, tile column): runs of
/// `group_m` tile rows (≥ 1) are walked column by column, so the CTAs in
/// flight share A rows and B columns in L2.
///
/// ```
/// use baton_kernel_roles::sm90::schedule::tile_coords;
/// // 3 × 4 tiles in groups of 2 rows: (0,0) (1,0) (0,1) (1,1) … then (2,0) (2,1) …
/// assert_eq!(tile_coords(1, 3, 4, 2), (1, 0));
/// assert_eq!(tile_coords(8, 3, 4, 2), (2, 0));
/// ```
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

/// The persistent schedule every role of a Hopper GEMM CTA walks: work
/// units are `CLUSTER_M` vertically adjacent tiles sharing one B tile, a
/// worker is a cluster (CTA `rank` of it takes tile row
/// `unit_row · CLUSTER_M + rank`; a row past M is computed on stale stage
/// data and clipped by the store), units go in grouped order (`group_m`
/// unit rows walked column by column), data-parallel first, then — with
/// stream-K — this worker's share of the K iterations of the rest.
///
/// Protocol contract: the producer, the C-load warp and both consumer
/// warpgroups of a CTA build the same `ClusterWork` and walk
/// [`segments`](Self::segments) in the same order; the pipelines between
/// them carry no tile coordinates, so a role that skipped or reordered a
/// segment would pair stages of different tiles.
///
/// ```ignore
/// let work = ClusterWork::<2>::new(m.div_ceil(128), n.div_ceil(256), k.div_ceil(64), group_m, [0; 4]);
/// for seg in work.segments() {
///     let (tm, tn) = work.tile_of(seg.unit);
///     for kb in seg.k_begin..seg.k_end { /* one stage */ }
/// }
/// ```
#[cfg(target_arch = "nvptx64")]
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
    /// Unit rows per matrix of a batch ([`batched`](Self::batched));
    /// `units_m` for one matrix.
    batch_units_m: u32,
}

#[cfg(target_arch = "nvptx64")]
impl<const CLUSTER_M: u32> ClusterWork<CLUSTER_M> {
    /// The schedule of a `tiles_m × tiles_n` tile grid with `k_blocks` K
    /// blocks per tile on this launch's grid; stream-K per `schedule`, the
    /// host's `StreamKSchedule::launch_words` for these units, K blocks and
    /// workers (`[0; 4]`: off). Nothing here divides by a launch value
    /// (`CLUSTER_M` is a constant): the schedule's divisions, 64-bit ones
    /// among them, cost ~800 cycles of setup when every CTA made them.
    ///
    /// ```ignore
    /// let work = ClusterWork::<1>::new(tiles_m, tiles_n, k_blocks, 8, sk_schedule);
    /// ```
    #[inline(always)]
    pub fn new(
        tiles_m: u32,
        tiles_n: u32,
        k_blocks: u32,
        group_m: u32,
        schedule: [u32; 4],
    ) -> Self {
        let units_m = tiles_m.div_ceil(CLUSTER_M);
        let workers = grid_dim_x() / CLUSTER_M;
        Self {
            sched: StreamKSchedule::from_launch_words(
                units_m * tiles_n,
                k_blocks,
                workers,
                schedule,
            ),
            worker: block_idx_x() / CLUSTER_M,
            rank: if CLUSTER_M > 1 { cluster_cta_rank() } else { 0 },
            units_m,
            tiles_n,
            group_m,
            batch_units_m: units_m,
        }
    }

    /// The schedule of `batch` matrices of `tiles_m × tiles_n` tiles in
    /// one launch (strided batched GEMM): the batch's unit rows stacked,
    /// `batch · ⌈tiles_m / CLUSTER_M⌉` rows of units walked as one grid
    /// (grouped rasterization and stream-K over all of them; a cluster
    /// never straddles two matrices). Decode units with
    /// [`batch_tile_of`](Self::batch_tile_of).
    ///
    /// ```ignore
    /// let work = ClusterWork::<1>::batched(batch, tiles_m, tiles_n, k_blocks, 8, [0; 4]);
    /// ```
    #[inline(always)]
    pub fn batched(
        batch: u32,
        tiles_m: u32,
        tiles_n: u32,
        k_blocks: u32,
        group_m: u32,
        stream_k: [u32; 4],
    ) -> Self {
        let per_batch = tiles_m.div_ceil(CLUSTER_M);
        let mut work = Self::new(
            batch * per_batch * CLUSTER_M,
            tiles_n,
            k_blocks,
            group_m,
            stream_k,
        );
        work.batch_units_m = per_batch;
        work
    }

    /// Unit `u` of a [`batched`](Self::batched) schedule → this CTA's
    /// (matrix of the batch, tile row in it, tile column).
    ///
    /// ```ignore
    /// let (b, tm, tn) = work.batch_tile_of(seg.unit);
    /// ```
    #[inline(always)]
    pub fn batch_tile_of(&self, u: u32) -> (u32, u32, u32) {
        let (um, tn) = tile_coords(u, self.units_m, self.tiles_n, self.group_m);
        let b = um / self.batch_units_m;
        let um = um - b * self.batch_units_m;
        (b, um * CLUSTER_M + self.rank, tn)
    }

    /// This worker's segments, in order.
    ///
    /// ```ignore
    /// for seg in work.segments() { let k_blocks = seg.len(); }
    /// ```
    #[inline(always)]
    pub fn segments(&self) -> Segments {
        self.sched.segments(self.worker)
    }

    /// Unit `u` → this CTA's (tile row, tile column).
    ///
    /// ```ignore
    /// let (tm, tn) = work.tile_of(seg.unit);
    /// ```
    #[inline(always)]
    pub fn tile_of(&self, u: u32) -> (u32, u32) {
        let (um, tn) = tile_coords(u, self.units_m, self.tiles_n, self.group_m);
        (um * CLUSTER_M + self.rank, tn)
    }
}

/// The tile rows of A: `tiles_m` rows of `bm`, the last one ragged by
/// `tail_rows = M mod bm` (0: none).
///
/// ```
/// use baton_kernel_roles::sm90::schedule::TileRows;
/// let m: u32 = 300; // 3 tile rows of 128, the last with 44 rows
/// let rows = TileRows { tiles_m: m.div_ceil(128), tail_rows: m % 128, bm: 128 };
/// assert_eq!(rows.a_rows(2), 44);
/// assert_eq!(rows.a_rows(rows.tiles_m), 0); // a cluster's row past M
/// ```
#[derive(Clone, Copy)]
pub struct TileRows {
    /// Tile rows covering M.
    pub tiles_m: u32,
    /// `M mod bm`.
    pub tail_rows: u32,
    /// Rows of a tile.
    pub bm: u32,
}

impl TileRows {
    /// Rows of A that tile row `tm` loads: [`a_rows_loaded`].
    ///
    /// ```
    /// use baton_kernel_roles::sm90::schedule::TileRows;
    /// let rows = TileRows { tiles_m: 3, tail_rows: 5, bm: 128 };
    /// assert_eq!((rows.a_rows(1), rows.a_rows(2), rows.a_rows(3)), (128, 5, 0));
    /// ```
    #[inline(always)]
    pub fn a_rows(&self, tm: u32) -> u32 {
        a_rows_loaded(tm, self.tiles_m, self.tail_rows, self.bm)
    }
}

/// Rows of A that tile row `tm` loads: all `bm`, the ragged last row's
/// `tail_rows` (`M mod bm`, through a map whose box has just those rows), or
/// none for a cluster's row past M. TMA's zero fill of a box's rows past M
/// costs as much as loading them (at M = 8 a whole GEMM took 1.5× as long),
/// so they are not requested: the rows left unloaded keep stale stage data
/// and only feed D rows ≥ M, which the stores clip (rows of a product are
/// independent).
///
/// ```
/// use baton_kernel_roles::sm90::schedule::a_rows_loaded;
/// assert_eq!(a_rows_loaded(0, 2, 8, 128), 128);
/// assert_eq!(a_rows_loaded(1, 2, 8, 128), 8);
/// assert_eq!(a_rows_loaded(2, 2, 8, 128), 0);
/// ```
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
