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
        }
    }
}

/// A GEMM call refused for a reason other than its shape: the wrong GPU,
/// operands that overlap, stream-K asked of a kernel without it.
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
}
