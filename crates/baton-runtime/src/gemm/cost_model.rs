//! The GEMM tile-configuration cost model: an estimate of a persistent,
//! warp-specialized GEMM's time on a Hopper GPU for one tile shape, from
//! four explicit terms. The BF16 heuristic
//! ([`GemmConfig::choose`](super::GemmConfig::choose)) and the FP8 one
//! ([`fp8::choose`](super::fp8::choose)) pick the configuration with the
//! least [`TileCost::estimate_us`].
//!
//! * **Waves.** Work units (clusters of `cluster_m` tiles stacked along M)
//!   run `slots` at a time; a partial last wave costs a full one
//!   ([`TileCost::wave_efficiency`]).
//! * **Tile efficiency.** Tiles past the edge of M or N compute padding
//!   ([`TileCost::tile_efficiency`]); a cluster's tile past M still holds
//!   its SM for the wave.
//! * **K length.** Each tile runs `⌈K / BK⌉` K blocks (a ragged last block
//!   costs a whole one) plus a fixed per-tile cost (prologue, epilogue) of
//!   [`TILE_OVERHEAD_K_BLOCKS`] K blocks, so short K pays relatively more.
//! * **L2 reuse.** The units of one wave run together and walk K in step,
//!   so the A rows and B columns a wave touches come from DRAM once per
//!   wave: with the grouped raster (`group_m` unit rows walked column by
//!   column) a wave of `u` units spans `min(group_m, u)` unit rows and
//!   `⌈u / rows⌉` unit columns. The DRAM time of all waves (plus D) is a
//!   floor under the math time ([`TileCost::estimate_us`] is the larger).
//!   Fewer busy SMs pull less bandwidth ([`dram_share`]); where two
//!   configurations are equally DRAM-bound the one with less math wins.
//! * **L2 → SM operand traffic.** Every tile's TMA loads bring its A rows
//!   and B columns (B halved per CTA in a multicast cluster) over all of K
//!   from L2 into shared memory; their total over the problem, at the
//!   measured L2 rate ([`Machine::l2_bytes_per_s`]; lower when a row of A
//!   or B is not a multiple of 32 bytes, so a TMA box row straddles
//!   sectors, and for tiles without multicast when a row of A, B or D
//!   straddles 128-byte lines: [`l2_rate`]), is a second floor (session
//!   8: 128×128 tiles, which move twice the bytes per FLOP of 128×256
//!   pairs, were bound by it). Split-K plans' loads past their rings'
//!   first fill run at the lower split-K rate
//!   ([`Machine::l2_split_k_bytes_per_s`], measured session 15).
//! * **Measured speed.** Each tile shape's measured throughput per SM
//!   relative to the family's reference tile ([`TileShape::speed`], from
//!   BENCHMARKS.md) scales its math time.
//! * **Split-K** ([`TileShape::cost_split`]): with fewer units than slots,
//!   each unit's K blocks can be cut into `splits` contiguous ranges on
//!   `splits` workers (the kernels' stream-K schedule launched on
//!   `units · splits` workers). Each worker runs `⌈K blocks / splits⌉` K
//!   blocks plus the per-tile cost, more CTAs pull DRAM at once, and the
//!   fixup ([`Finalizer`]) adds hand-overs ([`FIXUP_LATENCY_US`] in turn,
//!   or [`overlapped_fixup_batched_us`]) and, but for swap-AB's small
//!   partials, `splits` transfers of a fp32 tile (one contributor's write,
//!   then the finalizer's `splits − 1` reads) at
//!   [`Machine::fixup_bytes_per_s`]. [`TileShape::cost_best_split`] picks
//!   the split count.
//!
//! The rates are an H100's ([`Machine::H100_BF16`], [`Machine::H100_FP8`]);
//! the slot count is the device's, and so is the DRAM bandwidth where the
//! plan knows the device ([`Machine::with_dram_bytes_per_s`],
//! [`copy_bytes_per_s`]: an H200 moves 4.17 TB/s where the H100 moves 2.9).
//!
//! ```
//! use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
//! let tile = TileShape { bm: 128, bn: 128, bk: 64, cluster_m: 1, speed: 1.0 };
//! let c = tile.cost(&Problem::bf16(4096, 4096, 4096), &Machine::H100_BF16, 132);
//! assert_eq!((c.units, c.waves), (1024, 8));
//! assert!(c.estimate_us() > 0.0);
//! ```

/// Per-tile fixed cost (pipeline fill at the first tile, epilogue, unit
/// hand-over) in K blocks of the tile: the cooperative epilogue is not
/// hidden behind the main loop (BENCHMARKS.md, session 4: about 4% of a
/// 2048-K tile, i.e. 1–2 K blocks of 64).
pub const TILE_OVERHEAD_K_BLOCKS: f64 = 1.5;

/// Per-tile fixed cost of a ping-pong configuration, in K blocks: its
/// epilogue runs under the other consumer warpgroup's main loop, so what
/// remains is the hand-over of the tensor cores and the pipeline fill at
/// the first tile (predicted, session 8; BENCHMARKS.md "Session 8 —
/// ping-pong" compares it with the measurement).
pub const PINGPONG_TILE_OVERHEAD_K_BLOCKS: f64 = 0.5;

/// The share of the DRAM bandwidth a kernel reaches with `busy` of the
/// GPU's SMs loading: 0.8 with half of them, 1.0 with all (linear between;
/// the TMA tile copy reached 0.785 of a device-to-device copy with 66 CTAs
/// on 132 SMs and 0.98 with 132: BENCHMARKS.md, issue #5).
///
/// ```
/// use baton_runtime::gemm::cost_model::dram_share;
/// assert_eq!((dram_share(1.0), dram_share(0.5), dram_share(0.0)), (1.0, 0.8, 0.6));
/// ```
pub fn dram_share(busy: f64) -> f64 {
    1.0 - 0.4 * (1.0 - busy.clamp(0.0, 1.0))
}

/// The L2 → SM operand rate the tiles of a `cluster_m`-CTA unit reach on
/// `p` ([`Machine::l2_bytes_per_s`] and its two slower cases) for the
/// slower of its two operands ([`l2_row_rate`] of A's and of B's row
/// stride).
///
/// ```
/// use baton_runtime::gemm::cost_model::{Machine, Problem, l2_rate};
/// let m = Machine::H100_BF16;
/// assert_eq!(l2_rate(&Problem::bf16(4096, 4096, 4096), &m, 1), m.l2_bytes_per_s);
/// // K = 2056: rows of 4112 bytes, 16-byte aligned only.
/// assert_eq!(l2_rate(&Problem::bf16(4096, 4104, 2056), &m, 2), m.l2_unaligned_bytes_per_s);
/// // N = 5000: D rows of 10000 bytes.
/// assert_eq!(l2_rate(&Problem::bf16(2048, 5000, 4096), &m, 1), m.l2_line_split_bytes_per_s);
/// assert_eq!(l2_rate(&Problem::bf16(2048, 5000, 4096), &m, 2), m.l2_bytes_per_s);
/// ```
pub fn l2_rate(p: &Problem, machine: &Machine, cluster_m: usize) -> f64 {
    let out_row_bytes = p.n as f64 * p.output_bytes;
    let rate = |row_bytes| l2_row_rate(row_bytes, out_row_bytes, machine, cluster_m);
    rate(p.a_row_bytes).min(rate(p.b_row_bytes))
}

/// The L2 → SM rate of one operand whose rows start `row_bytes` apart, on
/// tiles of a `cluster_m`-CTA unit storing D rows of `out_row_bytes`:
/// rows not a multiple of 32 bytes are slow for every tile
/// ([`Machine::l2_unaligned_bytes_per_s`]: a 128-byte box row straddles
/// sectors and lines); rows 32-byte aligned but not 128-byte multiples, or
/// D rows not 128-byte multiples, only for tiles without B multicast
/// (`cluster_m == 1`, [`Machine::l2_line_split_bytes_per_s`]).
///
/// ```
/// use baton_runtime::gemm::cost_model::{Machine, l2_row_rate};
/// let m = Machine::H100_BF16;
/// assert_eq!(l2_row_rate(4112.0, 8192.0, &m, 2), m.l2_unaligned_bytes_per_s);
/// assert_eq!(l2_row_rate(4224.0, 8192.0, &m, 2), m.l2_bytes_per_s);
/// assert_eq!(l2_row_rate(4128.0, 8192.0, &m, 1), m.l2_line_split_bytes_per_s);
/// ```
pub fn l2_row_rate(row_bytes: f64, out_row_bytes: f64, machine: &Machine, cluster_m: usize) -> f64 {
    if row_bytes % 32.0 != 0.0 {
        machine.l2_unaligned_bytes_per_s
    } else if cluster_m <= 1 && (row_bytes % 128.0 != 0.0 || out_row_bytes % 128.0 != 0.0) {
        machine.l2_line_split_bytes_per_s
    } else {
        machine.l2_bytes_per_s
    }
}

/// Estimates within this relative distance count as equal in [`cheapest`]
/// (then the one with less math time wins).
pub const EQUAL_WITHIN: f64 = 0.005;

/// Rows of work units the kernels' grouped raster walks together
/// (`DEFAULT_GROUP_M` of the plans).
pub const RASTER_GROUP_M: usize = 8;

/// Rates of the GPU a cost is estimated for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// Math throughput of one SM running the family's reference tile
    /// (speed 1.0), FLOP/s.
    pub flops_per_sm: f64,
    /// DRAM bandwidth (bytes read + written per second).
    pub dram_bytes_per_s: f64,
    /// Operand bytes per second the SMs' TMA loads reach from L2 in
    /// total, rows of A and B 128-byte aligned.
    pub l2_bytes_per_s: f64,
    /// The same when the operand rows are not a multiple of 32 bytes
    /// (16-byte aligned only: every other row starts mid-sector, for every
    /// tile shape).
    pub l2_unaligned_bytes_per_s: f64,
    /// The same for tiles that load all of their B columns themselves (no
    /// multicast, `cluster_m == 1`) when the operand rows are 32-byte
    /// aligned but not a multiple of 128 bytes, or the rows of D are not a
    /// multiple of 128 bytes: a row's box straddles two 128-byte lines.
    /// Multicast clusters (half the B bytes per tile) keep
    /// [`l2_bytes_per_s`](Self::l2_bytes_per_s) there.
    pub l2_line_split_bytes_per_s: f64,
    /// The DRAM bandwidth one CTA's TMA loads reach on their own (its
    /// input stages in flight over the memory latency): with few CTAs
    /// busy, the DRAM time is at least the bytes over `busy CTAs` times
    /// this.
    pub cta_dram_bytes_per_s: f64,
    /// The rate at which one CTA writes or reads a fp32 partial tile of the
    /// split-K / stream-K fixup (through L2), bytes per second.
    pub fixup_bytes_per_s: f64,
    /// Operand bytes per second the TMA loads of a split-K plan (each
    /// unit's K blocks on `splits > 1` workers, [`TileShape::cost_split`])
    /// reach from L2 in total once their rings are full: measured well
    /// below [`l2_bytes_per_s`](Self::l2_bytes_per_s) on the same tiles
    /// and CTA counts unsplit (see [`Machine::H100_BF16`]). The slower of
    /// this and [`l2_rate`] applies to split plans.
    pub l2_split_k_bytes_per_s: f64,
}

impl Machine {
    /// H100 SXM, BF16: 128×256 tiles at 8192³ ran ≈ 790 TFLOP/s on 132 SMs
    /// (6.0 TFLOP/s per SM); a device-to-device copy moved 2.9 TB/s
    /// (BENCHMARKS.md, issues #5 and #6). Fixup: 50 GB/s per CTA, fitted
    /// on session 8's sweep (a 3-way split of 128×256 tiles at
    /// 256×5000×4096 spent about 13 µs past its math on 3 · 128 KiB of
    /// partials; 8-way splits of 128×64 tiles at N = 1024, K = 32768 about
    /// 3–5 µs on 8 · 32 KiB).
    ///
    /// L2: 128×128 tiles (ping-pong and cooperative) on the session-8
    /// sweep moved up to 11.6 TB/s of operands (the rate taken), and 4.7–5.0
    /// TB/s at K = 2056 (rows of 4112 bytes) whatever the tile. Session 10
    /// (BENCHMARKS.md "Session 10 — mid"): ping-pong 128×128 moved 9.5 and
    /// 9.9 TB/s at 2048×5000×4096 and 1024×5000×4096 (D rows of 10000
    /// bytes; 9.5 taken), 8.1 at 4096×4104×2048 and 7.3 at K = 2064 (rows
    /// of 4128 bytes), where 128×256 pairs ran at their aligned speed.
    ///
    /// The unaligned rate refit on 2026-11-28 (session 16, H100, forced
    /// rows at K = 2056, `docs/runs/2026-11-28-s16/call3/ragged-rows.txt`):
    /// 4.8 → 4.55 TB/s. Without a copy, 256×128 pairs ran 79, 305 and 613
    /// µs at M = 2048, 8192 and 16384 where their L2 term at 4.8 gave 74,
    /// 297 and 595; 128×256 pairs 518 µs at 16384 against 490: 4.5–4.7
    /// TB/s, 4.55 taken. (What it decides: whether a plan re-packs an
    /// operand, [`plan_with_repack`](super::plan_with_repack).)
    ///
    /// One CTA streams at most 110 GB/s from DRAM (session 9, measured:
    /// a single swap-AB CTA read 1 MiB and 8 MiB of B at 109 and 112 GB/s
    /// past the 5.3 µs launch floor); it binds only below ~30 busy CTAs
    /// (small M, few tiles, unsplit).
    ///
    /// Split-K, refit on 2026-11-28 (session 15, H100 80GB HBM3, `baton
    /// bench gemm --shape S --config C --split-k N --reps 15`: 22 forced
    /// plans at N = 1024, K = 4096 and 32768, M = 128–1024, in
    /// `docs/runs/2026-11-28-s15/bf16-split-k-forced-rows.txt`; µs past the
    /// 5.3 µs launch floor):
    ///
    /// * [`l2_split_k_bytes_per_s`](Self::l2_split_k_bytes_per_s) 8.0
    ///   TB/s. On 128 CTAs at 256×1024×32768, 128×64 split 4 moved 403 MB
    ///   of loads in the 47 µs past its fixup (8.6 TB/s), 128×128 split 8
    ///   268 MB in 30 µs (8.9); 128×128 split 4 at 512×1024×32768 537 MB in
    ///   66 µs (8.1); less the rings' first fill (25 MB), 7.7–8.1 TB/s.
    ///   Unsplit, the same 128×64 tile moved 11.3–11.9 TB/s on 96 CTAs for
    ///   as many K blocks per CTA or more (session 11: 768×1024×8192,
    ///   384×2048×16384), and split 3 on 96 CTAs at 256×1024×24576 only
    ///   8.3 (session 11). What makes split loads slower is not located:
    ///   the workers of a unit stream `splits` disjoint K ranges of the
    ///   same rows at once, and in session 11's ncu of a 3-way split
    ///   neither DRAM (44 %) nor L2 (65 %) ran at its peak.
    /// * [`fixup_bytes_per_s`](Self::fixup_bytes_per_s) 70 GB/s, the
    ///   partials of the overlapped finalizer (the cooperative kernels'
    ///   since session 11: [`Finalizer::OverlappedPartials`]): what the
    ///   split rows ran past their loads or math, e.g. 128×256 split 8 (8 ×
    ///   128 KiB of partials) 55 µs on 46 µs of math at 128×1024×32768,
    ///   128×128 split 4 (4 × 64 KiB) 14.7 µs on 6.6 µs of math at
    ///   512×1024×4096. About what one SM's loads reached above (63–68
    ///   GB/s per CTA on 128 CTAs). Session 8's 50 GB/s was fitted with
    ///   the in-turn finalizer and a 3 µs hand-over.
    ///
    /// The two were fitted together on those 22 rows: rms log error 0.102
    /// (0.153 before), every pair of rows at one shape that measured ≥ 3
    /// µs apart in the measured order. 7.75 TB/s and 80–90 GB/s fit 8 %
    /// closer (0.094) but rank 128×128 split 4 ahead of 128×64 split 2 at
    /// 512×1024×4096 (measured 20 vs 17 µs) and move sweep plans
    /// (128×4104×2056) on estimate differences of 1–2 %.
    pub const H100_BF16: Machine = Machine {
        flops_per_sm: 6.0e12,
        dram_bytes_per_s: 2.9e12,
        fixup_bytes_per_s: 70.0e9,
        l2_bytes_per_s: 11.6e12,
        l2_unaligned_bytes_per_s: 4.55e12,
        l2_line_split_bytes_per_s: 9.5e12,
        cta_dram_bytes_per_s: 110.0e9,
        l2_split_k_bytes_per_s: 8.0e12,
    };
    /// H100 SXM, blockwise FP8: 128×128 tiles at 8192³ ran ≈ 1180 TFLOP/s
    /// on 132 SMs (9.0 TFLOP/s per SM); DRAM as [`Machine::H100_BF16`]. The
    /// L2 floor is not calibrated for FP8 (no floor: infinite rates; a
    /// split-K L2 rate was tried in the fit below and binds nowhere at 10.5
    /// TB/s or more, so it stays uncalibrated).
    ///
    /// Split-K fixup, refit on 2026-11-28 (session 16; until then BF16's
    /// 50 GB/s of session 8): [`fixup_bytes_per_s`](Self::fixup_bytes_per_s)
    /// **60 GB/s** with the in-turn finalizer the FP8 kernels run
    /// ([`Finalizer::InTurn`]: `stream_k_fixup!` adds one contributor's
    /// partial after the other; [`FIXUP_LATENCY_US`] per wave), fitted
    /// together with `fp8::SPEED_128X32` (0.46 → 0.52) on 33 rows (with
    /// even split counts only; the plan tries uneven ones too, see
    /// `fp8::plan`): the sweep's 11 split plans at N = 1024
    /// as the sweep timed them (queued, session 15 call 7; µs past the 5.3
    /// µs launch floor) and 22 forced rows timed L2-flushed (session 16
    /// call 1 at N = 1024, K = 32768; session 11's 128×32 rows at 64/128 ×
    /// 2112/4096 × 7168), whose absolute times carry a per-shape flush
    /// penalty at DRAM-bound shapes (e.g. 30.8 µs queued, 35.1 flushed) and
    /// were compared after one additive offset per shape. Rms log error
    /// **0.067** (0.099 before; the queued rows alone 0.066, 0.096 before),
    /// and every pair of flushed rows at one shape ≥ 2.5 % apart ordered as
    /// measured (before: 128×64 split 8 ahead of 128×32 split 4 at
    /// 32×1024×32768, measured 29.1 vs 27.0 µs). Searched: fixup 40–190
    /// GB/s, a fixed part 0–4 µs and a per-contributor part 0–1 µs per
    /// wave, partial bytes of the warpgroups inside M only, `SPEED_128X32`
    /// 0.44–0.55; with 0.46 kept no fixup orders all pairs, and the freer
    /// forms fit 0.054–0.062, too little gain on 33 rows for a new term.
    /// Checked on the queued forced rows of
    /// `docs/runs/2026-11-28-s16/fp8-split-calib.sh` (session 16 call 3, 43
    /// rows × 2 passes): at each of the 9 shapes the plan is the measured
    /// best row or within 1 % of it (8 and 32 × 1024 × 32768 move from
    /// 128×64 split 7 to 128×32 split 4: 0.91 → 1.00 and 0.87 → 0.97 of
    /// cuBLASLt in those rows).
    pub const H100_FP8: Machine = Machine {
        flops_per_sm: 9.0e12,
        dram_bytes_per_s: 2.9e12,
        fixup_bytes_per_s: 60.0e9,
        l2_bytes_per_s: f64::INFINITY,
        l2_unaligned_bytes_per_s: f64::INFINITY,
        l2_line_split_bytes_per_s: f64::INFINITY,
        cta_dram_bytes_per_s: f64::INFINITY,
        l2_split_k_bytes_per_s: f64::INFINITY,
    };

    /// This machine with another GPU's DRAM bandwidth (the rest of its
    /// rates kept): the H100 rates on an H200, whose SMs and clocks are
    /// the H100's but whose HBM3e moves half as much again.
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::Machine;
    /// let h200 = Machine::H100_BF16.with_dram_bytes_per_s(4.17e12);
    /// assert_eq!(h200.dram_bytes_per_s, 4.17e12);
    /// assert_eq!(h200.l2_bytes_per_s, Machine::H100_BF16.l2_bytes_per_s);
    /// ```
    pub const fn with_dram_bytes_per_s(self, dram_bytes_per_s: f64) -> Self {
        Self {
            dram_bytes_per_s,
            ..self
        }
    }
}

/// The share of a GPU's peak DRAM bandwidth (memory clock × bus width,
/// [`copy_bytes_per_s`]) a device-to-device copy reaches: 2.9 of 3.35 TB/s
/// on the H100 SXM (2619 MHz × 5120 bits, [`Machine::H100_BF16`]). On the
/// H200 of sessions 18–22 the driver's attributes give a 4.8 TB/s peak,
/// so 4.17 TB/s here, where the sweeps' copy measured 4.23–4.26 (1–2 %
/// more; `baton info` prints the rate a device gets).
pub const COPY_SHARE_OF_PEAK: f64 = 0.866;

/// The DRAM bandwidth the cost model takes for a GPU whose memory runs at
/// `memory_clock_khz` (the driver's `MEMORY_CLOCK_RATE`, per data edge
/// pair) over a `bus_width_bits` bus (`GLOBAL_MEMORY_BUS_WIDTH`): its
/// double-data-rate peak times [`COPY_SHARE_OF_PEAK`], bytes per second.
/// `None` when either attribute is 0 (not reported): the caller keeps the
/// H100's rate.
///
/// ```
/// use baton_runtime::gemm::cost_model::{Machine, copy_bytes_per_s};
/// // H100 SXM: the rate Machine::H100_BF16 was measured at, within 0.2 %.
/// let h100 = copy_bytes_per_s(2_619_000, 5120).unwrap();
/// assert!((h100 / Machine::H100_BF16.dram_bytes_per_s - 1.0).abs() < 2e-3);
/// // A 4.8 TB/s peak (3135 MHz × 6144 bits, an H200): 4.17 TB/s.
/// assert!((copy_bytes_per_s(3_135_000, 6144).unwrap() - 4.17e12).abs() < 0.01e12);
/// assert_eq!(copy_bytes_per_s(0, 6144), None);
/// ```
pub fn copy_bytes_per_s(memory_clock_khz: u32, bus_width_bits: u32) -> Option<f64> {
    if memory_clock_khz == 0 || bus_width_bits == 0 {
        return None;
    }
    let peak = 2.0 * memory_clock_khz as f64 * 1e3 * bus_width_bits as f64 / 8.0;
    Some(peak * COPY_SHARE_OF_PEAK)
}

/// The problem a cost is estimated for: `D (M×N) = A (M×K) · B (N×K)ᵀ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// Rows of A and D.
    pub m: usize,
    /// Rows of B, columns of D.
    pub n: usize,
    /// The reduction length.
    pub k: usize,
    /// Bytes per element of A and B, including their scales (FP8: 1 +
    /// 4/128 for the A row scales).
    pub operand_bytes: f64,
    /// Bytes per element of D.
    pub output_bytes: f64,
    /// Bytes from one row of A to the next as the kernel's TMA loads read
    /// them (K · element bytes when packed; a view's or a re-packed copy's
    /// row stride otherwise): what [`l2_rate`] checks for alignment.
    pub a_row_bytes: f64,
    /// The same for B.
    pub b_row_bytes: f64,
    /// A copy made before the GEMM, µs ([`Problem::with_repack_us`]: an
    /// operand re-packed at an aligned row stride); added to the estimate.
    pub repack_us: f64,
}

impl Problem {
    /// A BF16 problem (2-byte operands and output).
    ///
    /// ```
    /// let p = baton_runtime::gemm::cost_model::Problem::bf16(1, 2, 3);
    /// assert_eq!((p.m, p.n, p.k, p.operand_bytes), (1, 2, 3, 2.0));
    /// ```
    pub const fn bf16(m: usize, n: usize, k: usize) -> Self {
        Self {
            m,
            n,
            k,
            operand_bytes: 2.0,
            output_bytes: 2.0,
            a_row_bytes: 2.0 * k as f64,
            b_row_bytes: 2.0 * k as f64,
            repack_us: 0.0,
        }
    }

    /// This problem with A's and B's rows `a_row_bytes` and `b_row_bytes`
    /// apart (strided views, or an operand re-packed at another stride).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::Problem;
    /// let p = Problem::bf16(64, 64, 2056).with_row_bytes(4224.0, 4112.0);
    /// assert_eq!((p.a_row_bytes, p.b_row_bytes), (4224.0, 4112.0));
    /// ```
    pub const fn with_row_bytes(self, a_row_bytes: f64, b_row_bytes: f64) -> Self {
        Self {
            a_row_bytes,
            b_row_bytes,
            ..self
        }
    }

    /// This problem with a copy of `repack_us` µs before the GEMM
    /// ([`TileCost::repack_us`]).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::Problem;
    /// assert_eq!(Problem::bf16(64, 64, 64).with_repack_us(3.0).repack_us, 3.0);
    /// ```
    pub const fn with_repack_us(self, repack_us: f64) -> Self {
        Self { repack_us, ..self }
    }

    /// A blockwise FP8 problem (1-byte operands plus one f32 scale per 128
    /// of K, bf16 output).
    ///
    /// ```
    /// let p = baton_runtime::gemm::cost_model::Problem::fp8(1, 2, 128);
    /// assert_eq!(p.operand_bytes, 1.03125);
    /// ```
    pub const fn fp8(m: usize, n: usize, k: usize) -> Self {
        Self {
            m,
            n,
            k,
            operand_bytes: 1.0 + 4.0 / 128.0,
            output_bytes: 2.0,
            a_row_bytes: k as f64,
            b_row_bytes: k as f64,
            repack_us: 0.0,
        }
    }
}

/// A tile configuration as the cost model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileShape {
    /// Tile rows (M).
    pub bm: usize,
    /// Tile columns (N).
    pub bn: usize,
    /// K block.
    pub bk: usize,
    /// Tiles per work unit, stacked along M (a cluster sharing B tiles).
    pub cluster_m: usize,
    /// Measured throughput per SM relative to the family's reference tile.
    pub speed: f64,
}

/// The cost model's estimate for one tile shape on one problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileCost {
    /// Work units (clusters of tiles).
    pub units: usize,
    /// Units resident at once.
    pub slots: usize,
    /// Waves of units (a partial one counts whole).
    pub waves: usize,
    /// `units / (waves · slots)`: the share of the waves' slots doing work.
    pub wave_efficiency: f64,
    /// `M·N / (units · cluster_m · BM · BN)`: the share of the computed
    /// tile area inside D.
    pub tile_efficiency: f64,
    /// Time of the waves' math, µs.
    pub math_us: f64,
    /// Time of the workers' serial K-block chains
    /// ([`Streaming::k_block_floor_us`] per K block; 0 for the kernels
    /// with two consumer warpgroups), µs: a floor like the others, but not
    /// math, so it does not count in [`cheapest`]'s tie-break.
    pub chain_us: f64,
    /// Time of the DRAM traffic (operands once per wave, D once) at the
    /// [`dram_share`] of the first wave's busy slots, µs.
    pub dram_us: f64,
    /// Time of the tiles' operand loads from L2 at the machine's L2 rate
    /// (every tile's A rows and its CTA's share of B columns over the
    /// K blocks), µs; for a split plan, the loads past its rings' first
    /// fill at the split-K rate ([`Machine::l2_split_k_bytes_per_s`]).
    pub l2_us: f64,
    /// Workers per unit (split-K; 1: every unit whole).
    pub splits: usize,
    /// Time of the split-K fixup ([`Finalizer::wave_us`] per wave; 0
    /// without a split), µs.
    pub fixup_us: f64,
    /// Time of a copy before the GEMM ([`Problem::repack_us`]), µs.
    pub repack_us: f64,
}

impl TileCost {
    /// The estimate: the math time, or the DRAM or L2 time where one of
    /// those is longer, plus the split-K fixup and any copy before the
    /// GEMM.
    pub fn estimate_us(&self) -> f64 {
        self.math_us
            .max(self.dram_us)
            .max(self.l2_us)
            .max(self.chain_us)
            + self.fixup_us
            + self.repack_us
    }
}

/// The fixed cost of a split-K hand-over per wave, µs: the contributor's
/// stores drain, its release flag reaches the finalizer's acquire poll, and
/// the finalizer's first loads return (each an L2 round trip). Fitted on
/// session 8's H100 sweep (BENCHMARKS.md): without it the model predicted
/// 2–15% gains for 2- and 3-way splits of 64–80-unit, K ≤ 4096 shapes that
/// measured 1–7 µs slower than whole units.
pub const FIXUP_LATENCY_US: f64 = 3.0;

/// The DRAM latency under load that a streaming kernel's bytes in flight
/// cover ([`TileShape::cost_streaming`], Little's law), µs. Fitted on the
/// swap-AB measurements of session 10 (H100, each library on cold inputs):
/// 32 16-row swap-AB CTAs, 10 stages of 16.5 KB each in flight, read
/// 1×1024×32768 (split 4) at 2.4 TB/s and 1×4096×4096 (whole) at 2.6 TB/s
/// past the 5.3 µs launch floor: 5.3 MB in flight over 2.1 µs. (One CTA
/// alone, unloaded, read 110 GB/s with 8 stages: 1.2 µs.)
pub const DRAM_LATENCY_US: f64 = 2.1;

/// How much of a split plan's first ring fill the launch's ramp hides, µs
/// of loads at the unsplit L2 rate ([`TileShape::cost_split`]): about the
/// time from a CTA's start until its first stage is full (1.8–2.7 µs in
/// session 18's per-CTA timelines, H200), during which the fill's loads
/// are in flight and nothing else is.
pub const RING_FILL_HIDDEN_US: f64 = 2.0;

/// [`Streaming::k_block_floor_us`] of the narrow swap-AB kernels (64 of N
/// per tile on one consumer warpgroup), µs per K block of 64. Measured on
/// an H200 (session 22, calls 1, 3 and 7; µs past the 5.3 µs launch floor
/// over each worker's K blocks): 1×1024×32768 and 8×1024×32768 split 3
/// (171 K blocks per worker, 48 CTAs) 139–140 ns, 32×1024×32768 split 3
/// 140 ns, 64×1024×32768 split 3 151 ns; whole tiles at N = 2048, K =
/// 16384 (257 K blocks, 32 CTAs) 126, 128 and 136 ns at M = 16, 32 and 64
/// — the same for every tile height, while the 128-row swap-AB tiles' two
/// warpgroups stream more bytes per K block at the same DRAM rate.
/// Without it the model put 48 narrow CTAs at the DRAM rate (Little's law
/// on 16 stages) and picked split 3, 15–20 % slower than split 4–5.
pub const NARROW_K_BLOCK_US: f64 = 0.14;

/// One hand-over of split-K partials (the contributor's stores drain, its
/// flag reaches the finalizer's poll, the finalizer's loads return), µs:
/// session 9 measured ≈ 0.65 µs per contributor when the finalizer took them
/// one after the other (swap-AB, 8–32 KiB partials).
pub const HANDOVER_US: f64 = 0.65;

/// Contributors whose partials an overlapped finalizer loads together
/// (`StreamKFixup::accumulate_all` of the kernel roles).
pub const OVERLAPPED_BATCH: usize = 4;

/// The split-K hand-overs per wave of a kernel whose finalizer waits for
/// all contributors at once and loads their partials [`OVERLAPPED_BATCH`]
/// at a time, µs (predicted, session 10): two hand-overs whatever the split
/// (the contributors' stores drain and their flags reach the finalizer; its
/// acquire and barrier), then one load round trip per batch of partials.
/// The fixed part is fitted: in session 10's grid a 2-way split of
/// 1×4096×4096 (32 → 64 CTAs) ran 1.25 µs slower than whole, where the DRAM
/// term predicts 1.76 µs saved. ([`overlapped_fixup_batched_us`] with the
/// batch of the swap-AB kernels.)
///
/// ```
/// use baton_runtime::gemm::cost_model::{HANDOVER_US, overlapped_fixup_us};
/// assert_eq!(overlapped_fixup_us(1), 0.0);
/// assert_eq!(overlapped_fixup_us(5), 3.0 * HANDOVER_US); // 4 contributors: one batch
/// assert_eq!(overlapped_fixup_us(6), 4.0 * HANDOVER_US);
/// ```
pub fn overlapped_fixup_us(splits: usize) -> f64 {
    overlapped_fixup_batched_us(splits, OVERLAPPED_BATCH)
}

/// [`overlapped_fixup_us`] of a finalizer that loads `batch` contributors'
/// partials together (0 is taken as 1): two hand-overs, then one round
/// trip per batch of the `splits − 1` contributors, µs. The cooperative
/// BF16 kernels load 4, 2 or 1 at a time by their accumulator count
/// (`kernel_abi::gemm_bf16::fixup_batch`; session 11).
///
/// ```
/// use baton_runtime::gemm::cost_model::{HANDOVER_US, overlapped_fixup_batched_us};
/// assert_eq!(overlapped_fixup_batched_us(1, 2), 0.0);
/// // 7 contributors, 2 at a time: 4 round trips after the 2 hand-overs.
/// assert_eq!(overlapped_fixup_batched_us(8, 2), 6.0 * HANDOVER_US);
/// assert_eq!(overlapped_fixup_batched_us(8, 1), 9.0 * HANDOVER_US);
/// ```
pub fn overlapped_fixup_batched_us(splits: usize, batch: usize) -> f64 {
    if splits <= 1 {
        return 0.0;
    }
    HANDOVER_US * (2 + (splits - 1).div_ceil(batch.max(1))) as f64
}

/// How a kernel's split-K finalizer takes the contributors' partials, and
/// what the model charges per wave for it ([`TileCost::fixup_us`]).
///
/// ```
/// use baton_runtime::gemm::cost_model::{Finalizer, Machine};
/// let m = Machine::H100_BF16;
/// // 128×256 split 8 (128 KiB partials, one per load): the partials'
/// // bytes dominate the hand-overs.
/// let coop = Finalizer::OverlappedPartials { batch: 1 }.wave_us(8, 131072.0, &m);
/// let handovers = Finalizer::Overlapped { batch: 1 }.wave_us(8, 131072.0, &m);
/// assert!(coop > 2.0 * handovers);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finalizer {
    /// One contributor after the other: [`FIXUP_LATENCY_US`], then
    /// `splits` fp32 partial tiles at [`Machine::fixup_bytes_per_s`]
    /// (session 8's fit; the fixup of [`TileShape::cost_split`]).
    InTurn,
    /// All contributors at once, `batch` partials per load:
    /// [`overlapped_fixup_batched_us`] only. The swap-AB kernels: their
    /// 8–32 KiB partials are inside [`HANDOVER_US`]'s measurement.
    Overlapped {
        /// Contributors' partials loaded together ([`OVERLAPPED_BATCH`]).
        batch: usize,
    },
    /// As [`Overlapped`](Self::Overlapped), plus `splits` fp32 partial
    /// tiles at [`Machine::fixup_bytes_per_s`] (a contributor's store, the
    /// others' overlapped with it, then the finalizer's `splits − 1`
    /// loads): the cooperative BF16 kernels since session 11, whose
    /// 32–128 KiB partials outweigh the hand-overs (fitted 2026-11-28,
    /// [`Machine::H100_BF16`]).
    OverlappedPartials {
        /// Contributors' partials loaded together (4, 2 or 1 by tile
        /// width: `kernel_abi::gemm_bf16::fixup_batch`).
        batch: usize,
    },
}

impl Finalizer {
    /// The fixup of one wave of units split `splits` ways with fp32
    /// partial tiles of `partial_bytes`, µs (0 without a split).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Finalizer, HANDOVER_US, Machine};
    /// let m = Machine::H100_BF16;
    /// assert_eq!(Finalizer::InTurn.wave_us(1, 65536.0, &m), 0.0);
    /// // 128×128 split 8: 2 + ⌈7 / 2⌉ hand-overs, 8 × 64 KiB at 70 GB/s.
    /// let us = Finalizer::OverlappedPartials { batch: 2 }.wave_us(8, 65536.0, &m);
    /// assert!((us - (6.0 * HANDOVER_US + 8.0 * 65536.0 / 70e9 * 1e6)).abs() < 1e-9);
    /// assert_eq!(Finalizer::Overlapped { batch: 4 }.wave_us(5, 8192.0, &m), 3.0 * HANDOVER_US);
    /// // FP8 128×64 split 4 in turn: the hand-over, 4 partials of 32 KiB at 60 GB/s.
    /// let us = Finalizer::InTurn.wave_us(4, 32768.0, &Machine::H100_FP8);
    /// assert!((us - (3.0 + 4.0 * 32768.0 / 60e9 * 1e6)).abs() < 1e-9);
    /// ```
    pub fn wave_us(self, splits: usize, partial_bytes: f64, machine: &Machine) -> f64 {
        if splits <= 1 {
            return 0.0;
        }
        let partials_us = splits as f64 * partial_bytes / machine.fixup_bytes_per_s * 1e6;
        match self {
            Finalizer::InTurn => FIXUP_LATENCY_US + partials_us,
            Finalizer::Overlapped { batch } => overlapped_fixup_batched_us(splits, batch),
            Finalizer::OverlappedPartials { batch } => {
                overlapped_fixup_batched_us(splits, batch) + partials_us
            }
        }
    }
}

/// What [`TileShape::cost_streaming`] knows of a streaming kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Streaming {
    /// Input stages in its ring.
    pub stages: usize,
    /// How its split-K finalizer takes the contributors' partials.
    pub fixup: Finalizer,
    /// Whether [`TileShape::cost_best_split_streaming`] tries only split
    /// counts that cut the K blocks into equal ranges ([`even_split`]; the
    /// cooperative kernels), or every count (the swap-AB kernels).
    pub even_splits: bool,
    /// The least time one worker spends per K block, µs, whatever its
    /// bytes and math: the serial chain (full-barrier wait, `wgmma`s,
    /// their retirement, the release) of a kernel with one consumer
    /// warpgroup, which no second warpgroup overlaps
    /// ([`NARROW_K_BLOCK_US`]); 0 for the kernels with two.
    pub k_block_floor_us: f64,
}

/// Whether `splits` workers cut `k_blocks` K blocks into equal ranges.
///
/// The split-K schedule is the stream-K schedule with `units · splits`
/// workers over the units' K blocks laid end to end, so with a count that
/// does not divide the K blocks most workers' ranges cross a unit
/// boundary: such a worker runs a contributor segment of one unit, then
/// the first K blocks of the next (two tile prologues, and units with up
/// to `splits + 1` partials). Measured (H100, session 11, BENCHMARKS.md):
/// the cooperative 128×64 kernel split 3 ways ran 17–23 % slower than
/// split 2 or 4 at 256×1024×32768 (69 vs 59 / 56 µs) and 256×1024×4096 (19
/// vs 16 / 16 µs), where the model put 3 ways 1–6 % ahead, while 3 ways
/// that divide the K blocks ran as fast as 4 (256×1024×24576: 45 µs both;
/// 256×1024×3072: 14–15 µs both): the step is the uneven cut, not the
/// count. Which part of the crossing costs that much is not measured yet
/// (a simulation of the schedule's hand-overs explains 2–15 %). With even
/// splits only, 256×1024×4096 ran 19.3 → 15.3 µs and 256×1024×32768 68.1 →
/// 54.7 µs (same call). The swap-AB kernels (one unit
/// row, overlapped finalizer) showed no such step in session 10's grid (5
/// ways of 64 K blocks ran best at 1×1024×4096).
///
/// Since session 19 the schedule cuts a split-K grid unit by unit
/// (`baton::protocol::tile_scheduler::StreamKSchedule::sk_splits`): no
/// range crosses a unit, whatever the count. Measured on an H200 (call 3,
/// `docs/runs/2026-11-28-s19/call3`): 128×64 split 3 at 256×1024×4096
/// 17.2 → 14.8 µs (the plan's even split 4: 13.2–13.7), swap-AB split 5
/// plans 3 % faster (geomean of 12 rows). The cooperative plans still try
/// even counts only: uneven ones are not yet re-measured against them.
///
/// ```
/// use baton_runtime::gemm::cost_model::even_split;
/// assert!(even_split(512, 4) && !even_split(512, 3) && even_split(33, 3));
/// ```
pub fn even_split(k_blocks: usize, splits: usize) -> bool {
    splits > 0 && k_blocks.is_multiple_of(splits)
}

/// The fewest K blocks one split-K worker runs
/// ([`TileShape::cost_best_split`] tries no split with less): below this
/// the per-tile cost and the fixup outweigh the work.
pub const MIN_SPLIT_K_BLOCKS: usize = 4;

impl TileShape {
    /// Estimates this tile shape on `p` with `slots` work units resident at
    /// once (SMs, or co-resident clusters) on a GPU of rates `machine`.
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 64, bk: 64, cluster_m: 1, speed: 1.0 };
    /// let c = t.cost(&Problem::bf16(100, 64, 64), &Machine::H100_BF16, 132);
    /// assert_eq!((c.units, c.waves, c.tile_efficiency), (1, 1, 100.0 / 128.0));
    /// ```
    pub fn cost(&self, p: &Problem, machine: &Machine, slots: u32) -> TileCost {
        self.cost_split(p, machine, slots, 1)
    }

    /// [`cost`](Self::cost) with a per-tile fixed cost of
    /// `overhead_k_blocks` K blocks instead of [`TILE_OVERHEAD_K_BLOCKS`]
    /// (ping-pong configurations hide their epilogue:
    /// [`PINGPONG_TILE_OVERHEAD_K_BLOCKS`]); every unit whole.
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape, TILE_OVERHEAD_K_BLOCKS};
    /// let t = TileShape { bm: 128, bn: 128, bk: 64, cluster_m: 1, speed: 1.0 };
    /// let p = Problem::bf16(4096, 4096, 4096);
    /// let hidden = t.cost_with_overhead(&p, &Machine::H100_BF16, 132, 0.0);
    /// let coop = t.cost_with_overhead(&p, &Machine::H100_BF16, 132, TILE_OVERHEAD_K_BLOCKS);
    /// assert!((coop.math_us / hidden.math_us - (64.0 + 1.5) / 64.0).abs() < 1e-12);
    /// ```
    pub fn cost_with_overhead(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        overhead_k_blocks: f64,
    ) -> TileCost {
        self.cost_split_with_overhead(p, machine, slots, 1, overhead_k_blocks)
    }

    /// [`cost`](Self::cost) with each unit's K blocks split across
    /// `splits ≥ 1` workers (0 is taken as 1): `slots / splits` units per
    /// wave, each worker running `⌈K blocks / splits⌉` K blocks, plus the
    /// fixup of `splits` fp32 tile transfers per wave.
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 64, bk: 64, cluster_m: 1, speed: 1.0 };
    /// let p = Problem::bf16(8, 1024, 32768); // 16 units of 512 K blocks
    /// let (whole, split) = (t.cost(&p, &Machine::H100_BF16, 132),
    ///                       t.cost_split(&p, &Machine::H100_BF16, 132, 8));
    /// assert_eq!((split.units, split.waves, split.splits), (16, 1, 8));
    /// assert!(split.estimate_us() < whole.estimate_us() / 2.5);
    /// ```
    pub fn cost_split(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        splits: usize,
    ) -> TileCost {
        self.cost_split_with_overhead(p, machine, slots, splits, TILE_OVERHEAD_K_BLOCKS)
    }

    /// [`cost_split`](Self::cost_split) with a per-tile fixed cost of
    /// `overhead_k_blocks` K blocks ([`cost_with_overhead`](Self::cost_with_overhead)).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 128, bk: 64, cluster_m: 1, speed: 1.0 };
    /// let p = Problem::bf16(4096, 4096, 4096);
    /// let c = t.cost_split_with_overhead(&p, &Machine::H100_BF16, 132, 1, 0.5);
    /// assert_eq!(c, t.cost_with_overhead(&p, &Machine::H100_BF16, 132, 0.5));
    /// ```
    pub fn cost_split_with_overhead(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        splits: usize,
        overhead_k_blocks: f64,
    ) -> TileCost {
        self.cost_inner(p, machine, slots, splits, overhead_k_blocks, None)
    }

    /// [`cost_split`](Self::cost_split) of a kernel whose split-K fixup is
    /// `finalizer`'s (instead of [`Finalizer::InTurn`]); DRAM and L2 as
    /// [`cost_split`](Self::cost_split).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Finalizer, Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 64, bk: 128, cluster_m: 1, speed: 0.7 };
    /// let (p, m) = (Problem::fp8(256, 1024, 32768), Machine::H100_FP8);
    /// let c = t.cost_split_finalized(&p, &m, 132, 4, Finalizer::InTurn);
    /// assert_eq!(c.fixup_us, Finalizer::InTurn.wave_us(4, 32768.0, &m));
    /// assert_eq!(c.math_us, t.cost_split(&p, &m, 132, 4).math_us);
    /// ```
    pub fn cost_split_finalized(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        splits: usize,
        finalizer: Finalizer,
    ) -> TileCost {
        let mut c = self.cost_split(p, machine, slots, splits);
        c.fixup_us =
            c.waves as f64 * finalizer.wave_us(c.splits, (4 * self.bm * self.bn) as f64, machine);
        c
    }

    /// [`cost_best_split`](Self::cost_best_split) with the fixup of
    /// `finalizer` ([`cost_split_finalized`](Self::cost_split_finalized)),
    /// under the same rules; with `even_splits`, only the counts that cut
    /// the K blocks into equal ranges ([`even_split`]).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Finalizer, Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 64, bk: 128, cluster_m: 1, speed: 0.7 };
    /// let m = Machine::H100_FP8;
    /// let best = |p, even| t.cost_best_split_finalized(&p, &m, 132, 132, Finalizer::InTurn, even);
    /// assert_eq!(best(Problem::fp8(8, 8192, 32768), true).splits, 1); // 128 units fill the GPU
    /// // 16 units of 256 K blocks: 7 ways is the least estimate, 8 the least even one.
    /// assert_eq!(best(Problem::fp8(8, 1024, 32768), false).splits, 7);
    /// assert_eq!(best(Problem::fp8(8, 1024, 32768), true).splits, 8);
    /// ```
    pub fn cost_best_split_finalized(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        max_splits: usize,
        finalizer: Finalizer,
        even_splits: bool,
    ) -> TileCost {
        self.best_split(p, max_splits, even_splits, |splits| {
            self.cost_split_finalized(p, machine, slots, splits, finalizer)
        })
    }

    /// [`cost_split_with_overhead`](Self::cost_split_with_overhead) of a
    /// kernel that streams its operands through a deep ring
    /// ([`Streaming`]): its DRAM rate is the bytes its busy CTAs keep in
    /// flight over [`DRAM_LATENCY_US`] (Little's law, up to the machine's
    /// bandwidth) instead of [`dram_share`] of the busy CTAs; its split-K
    /// fixup is its [`Streaming::fixup`]'s; and split, the first fill of
    /// its rings (`stages` K blocks per busy CTA) is not in its L2 time
    /// ([`TileCost::l2_us`]).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Finalizer, Machine, Problem, Streaming, TileShape};
    /// let t = TileShape { bm: 16, bn: 128, bk: 64, cluster_m: 1, speed: 0.85 };
    /// let s = Streaming { stages: 10, fixup: Finalizer::Overlapped { batch: 4 }, even_splits: false, k_block_floor_us: 0.0 };
    /// let c = t.cost_streaming(&Problem::bf16(1, 4096, 4096), &Machine::H100_BF16, 132, 1, 1.5, s);
    /// // 32 CTAs × 10 stages × 16,512 B in flight over 2.1 µs: 2.52 TB/s.
    /// assert!((c.dram_us - 33_570_816.0 / (5_283_840.0 / 2.1e-6) * 1e6).abs() < 1e-9);
    /// ```
    pub fn cost_streaming(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        splits: usize,
        overhead_k_blocks: f64,
        streaming: Streaming,
    ) -> TileCost {
        self.cost_inner(
            p,
            machine,
            slots,
            splits,
            overhead_k_blocks,
            Some(streaming),
        )
    }

    /// The least [`cost_streaming`](Self::cost_streaming) over split counts
    /// 1 to `max_splits`, under the rules of
    /// [`cost_best_split`](Self::cost_best_split).
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Finalizer, Machine, Problem, Streaming, TileShape};
    /// let t = TileShape { bm: 16, bn: 128, bk: 64, cluster_m: 1, speed: 0.85 };
    /// let s = Streaming { stages: 10, fixup: Finalizer::Overlapped { batch: 4 }, even_splits: false, k_block_floor_us: 0.0 };
    /// let c = t.cost_best_split_streaming(&Problem::bf16(1, 1024, 4096), &Machine::H100_BF16, 132, 132, 1.5, s);
    /// assert!(c.splits > 1);
    /// ```
    pub fn cost_best_split_streaming(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        max_splits: usize,
        overhead_k_blocks: f64,
        streaming: Streaming,
    ) -> TileCost {
        self.best_split(p, max_splits, streaming.even_splits, |splits| {
            self.cost_streaming(p, machine, slots, splits, overhead_k_blocks, streaming)
        })
    }

    /// The split search of the `cost_best_split*` estimates: `cost(1)`,
    /// then each count from 2 up to `max_splits` while every unit stays in
    /// one wave (`units · splits ≤ slots`) and each worker keeps at least
    /// [`MIN_SPLIT_K_BLOCKS`] K blocks, skipping uneven counts when
    /// `even_splits`; a count replaces the best only when its estimate is
    /// lower by more than [`EQUAL_WITHIN`] (ties keep fewer splits).
    fn best_split(
        &self,
        p: &Problem,
        max_splits: usize,
        even_splits: bool,
        cost: impl Fn(usize) -> TileCost,
    ) -> TileCost {
        let mut best = cost(1);
        let k_blocks = p.k.div_ceil(self.bk);
        for splits in 2..=max_splits {
            if best.units * splits > best.slots || k_blocks < splits * MIN_SPLIT_K_BLOCKS {
                break;
            }
            if even_splits && !even_split(k_blocks, splits) {
                continue;
            }
            let c = cost(splits);
            if c.estimate_us() < best.estimate_us() * (1.0 - EQUAL_WITHIN) {
                best = c;
            }
        }
        best
    }

    fn cost_inner(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        splits: usize,
        overhead_k_blocks: f64,
        streaming: Option<Streaming>,
    ) -> TileCost {
        let slots = (slots as usize).max(1);
        let splits = splits.max(1);
        let cm = self.cluster_m.max(1);
        let unit_rows = p.m.div_ceil(self.bm).div_ceil(cm);
        let unit_cols = p.n.div_ceil(self.bn);
        let units = unit_rows * unit_cols;
        // Units running at once: every slot holds one worker of a unit.
        let per_wave = (slots / splits).max(1);
        let waves = units.div_ceil(per_wave);
        let k_blocks = p.k.div_ceil(self.bk).div_ceil(splits) as f64 + overhead_k_blocks;
        let tile_flops = 2.0 * (self.bm * self.bn * self.bk) as f64 * k_blocks;
        let math_s = waves as f64 * tile_flops / (machine.flops_per_sm * self.speed);
        // A worker's K blocks take at least its kernel's serial chain each.
        let chain_s =
            waves as f64 * streaming.map_or(0.0, |st| st.k_block_floor_us * 1e-6 * k_blocks);
        // DRAM: each wave reads the A rows and B columns its units span
        // (the splits of a unit read disjoint K ranges of them).
        let wave_bytes = |u: usize| {
            let rows = u.min(RASTER_GROUP_M).min(unit_rows).max(1);
            let cols = u.div_ceil(rows).min(unit_cols);
            let a_rows = (rows * cm * self.bm).min(p.m);
            let b_cols = (cols * self.bn).min(p.n);
            ((a_rows + b_cols) * p.k) as f64 * p.operand_bytes
        };
        let full = units / per_wave;
        let rest = units % per_wave;
        let operand_bytes =
            full as f64 * wave_bytes(per_wave) + if rest > 0 { wave_bytes(rest) } else { 0.0 };
        let bytes = operand_bytes + (p.m * p.n) as f64 * p.output_bytes;
        let busy_workers = units.min(per_wave) * splits;
        let busy = busy_workers as f64 / slots as f64;
        // Few busy CTAs cannot pull the GPU's share: each streams at most
        // `cta_dram_bytes_per_s`.
        let bandwidth = match streaming {
            // Little's law: each busy CTA keeps `stages` stages of its DRAM
            // bytes (the A rows and B columns that exist) in flight.
            Some(st) => {
                let stage_bytes =
                    ((p.m.min(self.bm) + p.n.min(self.bn) / cm) * self.bk) as f64 * p.operand_bytes;
                let in_flight = (busy_workers * cm * st.stages) as f64 * stage_bytes;
                machine
                    .dram_bytes_per_s
                    .min(in_flight / (DRAM_LATENCY_US * 1e-6))
            }
            None => (machine.dram_bytes_per_s * dram_share(busy))
                .min((busy_workers * cm) as f64 * machine.cta_dram_bytes_per_s),
        };
        let finalizer = streaming.map_or(Finalizer::InTurn, |st| st.fixup);
        let fixup_us =
            waves as f64 * finalizer.wave_us(splits, (4 * self.bm * self.bn) as f64, machine);
        // L2 → SM: each tile loads BM rows of A and BN / cluster_m columns
        // of B per K block (split or not: the splits load disjoint K).
        let tiles = (units * cm) as f64;
        let k_loaded = (p.k.div_ceil(self.bk) * self.bk) as f64;
        let (a_tile_rows, b_tile_rows) = (self.bm as f64, self.bn as f64 / cm as f64);
        let tile_row_bytes = (a_tile_rows + b_tile_rows) * p.operand_bytes;
        let loads = tiles * k_loaded * tile_row_bytes;
        // Each operand's share of the loads at its rows' rate (the same
        // rate for both unless one is re-packed or strided differently).
        let out_row_bytes = p.n as f64 * p.output_bytes;
        let rate = |row_bytes: f64| l2_row_rate(row_bytes, out_row_bytes, machine, cm);
        let (a_share, b_share) = (
            a_tile_rows / (a_tile_rows + b_tile_rows),
            b_tile_rows / (a_tile_rows + b_tile_rows),
        );
        // `bytes` of loads split between A and B, each at its rows' rate.
        let at = |bytes: f64, rate: &dyn Fn(f64) -> f64| {
            bytes * a_share / rate(p.a_row_bytes) + bytes * b_share / rate(p.b_row_bytes)
        };
        let l2_s = if splits > 1 {
            // A split plan's loads past its rings' first fill (each busy
            // CTA's first `stages` K blocks, requested at once at its start
            // and in flight during the launch's ramp) run at the split-K
            // rate, which was measured on those bytes. The ramp hides at
            // most [`RING_FILL_HIDDEN_US`] of the fill at the unsplit rate;
            // the rest of it costs that rate (at short K the fill is all
            // of a worker's loads: 128×128 split 3 at 128×4104×2056, 11 K
            // blocks per worker, was costed 3.6 µs of L2 with the whole
            // fill hidden, where its loads at the unaligned rate take 7.8,
            // and ran 7 % slower than the 128×64 plan it displaced;
            // session 22, H200).
            let ring_fill = streaming.map_or(0.0, |st| {
                let first = st.stages.min(p.k.div_ceil(self.bk).div_ceil(splits));
                (busy_workers * cm * first * self.bk) as f64 * tile_row_bytes
            });
            let fill = ring_fill.min(loads);
            let split_rate = |row_bytes| rate(row_bytes).min(machine.l2_split_k_bytes_per_s);
            let fill_s = (at(fill, &rate) - RING_FILL_HIDDEN_US * 1e-6).max(0.0);
            fill_s + at(loads - fill, &split_rate)
        } else {
            at(loads, &rate)
        };
        TileCost {
            units,
            slots,
            waves,
            wave_efficiency: units as f64 / (waves * per_wave) as f64,
            tile_efficiency: (p.m * p.n) as f64 / (units * cm * self.bm * self.bn) as f64,
            math_us: math_s * 1e6,
            chain_us: chain_s * 1e6,
            dram_us: bytes / bandwidth * 1e6,
            l2_us: l2_s * 1e6,
            splits,
            fixup_us,
            repack_us: p.repack_us,
        }
    }

    /// The least [`cost_split`](Self::cost_split) over split counts from 1
    /// to `max_splits` that keep every unit in one wave (`units · splits ≤
    /// slots`) and give each worker at least [`MIN_SPLIT_K_BLOCKS`] K
    /// blocks; of estimates within [`EQUAL_WITHIN`] the fewer splits.
    /// `max_splits` is 1 for kernels without split-K.
    ///
    /// ```
    /// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape};
    /// let t = TileShape { bm: 128, bn: 64, bk: 64, cluster_m: 1, speed: 1.0 };
    /// let m = Machine::H100_BF16;
    /// // 16 units of 512 K blocks: 7 splits (112 of 132 SMs) already meet
    /// // the split-K L2 floor, which more splits do not lower; 8 would pay
    /// // one partial more.
    /// assert_eq!(t.cost_best_split(&Problem::bf16(8, 1024, 32768), &m, 132, 64).splits, 7);
    /// // At the unsplit L2 rate (no split-K rate) 8 splits fill 128 SMs.
    /// let no_floor = Machine { l2_split_k_bytes_per_s: f64::INFINITY, ..m };
    /// assert_eq!(t.cost_best_split(&Problem::bf16(8, 1024, 32768), &no_floor, 132, 64).splits, 8);
    /// // 128 units already fill the GPU: no split.
    /// assert_eq!(t.cost_best_split(&Problem::bf16(8, 8192, 32768), &m, 132, 64).splits, 1);
    /// ```
    pub fn cost_best_split(
        &self,
        p: &Problem,
        machine: &Machine,
        slots: u32,
        max_splits: usize,
    ) -> TileCost {
        self.best_split(p, max_splits, false, |splits| {
            self.cost_split(p, machine, slots, splits)
        })
    }
}

/// The candidate with the least estimate, with its cost; of estimates
/// within [`EQUAL_WITHIN`] of each other the one with less math time, then
/// the first; `None` for no candidates. `cost` estimates candidate `id` of
/// shape `shape`.
///
/// ```
/// use baton_runtime::gemm::cost_model::{Machine, Problem, TileShape, cheapest};
/// let shapes = [("narrow", TileShape { bm: 128, bn: 64, bk: 64, cluster_m: 1, speed: 0.85 }),
///               ("wide", TileShape { bm: 128, bn: 256, bk: 64, cluster_m: 1, speed: 1.0 })];
/// let p = Problem::bf16(8192, 8192, 8192);
/// let (best, _) = cheapest(&shapes, |_, t| t.cost(&p, &Machine::H100_BF16, 132)).unwrap();
/// assert_eq!(best, "wide");
/// ```
pub fn cheapest<T: Copy>(
    candidates: &[(T, TileShape)],
    cost: impl Fn(T, &TileShape) -> TileCost,
) -> Option<(T, TileCost)> {
    let mut best: Option<(T, TileCost)> = None;
    for (id, shape) in candidates {
        let c = cost(*id, shape);
        let better = |b: &TileCost| {
            let (e, be) = (c.estimate_us(), b.estimate_us());
            if (e - be).abs() <= EQUAL_WITHIN * be {
                c.math_us < b.math_us
            } else {
                e < be
            }
        };
        if best.is_none_or(|(_, b)| better(&b)) {
            best = Some((*id, c));
        }
    }
    best
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Equal within 1e-9, relative (absolute below 1).
    pub(crate) fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1.0)
    }

    /// 8192³ with 128×256 tiles in 2-CTA clusters on 66 cluster slots, by
    /// hand: 32 unit rows × 32 unit columns = 1024 units, 16 waves (the
    /// last holds 1024 − 15·66 = 34 units). Math: 2·128·256·64 FLOP per K
    /// block × (128 + 1.5) blocks = 543,162,368 FLOP per tile; at
    /// 6.0e12 · 1.02 FLOP/s: 88.752 µs; × 16 = 1420.03 µs. DRAM: a full
    /// wave spans 8 unit rows (2048 A rows) and 9 unit columns (2304 B
    /// columns): 4352 · 8192 · 2 = 71,303,168 B; 15 of them, then the last
    /// wave's 34 units: 8 rows, 5 columns (1280 B cols): 3328 · 8192 · 2 =
    /// 54,525,952 B; D 8192² · 2 = 134,217,728 B; total 1,258,291,200 B at
    /// 2.9e12 B/s = 433.89 µs.
    #[test]
    fn bf16_8192_cubed_by_hand() {
        let t = TileShape {
            bm: 128,
            bn: 256,
            bk: 64,
            cluster_m: 2,
            speed: 1.02,
        };
        let c = t.cost(&Problem::bf16(8192, 8192, 8192), &Machine::H100_BF16, 66);
        assert_eq!((c.units, c.slots, c.waves), (1024, 66, 16));
        assert!(close(c.wave_efficiency, 1024.0 / 1056.0));
        assert!(close(c.tile_efficiency, 1.0));
        assert!(
            close(c.math_us, 16.0 * 543_162_368.0 / 6.12e12 * 1e6),
            "{c:?}"
        );
        assert!((c.math_us - 1420.03).abs() < 0.01, "{c:?}");
        assert!(close(c.dram_us, 1_258_291_200.0 / 2.9e12 * 1e6), "{c:?}");
        assert!((c.dram_us - 433.89).abs() < 0.01, "{c:?}");
        assert_eq!(c.estimate_us(), c.math_us);
    }

    /// M = 1, N = 4096, K = 4096, 128×64 tiles on 132 SMs, by hand: 64
    /// units in one wave, tile efficiency 1·4096 / (64·128·64) = 1/128.
    /// Math: 2·128·64·64 · (64 + 1.5) = 68,681,728 FLOP at 6.0e12 · 0.85:
    /// 13.467 µs. DRAM: 1 A row + 4096 B columns, · 4096 · 2 = 33,562,624
    /// B, D 8192 B: 33,570,816 B; 64 of 132 SMs busy: DRAM share
    /// 1 − 0.4 · 68/132 = 0.79394, so 2.3024e12 B/s: 14.581 µs. DRAM-bound.
    #[test]
    fn bf16_single_row_by_hand() {
        let t = TileShape {
            bm: 128,
            bn: 64,
            bk: 64,
            cluster_m: 1,
            speed: 0.85,
        };
        let c = t.cost(&Problem::bf16(1, 4096, 4096), &Machine::H100_BF16, 132);
        assert_eq!((c.units, c.waves), (64, 1));
        assert!(close(c.wave_efficiency, 64.0 / 132.0));
        assert!(close(c.tile_efficiency, 1.0 / 128.0));
        assert!((c.math_us - 13.467).abs() < 0.001, "{c:?}");
        assert!((c.dram_us - 14.581).abs() < 0.001, "{c:?}");
        assert_eq!(c.estimate_us(), c.dram_us);
    }

    /// A ragged shape: 300×520×100 with 128×128 tiles: 3 unit rows × 5
    /// unit columns = 15 units, tile efficiency 156,000 / (15·16,384) =
    /// 0.63477; K 100 runs 2 K blocks of 64.
    #[test]
    fn ragged_tile_efficiency_and_k_blocks_by_hand() {
        let t = TileShape {
            bm: 128,
            bn: 128,
            bk: 64,
            cluster_m: 1,
            speed: 1.0,
        };
        let c = t.cost(&Problem::bf16(300, 520, 100), &Machine::H100_BF16, 132);
        assert_eq!((c.units, c.waves), (15, 1));
        assert!(close(c.tile_efficiency, 156_000.0 / 245_760.0));
        // 2·128·128·64 · (2 + 1.5) FLOP at 6.0e12.
        assert!(close(c.math_us, 7_340_032.0 / 6.0e12 * 1e6), "{c:?}");
    }

    /// Split-K by hand: 8×1024×32768 BF16 with 128×64 tiles (speed 0.85)
    /// on 132 SMs: 16 units of 512 K blocks.
    ///
    /// * Whole: one wave of 16 CTAs; math 2·128·64·64 · (512 + 1.5) =
    ///   538,443,776 FLOP at 5.1e12: 105.58 µs (measured in session 7's
    ///   sweep: 94.1 µs — the 128-row MMAs, not the bytes, bound it).
    /// * 8 splits: 128 workers of 64 K blocks: math 2·128·64·64 · 65.5 =
    ///   68,681,728 FLOP: 13.467 µs. DRAM: 8 A rows + 1024 B columns ·
    ///   32768 · 2 = 67,633,152 B, D 16,384 B; 128 of 132 busy: share
    ///   1 − 0.4 · 4/132 = 0.98788: 23.614 µs. L2: 16 tiles · (128 + 64)
    ///   rows · 32768 · 2 = 201,326,592 B at the split-K rate 8.0e12 B/s
    ///   (no ring fill: not a streaming cost): 25.166 µs, the floor. In-turn
    ///   fixup: 3 µs + 8 transfers of 128·64·4 = 32,768 B at 7e10 B/s:
    ///   6.745 µs. Estimate 31.911 µs.
    /// * 9 splits would need 144 workers. 7 splits (112 workers of 74 K
    ///   blocks) have the same L2 floor, above their DRAM time (share 1 −
    ///   0.4 · 20/132: 24.83 µs), and one partial less: 25.166 + 3 + 7 ·
    ///   0.468 = 31.443 µs, the best count of
    ///   [`cost_best_split`](TileShape::cost_best_split), which tries every
    ///   count (the heuristic's cooperative kernels try only counts that
    ///   divide the 512 K blocks).
    #[test]
    fn split_k_long_k_few_tiles_by_hand() {
        let t = TileShape {
            bm: 128,
            bn: 64,
            bk: 64,
            cluster_m: 1,
            speed: 0.85,
        };
        let p = Problem::bf16(8, 1024, 32768);
        let m = Machine::H100_BF16;
        let whole = t.cost(&p, &m, 132);
        assert_eq!((whole.units, whole.waves, whole.splits), (16, 1, 1));
        assert!((whole.math_us - 105.577).abs() < 0.001, "{whole:?}");
        assert_eq!(whole.fixup_us, 0.0);
        let split = t.cost_split(&p, &m, 132, 8);
        assert_eq!((split.units, split.waves, split.splits), (16, 1, 8));
        assert!((split.math_us - 13.467).abs() < 0.001, "{split:?}");
        let share = 1.0 - 0.4 * 4.0 / 132.0;
        assert!(close(split.dram_us, 67_649_536.0 / (2.9e12 * share) * 1e6));
        assert!((split.dram_us - 23.614).abs() < 0.001, "{split:?}");
        assert!(
            close(split.l2_us, 201_326_592.0 / 8.0e12 * 1e6),
            "{split:?}"
        );
        assert!((split.fixup_us - (3.0 + 8.0 * 32768.0 / 7e10 * 1e6)).abs() < 1e-9);
        assert!((split.estimate_us() - 31.911).abs() < 0.001, "{split:?}");
        let best = t.cost_best_split(&p, &m, 132, 132);
        assert_eq!(best.splits, 7);
        assert!((best.dram_us - 24.83).abs() < 0.01, "{best:?}");
        assert!((best.estimate_us() - 31.443).abs() < 0.001, "{best:?}");
        // Without split-K (max 1) the whole unit stays.
        assert_eq!(t.cost_best_split(&p, &m, 132, 1), whole);
    }

    /// Split counts that do not pay are not taken: 128×8192×8192 (128
    /// units of 128×64 on 132 SMs) has no room; 1×4096×4096 (64 units of
    /// 64 K blocks) would save 2.9 µs of DRAM time (14.6 → 11.7 µs) but
    /// pays 1.3 µs of transfers and the 3 µs hand-over: whole (measured
    /// in session 8: 2-way split 0–2 µs slower); 1×1024×4096 (16 units)
    /// splits 4 ways (64 workers; 5 and more would leave < 16 K blocks each
    /// at the same DRAM time, for more fixup); and a short K of 4 blocks
    /// (K = 256) gives no worker fewer than `MIN_SPLIT_K_BLOCKS`.
    #[test]
    fn split_k_only_where_slots_idle_by_hand() {
        let t = TileShape {
            bm: 128,
            bn: 64,
            bk: 64,
            cluster_m: 1,
            speed: 0.85,
        };
        let m = Machine::H100_BF16;
        let best = |mm, n, k| t.cost_best_split(&Problem::bf16(mm, n, k), &m, 132, 132);
        assert_eq!(best(128, 8192, 8192).splits, 1);
        assert_eq!(best(1, 4096, 4096).splits, 1);
        assert_eq!(best(1, 1024, 4096).splits, 4);
        assert_eq!(best(1, 1024, 256).splits, 1);
        // One wave per split count, the splits' units · splits ≤ slots.
        for splits in 1..=8 {
            let c = t.cost_split(&Problem::bf16(1, 1024, 4096), &m, 132, splits);
            assert_eq!((c.waves, c.splits), (1, splits));
        }
    }

    /// The L2 rate's three cases by hand (session 10, BENCHMARKS.md
    /// "Session 10 — mid"). 2048×5000×4096 (D rows of 10000 bytes) with
    /// ping-pong-like 128×128 tiles (speed 0.99, 0.5 K blocks per tile):
    /// 16 × 40 = 640 tiles, 5 waves on 132 SMs; math 5 · 2·128·128·64 ·
    /// 64.5 / 5.94e12 = 113.861 µs; L2 640 · 256 · 4096 · 2 =
    /// 1,342,177,280 B at 9.5e12 B/s = 141.28 µs (measured 142–143 µs;
    /// at 11.6e12 it was 115.7 µs and ping-pong was picked over 128×224
    /// pairs, measured 118 µs). 128×256 pairs on the same problem keep the
    /// aligned rate; at K = 2056 (rows of 4112 bytes) both take the
    /// unaligned one, and at K = 2064 (4128 bytes, 32-byte aligned) only
    /// the single-CTA tile is slowed.
    #[test]
    fn l2_rate_cases_by_hand() {
        let m = Machine::H100_BF16;
        let single = TileShape {
            bm: 128,
            bn: 128,
            bk: 64,
            cluster_m: 1,
            speed: 0.99,
        };
        let pair = TileShape {
            bn: 256,
            cluster_m: 2,
            speed: 1.02,
            ..single
        };
        let p = Problem::bf16(2048, 5000, 4096);
        let c = single.cost_with_overhead(&p, &m, 132, 0.5);
        assert_eq!((c.units, c.waves), (640, 5));
        assert!((c.math_us - 113.861).abs() < 0.001, "{c:?}");
        assert!(close(c.l2_us, 1_342_177_280.0 / 9.5e12 * 1e6), "{c:?}");
        assert_eq!(c.estimate_us(), c.l2_us);
        assert_eq!(l2_rate(&p, &m, 2), m.l2_bytes_per_s);
        let paired = pair.cost(&p, &m, 66);
        // 8 unit rows × 20 unit columns, 2 tiles of 128 + 128 rows each.
        assert!(
            close(paired.l2_us, 320.0 * 256.0 * 4096.0 * 2.0 / 11.6e12 * 1e6),
            "{paired:?}"
        );
        for cm in [1, 2] {
            assert_eq!(
                l2_rate(&Problem::bf16(4096, 4104, 2056), &m, cm),
                m.l2_unaligned_bytes_per_s
            );
            assert_eq!(
                l2_rate(&Problem::bf16(4096, 4096, 4096), &m, cm),
                m.l2_bytes_per_s
            );
        }
        let k2064 = Problem::bf16(4096, 4096, 2064);
        assert_eq!(l2_rate(&k2064, &m, 1), m.l2_line_split_bytes_per_s);
        assert_eq!(l2_rate(&k2064, &m, 2), m.l2_bytes_per_s);
        // FP8: no L2 floor in any case.
        assert_eq!(
            l2_rate(&Problem::fp8(2048, 5000, 4096), &Machine::H100_FP8, 1),
            f64::INFINITY
        );
    }

    /// The heuristic with the line-split rate (session 10's measurements,
    /// forced configurations): 2048×5000×4096 ping-pong 142 µs, 128×224
    /// pairs 118 µs; 4096×4104×2048 ping-pong 137 µs, 128×224 pairs 108
    /// µs; but 1024×5000×4096 ping-pong 68 µs, 128×224 pairs 80 µs (at 8.0
    /// TB/s the model moved this one too); aligned shapes keep their picks.
    /// Session 12: at 4096×4104×2048 the 256×128 pairs fill 4 waves exactly
    /// (16 × 33 tiles, 264 units on 66 slots) where 128×224 pairs need 5
    /// (304 units): measured 100.5 µs against 108 µs (same call; 256×128
    /// alone 103 µs). Session 17: 128×160 pairs, 32 columns of 160 at N =
    /// 5000, take both (measured 117 against 120 µs for 128×224 pairs, and
    /// 60 against 68 µs for ping-pong; H100, forced, same call).
    #[test]
    fn misaligned_rows_move_the_pick_off_single_cta_tiles() {
        use super::super::GemmConfig;
        let pick =
            |m, n, k| GemmConfig::plan_with_slots(m, n, k, |c: GemmConfig| 132 / c.cluster_m()).0;
        assert_eq!(pick(2048, 5000, 4096), GemmConfig::T128x160C2);
        assert_eq!(pick(1024, 5000, 4096), GemmConfig::T128x160C2);
        let settled = |m, n, k| {
            let c: Vec<_> = GemmConfig::CANDIDATES
                .into_iter()
                .filter(|c| !c.is_narrow_pair())
                .collect();
            GemmConfig::plan_among(&c, m, n, k, |c: GemmConfig| 132 / c.cluster_m()).0
        };
        assert_eq!(settled(2048, 5000, 4096), GemmConfig::T128x224C2);
        assert_eq!(settled(1024, 5000, 4096), GemmConfig::T128x128PingPong);
        assert_eq!(pick(4096, 4104, 2048), GemmConfig::T256x128C2);
        assert_eq!(pick(2048, 7168, 2048), GemmConfig::T128x128PingPong);
        assert_eq!(pick(2048, 8192, 1024), GemmConfig::T128x128PingPong);
        assert_eq!(pick(4096, 4096, 4096), GemmConfig::T128x256C2);
    }

    #[test]
    fn cheapest_takes_less_math_among_equals_and_none_when_empty() {
        let t = TileShape {
            bm: 128,
            bn: 128,
            bk: 64,
            cluster_m: 1,
            speed: 1.0,
        };
        let p = Problem::bf16(128, 128, 64);
        let cost = |_, s: &TileShape| s.cost(&p, &Machine::H100_BF16, 132);
        assert_eq!(cheapest(&[(1, t), (2, t)], cost).unwrap().0, 1);
        assert!(cheapest::<u8>(&[], cost).is_none());
        // 128×16384×1024: one wave either way, equally DRAM-bound (same
        // bytes, 128 CTAs busy); 128×128 has half the math of 128×256 in
        // pairs (whose second tile lies past M).
        let p = Problem::bf16(128, 16384, 1024);
        let (narrow, pair) = (
            t,
            TileShape {
                bn: 256,
                cluster_m: 2,
                speed: 1.02,
                ..t
            },
        );
        let slots = |id| if id == 2 { 66 } else { 132 };
        let cost = |id, s: &TileShape| s.cost(&p, &Machine::H100_BF16, slots(id));
        let (a, b) = (cost(1, &narrow), cost(2, &pair));
        assert_eq!(a.dram_us, b.dram_us, "{a:?} {b:?}");
        assert_eq!((a.estimate_us(), b.estimate_us()), (a.dram_us, b.dram_us));
        assert!(a.math_us < b.math_us, "{a:?} {b:?}");
        assert_eq!(cheapest(&[(2, pair), (1, narrow)], cost).unwrap().0, 1);
    }
}
