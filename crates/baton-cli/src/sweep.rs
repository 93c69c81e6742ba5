//! The shape sweep of `baton bench gemm --sweep` and `baton bench gemm-fp8
//! --sweep` (issue #18): every M of [`SWEEP_M`] crossed with the (N, K)
//! pairs of [`SWEEP_NK`] — square, wide, tall, short K, very long K and
//! dimensions that are multiples of 8 but of no tile size — bounded by a
//! memory budget, with fewer timed runs for big shapes.

use std::fmt;

/// The M values of the sweep.
pub const SWEEP_M: [usize; 13] = [
    1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536,
];

/// One (N, K) column of the sweep and the kind of shape it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NkPair {
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    /// What it covers.
    pub class: ShapeClass,
}

/// The kinds of shape the sweep covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeClass {
    /// N = K (square at M = N).
    Square,
    /// N much larger than K (and than M, for small M).
    Wide,
    /// N small: tall-skinny for large M.
    Tall,
    /// K ≤ 1024.
    ShortK,
    /// K ≥ 32768 with M·N ≤ 10⁶: few output tiles, split-K territory.
    LongK,
    /// N and K multiples of 8 but of no tile size (64, 128, 224, 256).
    Ragged,
}

impl ShapeClass {
    /// Its name in tables and charts.
    pub const fn name(self) -> &'static str {
        match self {
            ShapeClass::Square => "square",
            ShapeClass::Wide => "wide",
            ShapeClass::Tall => "tall",
            ShapeClass::ShortK => "short K",
            ShapeClass::LongK => "long K",
            ShapeClass::Ragged => "ragged",
        }
    }
}

/// The (N, K) pairs of the sweep.
pub const SWEEP_NK: [NkPair; 7] = [
    NkPair {
        n: 4096,
        k: 4096,
        class: ShapeClass::Square,
    },
    NkPair {
        n: 16384,
        k: 4096,
        class: ShapeClass::Wide,
    },
    NkPair {
        n: 1024,
        k: 4096,
        class: ShapeClass::Tall,
    },
    NkPair {
        n: 8192,
        k: 1024,
        class: ShapeClass::ShortK,
    },
    NkPair {
        n: 1024,
        k: 32768,
        class: ShapeClass::LongK,
    },
    NkPair {
        n: 4104,
        k: 2056,
        class: ShapeClass::Ragged,
    },
    NkPair {
        n: 5000,
        k: 4096,
        class: ShapeClass::Ragged,
    },
];

/// Largest M·N of the long-K class.
pub const LONG_K_MAX_OUTPUTS: usize = 1_000_000;

/// Default memory budget of one shape's device operands, GiB.
pub const DEFAULT_BUDGET_GIB: f64 = 4.0;

/// Which GEMM a sweep runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// BF16 vs cuBLAS.
    Bf16,
    /// Blockwise FP8 vs cuBLASLt blockwise.
    Fp8,
}

impl Family {
    /// Device bytes one input set of the benchmark allocates: A, B (and
    /// the FP8 scales), C and two outputs.
    ///
    /// ```
    /// use baton_cli::sweep::Family;
    /// assert_eq!(Family::Bf16.set_bytes(2, 8, 4), 2 * (8 + 32 + 3 * 16));
    /// ```
    pub const fn set_bytes(self, m: usize, n: usize, k: usize) -> u64 {
        let (m, n, k) = (m as u64, n as u64, k as u64);
        match self {
            Family::Bf16 => 2 * (m * k + n * k + 3 * m * n),
            // A, B, the scales, three bf16 outputs (ours, two cuBLASLt).
            Family::Fp8 => m * k + n * k + 4 * (m + n) * k.div_ceil(128) + 6 * m * n,
        }
    }

    /// The bytes the GEMM moves at the least: A, B and D once each.
    ///
    /// ```
    /// use baton_cli::sweep::Family;
    /// assert_eq!(Family::Fp8.min_bytes(1, 8, 128), 128 + 1024 + 4 + 4 + 16);
    /// ```
    pub const fn min_bytes(self, m: usize, n: usize, k: usize) -> u64 {
        let (m, n, k) = (m as u64, n as u64, k as u64);
        match self {
            Family::Bf16 => 2 * (m * k + n * k + m * n),
            Family::Fp8 => {
                m * k + n * k + 4 * m * (k / 128) + 4 * n.div_ceil(128) * (k / 128) + 2 * m * n
            }
        }
    }

    /// FLOP per byte above which the H100 is bound by math, not bytes: its
    /// measured GEMM rate over its copy bandwidth (BF16 ≈ 790 TFLOP/s, FP8
    /// ≈ 1180 TFLOP/s, 2.9 TB/s).
    pub const fn balance(self) -> f64 {
        match self {
            Family::Bf16 => 790e12 / 2.9e12,
            Family::Fp8 => 1180e12 / 2.9e12,
        }
    }

    /// Whether bytes bound (m, n, k): FLOP per [`min_bytes`](Self::min_bytes)
    /// below [`balance`](Self::balance).
    ///
    /// ```
    /// use baton_cli::sweep::Family;
    /// assert!(Family::Bf16.byte_bound(1, 4096, 4096));
    /// assert!(!Family::Bf16.byte_bound(4096, 4096, 4096));
    /// ```
    pub fn byte_bound(self, m: usize, n: usize, k: usize) -> bool {
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        flops / (self.min_bytes(m, n, k) as f64) < self.balance()
    }

    /// A rough time of one run (µs), to size the repetitions: the larger of
    /// the math at 70% of the measured rate and the bytes at the copy
    /// bandwidth, plus 5 µs.
    pub fn estimate_us(self, m: usize, n: usize, k: usize) -> f64 {
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        let rate = match self {
            Family::Bf16 => 790e12,
            Family::Fp8 => 1180e12,
        } * 0.7;
        (flops / rate).max(self.min_bytes(m, n, k) as f64 / 2.9e12) * 1e6 + 5.0
    }
}

/// Why a sweep shape is not timed.
#[derive(Clone, Debug, PartialEq)]
pub enum SkipReason {
    /// A long-K pair at an M where M·N exceeds [`LONG_K_MAX_OUTPUTS`].
    NotLongKClass {
        /// M·N.
        outputs: usize,
    },
    /// One input set would exceed the memory budget.
    OverBudget {
        /// Bytes of one set.
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// Ours or the reference cannot run this shape.
    KernelRule {
        /// The rule, in words.
        rule: &'static str,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        match self {
            SkipReason::NotLongKClass { outputs } => write!(
                f,
                "the long-K class has M·N ≤ {LONG_K_MAX_OUTPUTS} (here {outputs})"
            ),
            SkipReason::OverBudget { bytes, budget } => write!(
                f,
                "one input set is {:.1} GiB, over the {:.1} GiB budget (--max-gib)",
                gib(*bytes),
                gib(*budget)
            ),
            SkipReason::KernelRule { rule } => f.write_str(rule),
        }
    }
}

/// The FP8 rules a sweep shape can break: ours needs K a multiple of 128
/// and N of 8; cuBLASLt's blockwise mode M a multiple of 4 (and has no
/// algorithm below M = 8) and K/128 a multiple of 4.
fn fp8_rule(m: usize, n: usize, k: usize) -> Option<&'static str> {
    if !k.is_multiple_of(128) {
        Some("FP8: K must be a multiple of 128 (one scale per 128 of K)")
    } else if !n.is_multiple_of(8) {
        Some("FP8: N must be a multiple of 8 (16-byte rows of D)")
    } else if !m.is_multiple_of(4) || m < 8 {
        Some("cuBLASLt blockwise FP8 needs M a multiple of 4, at least 8")
    } else if !(k / 128).is_multiple_of(4) {
        Some("cuBLASLt blockwise FP8 needs K/128 a multiple of 4")
    } else {
        None
    }
}

/// One shape of a sweep and whether it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepShape {
    /// (M, N, K).
    pub mnk: (usize, usize, usize),
    /// The (N, K) pair's index in [`SWEEP_NK`].
    pub column: usize,
    /// M's index in [`SWEEP_M`].
    pub row: usize,
    /// `None`: timed; else why not.
    pub skip: Option<SkipReason>,
    /// Timed runs per side.
    pub reps: usize,
}

/// Timed runs for a shape: enough for ≈ 50 ms of our runs, between 5 and
/// `max_reps`.
///
/// ```
/// use baton_cli::sweep::{Family, reps_for};
/// assert_eq!(reps_for(Family::Bf16, 8192, 8192, 8192, 21), 21);
/// assert!(reps_for(Family::Bf16, 65536, 16384, 4096, 21) < 21);
/// ```
pub fn reps_for(family: Family, m: usize, n: usize, k: usize, max_reps: usize) -> usize {
    let runs = (50_000.0 / family.estimate_us(m, n, k)).floor() as usize;
    runs.clamp(5.min(max_reps), max_reps.max(1))
}

/// The sweep's shapes, row (M) major, each with its skip reason or reps.
///
/// ```
/// use baton_cli::sweep::{Family, plan, SWEEP_M, SWEEP_NK};
/// let shapes = plan(Family::Bf16, 4 << 30, 21);
/// assert_eq!(shapes.len(), SWEEP_M.len() * SWEEP_NK.len());
/// ```
pub fn plan(family: Family, budget_bytes: u64, max_reps: usize) -> Vec<SweepShape> {
    let mut out = Vec::new();
    for (row, &m) in SWEEP_M.iter().enumerate() {
        for (column, pair) in SWEEP_NK.iter().enumerate() {
            let (n, k) = (pair.n, pair.k);
            let bytes = family.set_bytes(m, n, k);
            let skip = if pair.class == ShapeClass::LongK && m * n > LONG_K_MAX_OUTPUTS {
                Some(SkipReason::NotLongKClass { outputs: m * n })
            } else if let Some(rule) = (family == Family::Fp8).then(|| fp8_rule(m, n, k)).flatten()
            {
                Some(SkipReason::KernelRule { rule })
            } else if bytes > budget_bytes {
                Some(SkipReason::OverBudget {
                    bytes,
                    budget: budget_bytes,
                })
            } else {
                None
            };
            out.push(SweepShape {
                mnk: (m, n, k),
                column,
                row,
                skip,
                reps: reps_for(family, m, n, k, max_reps),
            });
        }
    }
    out
}

/// The heatmap's column label of a pair: `N×K`, then its class on a
/// second line.
///
/// ```
/// assert_eq!(baton_cli::sweep::column_label(&baton_cli::sweep::SWEEP_NK[0]), "4096×4096\nsquare");
/// ```
pub fn column_label(p: &NkPair) -> String {
    format!("{}×{}\n{}", p.n, p.k, p.class.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_grid_covers_every_class_and_untiled_dimensions() {
        for class in [
            ShapeClass::Square,
            ShapeClass::Wide,
            ShapeClass::Tall,
            ShapeClass::ShortK,
            ShapeClass::LongK,
            ShapeClass::Ragged,
        ] {
            assert!(SWEEP_NK.iter().any(|p| p.class == class), "{class:?}");
        }
        for p in SWEEP_NK {
            assert!(p.n.is_multiple_of(8) && p.k.is_multiple_of(8), "{p:?}");
            if p.class == ShapeClass::ShortK {
                assert!(p.k <= 1024);
            }
            if p.class == ShapeClass::LongK {
                assert!(p.k >= 32768);
            }
            if p.class == ShapeClass::Ragged {
                for tile in [64, 128, 224, 256] {
                    assert!(!p.n.is_multiple_of(tile), "{p:?} N tiles by {tile}");
                }
            }
        }
        // At least one ragged pair FP8 can run (K a multiple of 512).
        assert!(
            SWEEP_NK
                .iter()
                .any(|p| p.class == ShapeClass::Ragged && p.k.is_multiple_of(512))
        );
    }

    #[test]
    fn skips_say_why_by_hand() {
        let shapes = plan(Family::Bf16, 4 * GIB, 21);
        let at = |m, n, k| shapes.iter().find(|s| s.mnk == (m, n, k)).unwrap();
        // Long K: M·N = 1024·1024 > 10⁶; 512·1024 = 524,288 runs.
        assert_eq!(
            at(1024, 1024, 32768).skip,
            Some(SkipReason::NotLongKClass { outputs: 1_048_576 })
        );
        assert_eq!(at(512, 1024, 32768).skip, None);
        // 65536×16384×4096: 2·(65536·4096 + 16384·4096 + 3·65536·16384)
        // = 7,113,539,584 bytes > 4 GiB.
        assert_eq!(
            at(65536, 16384, 4096).skip,
            Some(SkipReason::OverBudget {
                bytes: 7_113_539_584,
                budget: 4 * GIB
            })
        );
        assert!(
            at(65536, 16384, 4096)
                .skip
                .as_ref()
                .unwrap()
                .to_string()
                .contains("6.6 GiB, over the 4.0 GiB")
        );
        // 65536×4096×4096: 2·(2^28 + 2^24 + 3·2^28) = 2,181,038,080 fits.
        assert_eq!(at(65536, 4096, 4096).skip, None);
        let fp8 = plan(Family::Fp8, 4 * GIB, 21);
        let at8 = |m, n, k| fp8.iter().find(|s| s.mnk == (m, n, k)).unwrap();
        assert!(matches!(
            at8(1, 4096, 4096).skip,
            Some(SkipReason::KernelRule { .. })
        ));
        assert!(
            at8(64, 4104, 2056)
                .skip
                .as_ref()
                .unwrap()
                .to_string()
                .contains("multiple of 128")
        );
        assert_eq!(at8(8, 5000, 4096).skip, None);
    }

    #[test]
    fn reps_shrink_with_work_within_bounds() {
        // 8192³ BF16: 1.1e12 FLOP at 553 TFLOP/s = 1988 µs + 5: 25 runs
        // fit in 50 ms: capped at 21.
        assert_eq!(reps_for(Family::Bf16, 8192, 8192, 8192, 21), 21);
        // 16384×16384×4096: 2.2e12 FLOP: 3982 µs: 12 runs.
        assert_eq!(reps_for(Family::Bf16, 16384, 16384, 4096, 21), 12);
        // Tiny shapes: capped at the maximum; the floor is 5.
        assert_eq!(reps_for(Family::Bf16, 1, 1024, 4096, 21), 21);
        assert_eq!(reps_for(Family::Bf16, 65536, 16384, 16384, 21), 5);
        assert_eq!(reps_for(Family::Bf16, 8, 8, 8, 3), 3);
    }

    #[test]
    fn byte_bound_by_intensity() {
        // M = 64, N = K = 4096: 2·64·4096² FLOP over 2·(64·4096 + 4096² +
        // 64·4096) B = 2,147,483,648 / 34,603,008 = 62 FLOP/B < 272.
        assert!(Family::Bf16.byte_bound(64, 4096, 4096));
        // M = 1024: 34.4e9 / 50,331,648 = 683 FLOP/B.
        assert!(!Family::Bf16.byte_bound(1024, 4096, 4096));
    }
}
