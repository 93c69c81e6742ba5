//! Persistent tile schedules: which output tiles (and which K range of
//! them) each worker of a persistent grid computes.
//!
//! A *unit* is what one worker computes at a time: one CTA tile, or the
//! `CLUSTER` vertically adjacent tiles of a cluster that share a B tile by
//! multicast. A *worker* is one CTA (or one cluster) of a persistent grid
//! that loops over units. Every role of a warp-specialized kernel (TMA
//! producer, MMA, epilogue) walks the same schedule, so they agree on the
//! order of stages without talking to each other.
//!
//! * [`GroupedRaster`]: unit index → (unit row, unit column), walking
//!   `group_m` rows column by column so units in flight share A rows and B
//!   columns in L2.
//! * [`StreamKSchedule`]: data-parallel units first, then a *stream-K* region
//!   whose K iterations are split evenly across all workers, so a grid whose
//!   units are not a multiple of its workers does not leave most of them
//!   idle in the last wave. A unit split between workers is finished by the
//!   worker that computed its first K block (its *finalizer*), after adding
//!   the partial accumulators the other workers (its *contributors*)
//!   published (see [`StreamKSchedule::contributors`] for the fixup
//!   protocol).
//!
//! Pure integer code on every target; the host tests below check that every
//! (unit, K block) is computed exactly once.
//!
//! ```
//! use baton::protocol::tile_scheduler::{StreamKSchedule, Segment};
//! // 10 units of 8 K blocks on 4 workers = 2.5 waves: one data-parallel
//! // wave (units 0..4), then 6 units = 48 K blocks split 4 ways (12 each).
//! let s = StreamKSchedule::new(10, 8, 4, 1);
//! assert_eq!(s.dp_units(), 4);
//! let segs: Vec<Segment> = s.segments(0).collect();
//! // Unit 0 whole, unit 4 whole, then K blocks 0..4 of unit 5.
//! assert_eq!(segs.len(), 3);
//! assert_eq!((segs[2].unit, segs[2].k_begin, segs[2].k_end), (5, 0, 4));
//! assert!(segs[2].is_finalizer() && !segs[2].is_whole());
//! // Worker 1 adds K blocks 4..8 of unit 5 first: worker 0 adds its partial.
//! assert_eq!(s.segments(1).nth(1).map(|g| (g.unit, g.k_begin)), Some((5, 4)));
//! assert_eq!(s.contributors(5), (1, 1));
//! ```

/// Grouped (L2-friendly) rasterization of a `units_m × units_n` grid of
/// units.
///
/// ```
/// use baton::protocol::tile_scheduler::GroupedRaster;
/// let r = GroupedRaster::new(3, 2, 2);
/// // Rows 0-1 walked column by column, then row 2.
/// let order: Vec<_> = (0..6).map(|u| r.coords(u)).collect();
/// assert_eq!(order, [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupedRaster {
    units_m: u32,
    units_n: u32,
    group_m: u32,
}

impl GroupedRaster {
    /// A raster over `units_m × units_n` units, `group_m ≥ 1` rows per group
    /// (0 is treated as 1).
    #[inline(always)]
    pub const fn new(units_m: u32, units_n: u32, group_m: u32) -> Self {
        Self {
            units_m,
            units_n,
            group_m: if group_m == 0 { 1 } else { group_m },
        }
    }

    /// Units in the raster.
    #[inline(always)]
    pub const fn units(&self) -> u32 {
        self.units_m * self.units_n
    }

    /// Unit `u` (< [`units`](Self::units)) → (unit row, unit column).
    #[inline(always)]
    pub const fn coords(&self, u: u32) -> (u32, u32) {
        let per_group = self.group_m * self.units_n;
        let group = u / per_group;
        let first_m = group * self.group_m;
        let rows_left = self.units_m - first_m;
        let group_rows = if rows_left < self.group_m {
            rows_left
        } else {
            self.group_m
        };
        let in_group = u % per_group;
        (first_m + in_group % group_rows, in_group / group_rows)
    }
}

/// One piece of work: K blocks `k_begin..k_end` of unit `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The unit (raster index, see [`GroupedRaster::coords`]).
    pub unit: u32,
    /// First K block.
    pub k_begin: u32,
    /// One past the last K block.
    pub k_end: u32,
    /// K blocks of a whole unit.
    pub k_blocks: u32,
}

impl Segment {
    /// The whole unit: no other worker touches it; write the output.
    #[inline(always)]
    pub const fn is_whole(&self) -> bool {
        self.k_begin == 0 && self.k_end == self.k_blocks
    }

    /// This segment starts the unit (K block 0): its worker finishes the
    /// unit — adds the contributors' partials, then writes the output.
    #[inline(always)]
    pub const fn is_finalizer(&self) -> bool {
        self.k_begin == 0
    }

    /// This segment does not start the unit: its worker publishes its
    /// partial accumulator for the finalizer and writes no output.
    #[inline(always)]
    pub const fn is_contributor(&self) -> bool {
        self.k_begin != 0
    }

    /// K blocks in the segment.
    #[inline(always)]
    pub const fn len(&self) -> u32 {
        self.k_end - self.k_begin
    }

    /// Whether the segment is empty (never, for segments a schedule yields).
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.k_end == self.k_begin
    }
}

/// Fewest split-K workers per unit for which the distributed fixup
/// ([`StreamKSchedule::distributed_workers`]) replaces the finalizer: every
/// worker then writes its partial and waits for the unit's slowest worker,
/// which pays only where a lone finalizer would read many partials.
/// Measured (H200, session 24 calls 4–5, base → distributed, µs): split 8
/// gained (256×1024×32768: 38.0 → 35.6; 128×1024×32768: 32.9 → 31.5);
/// split 4 gained 1 % at long K (512×1024×32768: 54.4 → 53.6) and lost 5 %
/// at short K (256×1024×4096: 12.9–13.1 → 13.6–13.9); split 2 lost 8 %
/// (128×4096×4096: 17.7 → 19.1).
pub const DISTRIBUTED_MIN_SPLITS: u32 = 8;

/// Data-parallel units, then a stream-K region split evenly by K block.
///
/// With `units` units of `k_blocks` K blocks each on `workers` workers:
///
/// * if `units` is a multiple of `workers`, or stream-K is off
///   (`min_segment == 0`), every unit is data-parallel: worker `w` takes
///   units `w, w + workers, …` whole;
/// * otherwise the last `units % workers` units, plus one full wave before
///   them when there is one (so each worker gets between one and two units
///   of stream-K work, which amortizes the fixup), form the stream-K
///   region: its `units × k_blocks` iterations are cut into `workers`
///   contiguous ranges of equal length (±1), in unit-major order. A range
///   shorter than `min_segment` K blocks would cost more in fixup than it
///   saves, so the region then uses fewer workers (each `≥ min_segment`).
/// * When the region's workers are a multiple `s ≥ 2` of its units (split-K:
///   `units · s` workers), each unit's K blocks are cut into `s` ranges of
///   equal length (±1) instead, so no range crosses a unit: the same
///   lengths, but no worker is a contributor of one unit and then the
///   finalizer of the next (the cut of the flat division whenever `s` does
///   not divide `k_blocks`). Such a worker ran two tile prologues, two
///   fixups and two epilogues and ended its launch ~2.4 µs after the others
///   (an H200 trace of 1×1024×4096 split 5, session 19:
///   `docs/runs/2026-11-28-s19/call2/percta.csv`).
///
/// Data-parallel units come first, so every worker has the same number of
/// them and all reach the stream-K region together.
///
/// ```
/// use baton::protocol::tile_scheduler::StreamKSchedule;
/// // 8192³ BF16, 128×256 tiles in 2-CTA clusters: 1024 units of 128 K
/// // blocks on 66 clusters = 15.5 waves. 14 waves are data-parallel; the
/// // other 100 units are split into 66 ranges of ~194 K blocks.
/// let s = StreamKSchedule::new(1024, 128, 66, 8);
/// assert_eq!(s.dp_units(), 14 * 66);
/// assert_eq!(s.sk_workers(), 66);
/// let longest = (0..66).map(|w| s.segments(w).map(|g| g.len()).sum::<u32>()).max();
/// assert_eq!(longest, Some(14 * 128 + 194));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamKSchedule {
    units: u32,
    k_blocks: u32,
    workers: u32,
    dp_units: u32,
    sk_workers: u32,
    /// Iterations of the stream-K region per worker (the first `extra`
    /// workers take one more); with `splits > 0`, per worker of a unit
    /// (its first `extra` take one more).
    sk_base: u32,
    /// `extra | splits << 16`: `splits` the workers per unit when the
    /// stream-K region is cut unit by unit (its workers a multiple ≥ 2 of
    /// its units), 0 for one flat division; `extra < 2^16` (fewer than
    /// the workers). One word, not two: the schedule lives in registers
    /// through every role's loop (a second word made the FP8 128×256
    /// kernel spill).
    sk_extra_splits: u32,
}

impl StreamKSchedule {
    /// The schedule of `units` units of `k_blocks ≥ 1` K blocks on
    /// `workers ≥ 1` workers; stream-K ranges at least `min_segment` K
    /// blocks long (0: no stream-K, all data-parallel).
    pub const fn new(units: u32, k_blocks: u32, workers: u32, min_segment: u32) -> Self {
        Self::with_extra_waves(units, k_blocks, workers, min_segment, 1)
    }

    /// [`new`](Self::new) with `extra_waves` full waves (as many as there
    /// are, at most) added to the stream-K region before the partial one:
    /// 1 in `new`; 0 keeps the region to the last, partial wave — fewer
    /// units whose K ranges are staggered across workers (staggered ranges
    /// stop sharing A/B slices in L2; measured in BENCHMARKS.md).
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// // 8192³ BF16 on 66 clusters: only the 34 units of the last wave are
    /// // split, 34 · 128 K blocks over 66 workers (66 each, ±1).
    /// let s = StreamKSchedule::with_extra_waves(1024, 128, 66, 8, 0);
    /// assert_eq!(s.dp_units(), 15 * 66);
    /// assert_eq!(s.sk_range(0), (0, 66));
    /// ```
    pub const fn with_extra_waves(
        units: u32,
        k_blocks: u32,
        workers: u32,
        min_segment: u32,
        extra_waves: u32,
    ) -> Self {
        let workers = if workers == 0 { 1 } else { workers };
        let k_blocks = if k_blocks == 0 { 1 } else { k_blocks };
        let rem = units % workers;
        let (dp_units, sk_workers, sk_base, sk_extra, sk_splits) = if rem == 0 || min_segment == 0 {
            (units, 0, 0, 0, 0)
        } else {
            let full_waves = units / workers;
            let waves = if extra_waves < full_waves {
                extra_waves
            } else {
                full_waves
            };
            let sk_units = rem + waves * workers;
            let iters = sk_units as u64 * k_blocks as u64;
            let by_len = iters / min_segment as u64;
            let mut w = workers as u64;
            if by_len < w {
                w = by_len;
            }
            // At most 2^16 − 1 stream-K workers (`sk_extra_splits` packs
            // counts below it); the rest of a larger grid takes none.
            if w > 0xFFFF {
                w = 0xFFFF;
            }
            if w <= 1 {
                // Too short to split: the units stay whole.
                (units, 0, 0, 0, 0)
            } else if w.is_multiple_of(sk_units as u64) && w / sk_units as u64 >= 2 {
                // Unit by unit: `splits ≤ k_blocks` workers per unit (w ≤
                // iters), ranges of k_blocks / splits (±1) as flat ones.
                let splits = (w / sk_units as u64) as u32;
                (
                    units - sk_units,
                    w as u32,
                    k_blocks / splits,
                    k_blocks % splits,
                    splits,
                )
            } else {
                (
                    units - sk_units,
                    w as u32,
                    (iters / w) as u32,
                    (iters % w) as u32,
                    0,
                )
            }
        };
        Self {
            units,
            k_blocks,
            workers,
            dp_units,
            sk_workers,
            sk_base,
            sk_extra_splits: sk_extra | sk_splits << 16,
        }
    }

    /// The four words of this schedule that its inputs do not give at once
    /// (`[dp_units, sk_workers, sk_base, extra | splits << 16]`), for a
    /// host that computes the schedule once per launch and passes them as
    /// kernel arguments: [`from_launch_words`](Self::from_launch_words)
    /// rebuilds the schedule on the GPU without a division.
    /// [`with_extra_waves`](Self::with_extra_waves) divides (64-bit, too):
    /// computed in every CTA it cost ~800 cycles of setup per launch (an
    /// H200 trace of 1×256×1024 split 4, session 20).
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// let s = StreamKSchedule::with_extra_waves(8, 64, 40, 1, 0);
    /// assert_eq!(StreamKSchedule::from_launch_words(8, 64, 40, s.launch_words()), s);
    /// ```
    #[inline(always)]
    pub const fn launch_words(&self) -> [u32; 4] {
        [
            self.dp_units,
            self.sk_workers,
            self.sk_base,
            self.sk_extra_splits,
        ]
    }

    /// The schedule of `units` units of `k_blocks ≥ 1` K blocks on
    /// `workers ≥ 1` workers whose [`launch_words`](Self::launch_words) are
    /// `words`: equal to the schedule they came from when it was made for
    /// the same `units`, `k_blocks` and `workers`. Words with
    /// `sk_workers == 0` (`[0; 4]` among them) give every unit whole.
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// // No stream-K words: 10 units on 4 workers, all data-parallel.
    /// let s = StreamKSchedule::from_launch_words(10, 8, 4, [0; 4]);
    /// assert_eq!(s, StreamKSchedule::new(10, 8, 4, 0));
    /// assert_eq!(s.segments(1).map(|g| g.unit).collect::<Vec<_>>(), [1, 5, 9]);
    /// ```
    #[inline(always)]
    pub const fn from_launch_words(
        units: u32,
        k_blocks: u32,
        workers: u32,
        words: [u32; 4],
    ) -> Self {
        let [dp_units, sk_workers, sk_base, sk_extra_splits] = words;
        // No stream-K workers: every unit whole, whatever the other words.
        let off = sk_workers == 0;
        Self {
            units,
            k_blocks,
            workers,
            dp_units: if off { units } else { dp_units },
            sk_workers,
            sk_base: if off { 0 } else { sk_base },
            sk_extra_splits: if off { 0 } else { sk_extra_splits },
        }
    }

    /// Workers per stream-K unit when the region is cut unit by unit (its
    /// workers a multiple ≥ 2 of its units: split-K), else 0 (one flat
    /// division of the region, whose ranges may cross units).
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// // Split-K: 8 units of 64 K blocks on 40 workers (5 each), all split.
    /// let s = StreamKSchedule::with_extra_waves(8, 64, 40, 1, 0);
    /// assert_eq!(s.sk_splits(), 5);
    /// // Each unit's 64 K blocks as 13, 13, 13, 13, 12: no range crosses a unit.
    /// assert_eq!((s.sk_range(4), s.sk_range(5)), ((52, 64), (64, 77)));
    /// // The last partial wave of 8192³ on 66 clusters: flat.
    /// assert_eq!(StreamKSchedule::with_extra_waves(1024, 128, 66, 8, 0).sk_splits(), 0);
    /// ```
    #[inline(always)]
    pub const fn sk_splits(&self) -> u32 {
        self.sk_extra_splits >> 16
    }

    /// Stream-K workers (of the region, or of a unit when cut unit by unit)
    /// that take `sk_base + 1` iterations.
    #[inline(always)]
    const fn sk_extra(&self) -> u32 {
        self.sk_extra_splits & 0xFFFF
    }

    /// Units in total.
    #[inline(always)]
    pub const fn units(&self) -> u32 {
        self.units
    }

    /// K blocks per unit.
    #[inline(always)]
    pub const fn k_blocks(&self) -> u32 {
        self.k_blocks
    }

    /// Workers of the grid.
    #[inline(always)]
    pub const fn workers(&self) -> u32 {
        self.workers
    }

    /// Units computed whole, data-parallel (the first ones in raster order).
    #[inline(always)]
    pub const fn dp_units(&self) -> u32 {
        self.dp_units
    }

    /// Workers that share the stream-K region (0: none).
    #[inline(always)]
    pub const fn sk_workers(&self) -> u32 {
        self.sk_workers
    }

    /// Whether some unit is split between workers (a fixup workspace is
    /// needed).
    #[inline(always)]
    pub const fn has_stream_k(&self) -> bool {
        self.sk_workers > 0
    }

    /// Stream-K iteration range `[begin, end)` of worker `w` (empty for
    /// workers past [`sk_workers`](Self::sk_workers)), counted from the
    /// first K block of the first stream-K unit.
    #[inline(always)]
    pub const fn sk_range(&self, w: u32) -> (u32, u32) {
        if w >= self.sk_workers {
            return (0, 0);
        }
        // Unit by unit: worker `j` of unit `u` (flat: unit 0, j = w).
        let (splits, extra) = (self.sk_splits(), self.sk_extra());
        let (unit_start, j) = match w.checked_div(splits) {
            Some(unit) => (unit * self.k_blocks, w - unit * splits),
            None => (0, w),
        };
        let extra_before = if j < extra { j } else { extra };
        let begin = unit_start + j * self.sk_base + extra_before;
        let len = self.sk_base + if j < extra { 1 } else { 0 };
        (begin, begin + len)
    }

    /// The stream-K worker whose range holds stream-K iteration `i`.
    #[inline(always)]
    const fn sk_worker_of(&self, i: u32) -> u32 {
        // Flat division only ([`contributors`](Self::contributors) takes
        // the unit-by-unit case itself). The first `extra` workers have
        // `sk_base + 1` iterations.
        let extra = self.sk_extra();
        let long = self.sk_base + 1;
        let in_long = extra * long;
        if i < in_long {
            i / long
        } else {
            extra + (i - in_long) / self.sk_base
        }
    }

    /// The segments worker `w` computes, in order: its data-parallel units,
    /// then its stream-K range cut at unit boundaries (at most one
    /// contributor segment, first, and at most one finalizer segment that is
    /// not whole, last).
    #[inline(always)]
    pub const fn segments(&self, w: u32) -> Segments {
        let (sk_begin, sk_end) = self.sk_range(w);
        Segments {
            sched: *self,
            next_dp: w,
            sk_next: sk_begin,
            sk_end,
        }
    }

    /// The workers of split-K unit `unit` as `(first, splits)` — workers
    /// `first..first + splits`, each with exactly one segment, in this
    /// unit — when the stream-K region is cut unit by unit
    /// ([`sk_splits`](Self::sk_splits) ≥ 2) and `unit` is in it; `None` for
    /// a data-parallel unit or a flat stream-K division. Those split at
    /// least [`DISTRIBUTED_MIN_SPLITS`] ways take the distributed fixup
    /// ([`distributed_workers`](Self::distributed_workers);
    /// `baton::protocol::stream_k`, module docs): worker `first + p`
    /// reduces and stores its [`split_share`](super::stream_k::split_share)
    /// `p` of the tile.
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// // 8 units of 64 K blocks on 40 workers: 5 per unit.
    /// let s = StreamKSchedule::with_extra_waves(8, 64, 40, 1, 0);
    /// assert_eq!(s.split_workers(2), Some((10, 5)));
    /// // Flat stream-K: no split units.
    /// assert_eq!(StreamKSchedule::new(10, 8, 4, 1).split_workers(5), None);
    /// ```
    #[inline(always)]
    pub const fn split_workers(&self, unit: u32) -> Option<(u32, u32)> {
        let splits = self.sk_splits();
        if splits == 0 || unit < self.dp_units || !self.has_stream_k() {
            return None;
        }
        Some(((unit - self.dp_units) * splits, splits))
    }

    /// [`split_workers`](Self::split_workers) of a unit that takes the
    /// distributed fixup: split at least [`DISTRIBUTED_MIN_SPLITS`] ways
    /// (`None` otherwise: the unit's first worker finalizes it alone). Every
    /// role of a kernel decides by this one function, so they agree.
    ///
    /// ```
    /// use baton::protocol::tile_scheduler::StreamKSchedule;
    /// // 8 units of 64 K blocks on 64 workers: 8 per unit.
    /// assert_eq!(StreamKSchedule::with_extra_waves(8, 64, 64, 1, 0).distributed_workers(2), Some((16, 8)));
    /// // Split 5: the finalizer path.
    /// assert_eq!(StreamKSchedule::with_extra_waves(8, 64, 40, 1, 0).distributed_workers(2), None);
    /// ```
    #[inline(always)]
    pub const fn distributed_workers(&self, unit: u32) -> Option<(u32, u32)> {
        match self.split_workers(unit) {
            Some((first, splits)) if splits >= DISTRIBUTED_MIN_SPLITS => Some((first, splits)),
            _ => None,
        }
    }

    /// The workers whose partials the finalizer of stream-K unit `unit`
    /// adds, as the range `first..=last` of worker indices (empty, with
    /// `first > last`, when the finalizer computed the whole unit).
    ///
    /// Fixup protocol (each worker publishes at most one partial, so a
    /// workspace slot and a flag per worker suffice):
    ///
    /// * a **contributor** (its segment [`is_contributor`](Segment::is_contributor))
    ///   writes its partial accumulator to its slot `w`, then sets flag `w`
    ///   to the launch's epoch with release semantics;
    /// * the **finalizer** (its segment starts the unit), after its own
    ///   segment, waits with acquire semantics until flags `first..=last`
    ///   hold the epoch and adds slots `first, …, last` in that order
    ///   (deterministic), then writes the output.
    ///
    /// Contributors never wait for finalizers, and a persistent grid has all
    /// its workers resident, so the fixup cannot deadlock.
    pub const fn contributors(&self, unit: u32) -> (u32, u32) {
        if unit < self.dp_units || !self.has_stream_k() {
            return (1, 0);
        }
        let splits = self.sk_splits();
        if splits > 0 {
            // Unit by unit: the unit's `splits` workers in order.
            let finalizer = (unit - self.dp_units) * splits;
            return (finalizer + 1, finalizer + splits - 1);
        }
        let i0 = (unit - self.dp_units) * self.k_blocks;
        let finalizer = self.sk_worker_of(i0);
        let last = self.sk_worker_of(i0 + self.k_blocks - 1);
        (finalizer + 1, last)
    }
}

/// Iterator over one worker's [`Segment`]s ([`StreamKSchedule::segments`]).
#[derive(Clone, Debug)]
pub struct Segments {
    sched: StreamKSchedule,
    next_dp: u32,
    sk_next: u32,
    sk_end: u32,
}

impl Iterator for Segments {
    type Item = Segment;

    #[inline(always)]
    fn next(&mut self) -> Option<Segment> {
        let s = &self.sched;
        if self.next_dp < s.dp_units {
            let unit = self.next_dp;
            self.next_dp += s.workers;
            return Some(Segment {
                unit,
                k_begin: 0,
                k_end: s.k_blocks,
                k_blocks: s.k_blocks,
            });
        }
        if self.sk_next >= self.sk_end {
            return None;
        }
        let i = self.sk_next;
        let unit_in_sk = i / s.k_blocks;
        let k_begin = i % s.k_blocks;
        let room = s.k_blocks - k_begin;
        let left = self.sk_end - i;
        let len = if left < room { left } else { room };
        self.sk_next = i + len;
        Some(Segment {
            unit: s.dp_units + unit_in_sk,
            k_begin,
            k_end: k_begin + len,
            k_blocks: s.k_blocks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (unit, K block) exactly once; finalizers and contributors
    /// consistent with `contributors`.
    fn check(units: u32, k_blocks: u32, workers: u32, min_segment: u32) {
        for extra_waves in [0, 1, 2] {
            check_waves(units, k_blocks, workers, min_segment, extra_waves);
        }
    }

    fn check_waves(units: u32, k_blocks: u32, workers: u32, min_segment: u32, extra_waves: u32) {
        let s =
            StreamKSchedule::with_extra_waves(units, k_blocks, workers, min_segment, extra_waves);
        let mut seen = vec![0u8; (units * k_blocks) as usize];
        let mut finalizer_of = vec![u32::MAX; units as usize];
        let mut contributed_to = vec![Vec::new(); units as usize];
        let mut work = vec![0u32; workers as usize];
        for w in 0..workers {
            let segs: Vec<Segment> = s.segments(w).collect();
            let mut contributions = 0;
            for (j, g) in segs.iter().enumerate() {
                assert!(!g.is_empty() && g.k_end <= k_blocks, "{g:?}");
                if g.unit < s.dp_units() {
                    assert!(g.is_whole());
                }
                for kb in g.k_begin..g.k_end {
                    seen[(g.unit * k_blocks + kb) as usize] += 1;
                }
                work[w as usize] += g.len();
                if g.is_finalizer() {
                    assert_eq!(finalizer_of[g.unit as usize], u32::MAX);
                    finalizer_of[g.unit as usize] = w;
                    if !g.is_whole() {
                        assert_eq!(j, segs.len() - 1, "a split finalizer segment is last");
                    }
                } else {
                    contributions += 1;
                    assert_eq!(
                        j as u32,
                        s.dp_units() / workers,
                        "a contributor segment is the first of the stream-K range"
                    );
                    contributed_to[g.unit as usize].push(w);
                }
            }
            assert!(contributions <= 1, "worker {w}: {contributions} partials");
        }
        assert!(
            seen.iter().all(|&c| c == 1),
            "coverage {units} {k_blocks} {workers}"
        );
        for u in 0..units {
            let (first, last) = s.contributors(u);
            let expected: Vec<u32> = (first..=last).collect();
            assert_eq!(contributed_to[u as usize], expected, "unit {u}");
            assert!(expected.iter().all(|&c| c > finalizer_of[u as usize]));
            // Split units: each of the unit's workers has one segment of
            // it, its last, and no other split segment (the distributed
            // fixup's premise).
            if let Some((first, splits)) = s.split_workers(u) {
                assert!(splits >= 2 && first == finalizer_of[u as usize]);
                for w in first..first + splits {
                    let split: Vec<Segment> = s
                        .segments(w)
                        .filter(|g| s.split_workers(g.unit).is_some())
                        .collect();
                    assert_eq!(split.len(), 1, "worker {w}: {split:?}");
                    assert_eq!(split[0].unit, u);
                    assert_eq!(s.segments(w).last(), Some(split[0]));
                    assert!(!split[0].is_whole());
                }
            }
        }
        if s.has_stream_k() {
            // Balance: the busiest worker does at most one K block more
            // than the stream-K share plus its data-parallel units.
            let max = *work.iter().max().unwrap();
            let dp_waves = s.dp_units() / workers;
            assert!(max <= dp_waves * k_blocks + s.sk_range(0).1 - s.sk_range(0).0);
            for w in 0..s.sk_workers() {
                let (b, e) = s.sk_range(w);
                assert!(e - b >= min_segment, "segment {b}..{e} < {min_segment}");
            }
        }
    }

    #[test]
    fn every_k_block_once_small_grids() {
        for units in 0..40 {
            for k_blocks in [1, 2, 3, 7, 16] {
                for workers in 1..12 {
                    for min_segment in [0, 1, 2, 5] {
                        check(units, k_blocks, workers, min_segment);
                    }
                }
            }
        }
    }

    #[test]
    fn every_k_block_once_gemm_sizes() {
        // (units, k blocks, workers): BF16 8192³ / 4096³ on 66 clusters,
        // FP8 8192³ on 132 CTAs, 2048×7168×2048 with 128×224 clusters.
        for (u, k, w) in [
            (1024, 128, 66),
            (256, 64, 66),
            (4096, 64, 132),
            (256, 32, 66),
        ] {
            check(u, k, w, 8);
        }
    }

    #[test]
    fn split_k_ranges_stay_in_their_unit() {
        // Split-K grids (every unit on `splits` workers) for every count,
        // dividing or not: each worker one segment, a unit's segments
        // within one K block of each other, finalizer first.
        for units in 1..20 {
            for k_blocks in [1, 2, 3, 5, 13, 32, 33, 64] {
                for splits in 2..=9u32.min(k_blocks) {
                    let workers = units * splits;
                    let s = StreamKSchedule::with_extra_waves(units, k_blocks, workers, 1, 0);
                    assert_eq!(s.sk_splits(), splits, "{units} {k_blocks} {splits}");
                    check_waves(units, k_blocks, workers, 1, 0);
                    for u in 0..units {
                        let lens: Vec<u32> = (u * splits..(u + 1) * splits)
                            .map(|w| {
                                let segs: Vec<Segment> = s.segments(w).collect();
                                assert_eq!(segs.len(), 1, "worker {w}: {segs:?}");
                                assert_eq!(segs[0].unit, u);
                                segs[0].len()
                            })
                            .collect();
                        let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
                        assert!(hi - lo <= 1, "{lens:?}");
                        assert_eq!(s.contributors(u), (u * splits + 1, (u + 1) * splits - 1));
                        assert_eq!(s.split_workers(u), Some((u * splits, splits)));
                    }
                }
            }
        }
    }

    #[test]
    fn flat_division_crosses_units_where_split_k_does_not() {
        // 8 units of 64 K blocks on 40 workers: flat ranges of 13 would
        // give worker 4 K blocks 52..65 (the end of unit 0, the start of
        // unit 1); unit by unit it keeps 52..64.
        let s = StreamKSchedule::with_extra_waves(8, 64, 40, 1, 0);
        let segs: Vec<Segment> = s.segments(4).collect();
        assert_eq!(segs.len(), 1);
        assert_eq!((segs[0].unit, segs[0].k_begin, segs[0].k_end), (0, 52, 64));
        // A region of 6 units (2 left over + 1 full wave) on 4 workers
        // stays flat; its last 2 units alone on 4 workers go 2 per unit.
        assert_eq!(
            StreamKSchedule::with_extra_waves(10, 8, 4, 1, 1).sk_splits(),
            0
        );
        assert_eq!(
            StreamKSchedule::with_extra_waves(10, 8, 4, 1, 0).sk_splits(),
            2
        );
    }

    #[test]
    fn divisible_grids_stay_data_parallel() {
        let s = StreamKSchedule::new(264, 64, 132, 4);
        assert!(!s.has_stream_k());
        assert_eq!(s.segments(5).map(|g| g.unit).collect::<Vec<_>>(), [5, 137]);
        assert_eq!(s.contributors(7), (1, 0));
    }

    #[test]
    fn short_k_falls_back_to_whole_units() {
        // 3 units of 2 K blocks on 4 workers with segments ≥ 4: only one
        // worker's worth of iterations (6 / 4 = 1) — stays whole.
        let s = StreamKSchedule::new(3, 2, 4, 4);
        assert!(!s.has_stream_k());
        // With segments ≥ 3: 2 workers of 3 iterations.
        let s = StreamKSchedule::new(3, 2, 4, 3);
        assert_eq!(s.sk_workers(), 2);
    }

    /// Split-K as the runtime launches it (`set_split_k`): exactly `units ·
    /// splits` workers, segments ≥ 1 K block, no extra waves. Every unit is
    /// stream-K; with `splits` dividing the K blocks, worker `j` computes
    /// K blocks `(j mod splits) · K/splits ..` of unit `j / splits` alone, and
    /// unit `u`'s finalizer (worker `u · splits`) adds workers
    /// `u · splits + 1 ..= u · splits + splits − 1` in that order. Uneven
    /// splits still cover every K block once (`check_waves`).
    #[test]
    fn units_times_splits_workers_is_split_k() {
        for (units, k_blocks, splits) in [
            (16, 512, 8),
            (16, 256, 7),
            (64, 64, 2),
            (3, 10, 3),
            (5, 7, 2),
        ] {
            let workers = units * splits;
            check_waves(units, k_blocks, workers, 1, 0);
            let s = StreamKSchedule::with_extra_waves(units, k_blocks, workers, 1, 0);
            assert_eq!((s.dp_units(), s.sk_workers()), (0, workers));
            if k_blocks % splits != 0 {
                continue;
            }
            let per = k_blocks / splits;
            for j in 0..workers {
                let segs: Vec<Segment> = s.segments(j).collect();
                assert_eq!(segs.len(), 1, "worker {j}");
                let g = segs[0];
                assert_eq!(
                    (g.unit, g.k_begin, g.len()),
                    (j / splits, (j % splits) * per, per)
                );
            }
            for u in 0..units {
                assert_eq!(s.contributors(u), (u * splits + 1, u * splits + splits - 1));
            }
        }
    }

    /// The words a host passes rebuild the schedule exactly, on every grid
    /// the other tests walk (stream-K, split-K, data-parallel, too short).
    #[test]
    fn launch_words_rebuild_the_schedule() {
        for units in 0..40 {
            for k_blocks in [1, 2, 3, 7, 16, 64] {
                for workers in 1..20 {
                    for min_segment in [0, 1, 2, 5] {
                        for extra_waves in [0, 1, 2] {
                            let s = StreamKSchedule::with_extra_waves(
                                units,
                                k_blocks,
                                workers,
                                min_segment,
                                extra_waves,
                            );
                            let r = StreamKSchedule::from_launch_words(
                                units,
                                k_blocks,
                                workers,
                                s.launch_words(),
                            );
                            assert_eq!(r, s, "{units} {k_blocks} {workers} {min_segment}");
                        }
                    }
                }
            }
            for splits in (2..=8).filter(|_| units > 0) {
                let s = StreamKSchedule::with_extra_waves(units, 64, units * splits, 1, 0);
                let r =
                    StreamKSchedule::from_launch_words(units, 64, units * splits, s.launch_words());
                assert_eq!(r, s);
            }
        }
        assert_eq!(
            StreamKSchedule::from_launch_words(264, 64, 132, [0; 4]),
            StreamKSchedule::new(264, 64, 132, 0)
        );
    }

    #[test]
    fn raster_is_a_bijection() {
        for (m, n, g) in [(5, 7, 2), (8, 8, 8), (3, 1, 4), (1, 9, 1), (17, 5, 8)] {
            let r = GroupedRaster::new(m, n, g);
            let mut seen = vec![false; (m * n) as usize];
            for u in 0..r.units() {
                let (i, j) = r.coords(u);
                assert!(i < m && j < n);
                assert!(!std::mem::replace(&mut seen[(i * n + j) as usize], true));
            }
        }
    }
}
