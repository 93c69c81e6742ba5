//! The GEMMs' typed errors: each names the rule that was broken and what is
//! allowed. A leaf module (it depends only on [`Target`]), so that
//! [`Error`](crate::Error) can wrap these without `error` and `gemm`
//! importing each other.

use crate::target::Target;

/// Why a GEMM call was refused before launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GemmShapeError {
    /// M, N or K is zero.
    EmptyDimension {
        /// (M, N, K) as given.
        mnk: (usize, usize, usize),
    },
    /// A row of some operand is not a multiple of 16 bytes (TMA needs
    /// 16-byte aligned row strides): K and N must be multiples of 8.
    RowNotAligned {
        /// Which dimension.
        dim: &'static str,
        /// Its value.
        value: usize,
    },
    /// A buffer does not hold the elements the shape needs.
    WrongLength {
        /// Which operand.
        operand: &'static str,
        /// Elements needed.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A dimension exceeds what the kernel indexes (2^31 - 1 rows/columns).
    TooLarge {
        /// (M, N, K) as given.
        mnk: (usize, usize, usize),
    },
    /// M·N (the output's elements) exceeds what the kernel indexes
    /// (2^32 - 1).
    OutputTooLarge {
        /// M as given.
        m: usize,
        /// N as given.
        n: usize,
    },
    /// beta ≠ 0 but no C was given (or the plan was made without C).
    MissingC,
}

impl std::error::Error for GemmShapeError {}

impl std::fmt::Display for GemmShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EmptyDimension { mnk } => write!(
                f,
                "GEMM shape {mnk:?} (M, N, K) has a zero dimension; each must be at least 1"
            ),
            Self::RowNotAligned { dim, value } => write!(
                f,
                "{dim} = {value} makes a bf16 row {} bytes long; TMA needs rows that are a multiple of 16 bytes, so {dim} must be a multiple of 8",
                2 * value
            ),
            Self::WrongLength {
                operand,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{operand} holds {got} elements but the shape needs exactly {expected}"
                )
            }
            Self::TooLarge { mnk } => write!(
                f,
                "GEMM shape {mnk:?} too large: M, N and K must be below 2^31"
            ),
            Self::OutputTooLarge { m, n } => {
                write!(f, "GEMM output {m}x{n} too large: M·N must be below 2^32")
            }
            Self::MissingC => write!(f, "beta != 0 needs a C operand (pass Some(c) or beta = 0)"),
        }
    }
}

/// Why an FP8 GEMM call was refused before launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fp8ShapeError {
    /// M, N or K is zero.
    EmptyDimension {
        /// (M, N, K) as given.
        mnk: (usize, usize, usize),
    },
    /// K is not a multiple of the 128-wide scale block.
    KNotMultipleOf128 {
        /// K as given.
        k: usize,
    },
    /// A row of D (N bf16) is not a multiple of 16 bytes, which TMA needs.
    RowNotAligned {
        /// N as given.
        n: usize,
    },
    /// A buffer does not hold the elements the shape needs.
    WrongLength {
        /// Which operand (`A`, `B`, `A scales`, `B scales`, `D`).
        operand: &'static str,
        /// Elements needed.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A dimension, or the A-scale count, exceeds what the kernel indexes.
    TooLarge {
        /// (M, N, K) as given.
        mnk: (usize, usize, usize),
    },
    /// The A scales' row stride is shorter than their M columns.
    ScaleStrideTooSmall {
        /// The row stride given, in floats.
        ld: usize,
        /// M.
        m: usize,
    },
    /// Strided A scales end before their last row does.
    ScalesTooShort {
        /// Floats the rows span: `(K/128 − 1) · ld + M`.
        needed: usize,
        /// Floats given.
        got: usize,
        /// The row stride, in floats.
        ld: usize,
    },
}

impl std::error::Error for Fp8ShapeError {}

impl std::fmt::Display for Fp8ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EmptyDimension { mnk } => write!(
                f,
                "FP8 GEMM shape {mnk:?} (M, N, K) has a zero dimension; each must be at least 1"
            ),
            Self::KNotMultipleOf128 { k } => write!(
                f,
                "K = {k}: blockwise FP8 scales cover 128 elements of K, so K must be a multiple of 128"
            ),
            Self::RowNotAligned { n } => write!(
                f,
                "N = {n} makes a bf16 row of D {} bytes long; TMA needs rows that are a multiple of 16 bytes, so N must be a multiple of 8",
                2 * n
            ),
            Self::WrongLength {
                operand,
                expected,
                got,
            } => write!(
                f,
                "{operand} holds {got} elements but the shape needs exactly {expected}"
            ),
            Self::TooLarge { mnk } => write!(
                f,
                "FP8 GEMM shape {mnk:?} too large: M, N, K and M·K/128 must be below 2^31"
            ),
            Self::ScaleStrideTooSmall { ld, m } => write!(
                f,
                "A scales: row stride {ld} floats is less than M = {m}; each K block's row of M scales must not overlap the next (ld >= M)"
            ),
            Self::ScalesTooShort { needed, got, ld } => write!(
                f,
                "A scales hold {got} floats but K/128 rows {ld} apart of M scales span {needed}; allowed: at least (K/128 - 1) * ld + M floats"
            ),
        }
    }
}

/// A GEMM call refused for a reason other than its shape: the wrong GPU,
/// operands that overlap, stream-K asked of a kernel without it.
///
/// ```
/// use baton_runtime::{Error, Target, gemm::GemmError};
/// let e = Error::from(GemmError::WrongTarget {
///     kernel: "baton_gemm_bf16_128x256".into(),
///     runs_on: Target::Sm90a,
///     gpu: Target::Sm100a,
/// });
/// assert!(matches!(e, Error::Gemm(GemmError::WrongTarget { .. })));
/// assert!(e.to_string().contains("runs on sm_90a"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// The kernel (or configuration) is built for another GPU target.
    #[error("{kernel} runs on {runs_on}; this GPU is {gpu}")]
    WrongTarget {
        /// The kernel or configuration asked for.
        kernel: String,
        /// The target it is built for.
        runs_on: Target,
        /// This GPU's target.
        gpu: Target,
    },
    /// D overlaps an operand the kernel reads while it writes D.
    #[error("D overlaps an input; the kernel reads {inputs} while it writes D, so D must not overlap them{alias}",
        alias = if *.may_alias_c { " (D may alias C)" } else { "" })]
    OutputOverlapsInput {
        /// The operands D must not overlap (e.g. `A and B`).
        inputs: &'static str,
        /// Whether D may be C itself (in-place residual).
        may_alias_c: bool,
    },
    /// The name is not a kernel of this GEMM family.
    #[error("{kernel} is not a {family} kernel; the kernels are {allowed:?}")]
    NotAKernelOf {
        /// The name asked for.
        kernel: String,
        /// The family (`FP8 GEMM`).
        family: &'static str,
        /// Its kernels.
        allowed: &'static [&'static str],
    },
    /// Stream-K asked of a kernel that does not implement it.
    #[error("{kernel} has no stream-K: {rule}")]
    NoStreamK {
        /// The kernel or configuration.
        kernel: String,
        /// Which kernels have stream-K.
        rule: &'static str,
    },
    /// Stream-K's minimum segment is zero (use `None` to turn stream-K off).
    #[error("stream-K min_segment must be at least 1 K block (None turns stream-K off)")]
    StreamKSegmentZero,
    /// A stream-K launch on a plan whose stream-K is off.
    #[error("stream-K is off: set_stream_k(Some(min_segment)) first")]
    StreamKOff,
    /// A stream-K plan run while its stream captures a CUDA graph: each
    /// launch needs a new epoch for its fixup flags, which a replay would
    /// repeat.
    #[error(
        "stream-K launches cannot be captured in a CUDA graph (each needs a new fixup epoch, a replay \
         would repeat it): turn stream-K off on the plan (set_stream_k(gpu, None)) before capturing"
    )]
    StreamKInGraph,
    /// An FP8 plan whose A scales TMA cannot read in place (a start that
    /// is not 16-byte aligned; any row stride is read in place) made while
    /// its stream captures a CUDA graph: the plan would allocate its
    /// padded copy inside the capture.
    #[error(
        "the A scales start at {address:#x} (rows {ld} floats apart), not 16-byte aligned: they need the plan's padded copy, which cannot be allocated while the stream captures a CUDA graph; allowed: make the plan before capturing, or pass A scales that start on a 16-byte boundary (any row stride is read in place)"
    )]
    AScalesCopyInGraph {
        /// The A scales' device address.
        address: u64,
        /// Their row stride, in floats.
        ld: u64,
    },
    /// A split-K count the problem cannot run with: every worker of a
    /// split must be resident at once (a finalizer waits for its
    /// contributors) and get at least one K block.
    #[error(
        "split-K of {splits} not allowed: splits must be 1..={max} (units · splits ≤ {slots} resident workers with {units} work units, splits ≤ {k_blocks} K blocks)"
    )]
    SplitKCount {
        /// The split count asked for.
        splits: u32,
        /// Work units (clusters of tiles) of the problem.
        units: u32,
        /// Workers resident at once.
        slots: u32,
        /// K blocks of a unit.
        k_blocks: u32,
        /// The largest split allowed: `min(slots / units, k_blocks)`.
        max: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_errors_name_the_rule_and_the_values() {
        let e = GemmError::WrongTarget {
            kernel: "baton_gemm_bf16_128x256".into(),
            runs_on: Target::Sm90a,
            gpu: Target::Sm100a,
        }
        .to_string();
        assert!(
            e.contains("baton_gemm_bf16_128x256") && e.contains("sm_90a") && e.contains("sm_100a"),
            "{e}"
        );
        let e = GemmError::OutputOverlapsInput {
            inputs: "A and B",
            may_alias_c: true,
        }
        .to_string();
        assert!(e.contains("A and B") && e.contains("may alias C"), "{e}");
        let e = GemmError::OutputOverlapsInput {
            inputs: "A, B and the scales",
            may_alias_c: false,
        }
        .to_string();
        assert!(e.contains("the scales") && !e.contains("alias"), "{e}");
        let e = GemmError::NotAKernelOf {
            kernel: "nope".into(),
            family: "blockwise FP8 GEMM",
            allowed: &["k1", "k2"],
        }
        .to_string();
        assert!(
            e.contains("nope") && e.contains("k1") && e.contains("k2"),
            "{e}"
        );
        let e = GemmError::NoStreamK {
            kernel: "k".into(),
            rule: "only one-wave tiles",
        }
        .to_string();
        assert!(e.contains("no stream-K") && e.contains("one-wave"), "{e}");
        assert!(
            GemmError::StreamKSegmentZero
                .to_string()
                .contains("at least 1")
        );
        assert!(GemmError::StreamKOff.to_string().contains("set_stream_k"));
        let e = GemmError::StreamKInGraph.to_string();
        assert!(
            e.contains("CUDA graph") && e.contains("set_stream_k(gpu, None)"),
            "{e}"
        );
        let e = GemmError::SplitKCount {
            splits: 9,
            units: 16,
            slots: 132,
            k_blocks: 512,
            max: 8,
        }
        .to_string();
        assert!(
            e.contains("split-K of 9") && e.contains("1..=8") && e.contains("132 resident"),
            "{e}"
        );
    }

    #[test]
    fn shape_errors_name_the_rule_and_the_values() {
        let e = GemmShapeError::OutputTooLarge {
            m: 1 << 20,
            n: 1 << 13,
        }
        .to_string();
        assert!(e.contains("1048576x8192") && e.contains("2^32"), "{e}");
        let e = GemmShapeError::MissingC.to_string();
        assert!(e.contains("beta") && e.contains("C"), "{e}");
        let e = Fp8ShapeError::TooLarge {
            mnk: (1 << 31, 8, 128),
        }
        .to_string();
        assert!(e.contains("2^31"), "{e}");
    }
}
