//! Which GEMM configuration to run, and whether stream-K pays: the
//! heuristics of the BF16 GEMM, from measured per-tile speeds
//! (BENCHMARKS.md). (The FP8 kernel choice is [`fp8::choose`](super::fp8::choose).)

use super::GemmConfig;
use crate::Target;

impl GemmConfig {
    /// Picks a configuration for an M×N problem on `sms` SMs: the one with
    /// the least estimated time, counting whole waves of tiles (a partial
    /// wave costs a full one) weighted by each configuration's measured
    /// per-FLOP speed relative to 128×256 (H100, 8192³, BENCHMARKS.md):
    /// 128×256 in 2-CTA clusters 1.02, 128×128 0.93, 128×128 in clusters
    /// 0.85, 128×64 0.85.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::choose(8192, 8192, 132), GemmConfig::T128x256C2);
    /// assert_eq!(GemmConfig::choose(128, 8192, 132), GemmConfig::T128x64);
    /// ```
    pub fn choose(m: usize, n: usize, sms: u32) -> GemmConfig {
        Self::choose_with_slots(m, n, |c| sms / c.cluster_m())
    }

    /// The configuration for an M×N problem on a GPU of `target`: the
    /// Hopper heuristic ([`choose_with_slots`](Self::choose_with_slots)), or
    /// Blackwell's one configuration.
    pub fn choose_for(
        target: Target,
        m: usize,
        n: usize,
        slots_of: impl Fn(GemmConfig) -> u32,
    ) -> GemmConfig {
        match target {
            Target::Sm90a => Self::choose_with_slots(m, n, slots_of),
            Target::Sm100a => GemmConfig::Sm100T128x256,
        }
    }

    /// [`choose`](Self::choose) with the number of work units (CTAs, or
    /// clusters) each configuration can keep resident at once, as the driver
    /// reports it (`Kernel::max_active_clusters`).
    pub fn choose_with_slots(
        m: usize,
        n: usize,
        slots_of: impl Fn(GemmConfig) -> u32,
    ) -> GemmConfig {
        let cost = |c: GemmConfig| {
            let (bm, bn, _) = c.tile();
            let cm = c.cluster_m() as usize;
            // Work units are clusters of `cm` vertically adjacent tiles.
            let units = m.div_ceil(bm as usize).div_ceil(cm) * n.div_ceil(bn as usize);
            let slots = (slots_of(c) as usize).max(1);
            let waves = units.div_ceil(slots) as f64;
            let per_tile = bn as f64
                / match c {
                    GemmConfig::T128x256C2 => 1.02,
                    GemmConfig::T128x224C2 => 1.0,
                    GemmConfig::T128x256 => 1.0,
                    GemmConfig::T128x128C2 => 0.85,
                    GemmConfig::T128x128 => 0.93,
                    GemmConfig::T128x64 => 0.85,
                    GemmConfig::Sm100T128x256 => 1.0,
                };
            // (A cluster whose second tile lies past M counts as a full unit.)
            waves * per_tile
        };
        GemmConfig::ALL
            .into_iter()
            .min_by(|a, b| cost(*a).total_cmp(&cost(*b)))
            .unwrap_or(GemmConfig::T128x256)
    }
}

/// Whether [`GemmPlan::new`](super::GemmPlan::new) turns stream-K on (segments of at least
/// [`STREAM_K_MIN_SEGMENT`] K blocks, only the last wave's units split):
/// when the last wave is partial and there are at least
/// [`STREAM_K_MIN_WAVES`] waves. Measured on the H100 (BENCHMARKS.md):
/// splitting only the last wave gained 1–1.5% at 8192³ and 16384³ and 2%
/// at 8192³ with beta 0.5, and lost 2–12% where the stream-K part is a
/// large share of the work (4096³ and 2048×7168×2048 at 3.9 waves,
/// 128×8192×8192 at under one) — staggered K ranges lose L2 sharing.
///
/// ```
/// use baton_runtime::gemm::stream_k_pays;
/// assert!(stream_k_pays(1024, 66)); // 8192³, 128×256 in pairs: 15.5 waves
/// assert!(!stream_k_pays(256, 66)); // 4096³: 3.9 waves
/// assert!(!stream_k_pays(1056, 66)); // 16 whole waves: nothing to split
/// ```
pub fn stream_k_pays(units: u32, slots: u32) -> bool {
    slots > 0 && !units.is_multiple_of(slots) && units / slots >= STREAM_K_MIN_WAVES
}

/// Full waves below which [`GemmPlan::new`](super::GemmPlan::new) leaves stream-K off.
pub const STREAM_K_MIN_WAVES: u32 = 8;
/// Minimum stream-K segment (K blocks of 64) [`GemmPlan::new`](super::GemmPlan::new) uses.
pub const STREAM_K_MIN_SEGMENT: u32 = 8;
