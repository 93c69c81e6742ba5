//! The reference crate's typed errors: the runtime's, plus what a reference
//! library (cuBLAS, cuBLASLt) can refuse or get wrong.

use baton_runtime::cudarc::driver::DriverError;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a check or benchmark could not produce its result.
///
/// ```
/// use baton_reference::Error;
/// let e = Error::LtBlockwiseShape { m: 6, k: 256 };
/// assert!(e.to_string().contains("multiples of 4"));
/// // The runtime's errors come through unchanged:
/// let r = Error::from(baton_runtime::gemm::GemmShapeError::MissingC);
/// assert!(matches!(r, Error::Runtime(baton_runtime::Error::GemmShape(_))));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime refused or failed (GPU, PTX, launch, GEMM validation).
    #[error(transparent)]
    Runtime(#[from] baton_runtime::Error),
    /// A cuBLAS call returned an error status.
    #[cfg(feature = "cublas")]
    #[error("cuBLAS {call} failed: {status:?}")]
    Cublas {
        /// The cuBLAS function.
        call: &'static str,
        /// Its status.
        status: cudarc::cublas::result::CublasError,
    },
    /// A cuBLASLt call returned an error status.
    #[cfg(feature = "cublas")]
    #[error("cuBLASLt {call} failed: {status:?}")]
    CublasLt {
        /// What was being done (`create`, `matmul desc`, `heuristic`, ...).
        call: &'static str,
        /// Its status.
        status: cudarc::cublaslt::result::CublasError,
    },
    /// cuBLASLt's heuristic found no algorithm for this GEMM and shape.
    #[cfg(feature = "cublas")]
    #[error("cuBLASLt has no {gemm} algorithm for {m}x{n}x{k}: {status:?}", m = mnk.0, n = mnk.1, k = mnk.2)]
    CublasLtNoAlgorithm {
        /// The GEMM (`mxfp8`, `blockwise FP8`, ...).
        gemm: &'static str,
        /// (M, N, K).
        mnk: (usize, usize, usize),
        /// cuBLASLt's status.
        status: cudarc::cublaslt::result::CublasError,
    },
    /// A shape cuBLASLt's block-scaled GEMM cannot run.
    #[error(
        "{format} {m}x{n}x{k}: the cuBLASLt reference needs M, N, K positive, N a multiple of 8 \
         and K a multiple of {k_multiple} (whole 128x4 scale tiles)",
        m = mnk.0, n = mnk.1, k = mnk.2
    )]
    LtBlockScaledShape {
        /// The format (`mxfp8`, `nvfp4`).
        format: &'static str,
        /// (M, N, K) as given.
        mnk: (usize, usize, usize),
        /// What K must be a multiple of (`4 · VEC`).
        k_multiple: usize,
    },
    /// A shape cuBLASLt's blockwise FP8 GEMM cannot run.
    #[error("the cuBLASLt blockwise reference needs M and K/128 multiples of 4 (M = {m}, K = {k})")]
    LtBlockwiseShape {
        /// M as given.
        m: usize,
        /// K as given.
        k: usize,
    },
    /// The reference library's own result has a NaN or an infinity: the
    /// reference is unusable, whatever ours computed.
    #[error("{reference}'s {gemm} result has a non-finite value: D[{row}][{col}] = {value}")]
    NonFiniteReference {
        /// Which reference library (`cuBLASLt`).
        reference: &'static str,
        /// Which GEMM (`mxfp8`, `blockwise FP8`, ...).
        gemm: &'static str,
        /// Row of the first non-finite element.
        row: usize,
        /// Its column.
        col: usize,
        /// Its value.
        value: f64,
    },
    /// The loaded kernels carry no timeline trace (`baton bench
    /// trace-gemm` needs a module built with `BATON_TRACE=1`).
    #[error(
        "the loaded kernels carry no trace: build the CLI with BATON_TRACE=1 in its own target \
         directory (BATON_TRACE=1 CARGO_TARGET_DIR=target/trace cargo build --release -p baton-cli)"
    )]
    NotTraced,
}

/// Errors the runtime wraps, taken through it (so they read as the
/// runtime's own).
macro_rules! through_runtime {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::Runtime(e.into())
            }
        }
    )*};
}

through_runtime!(
    DriverError,
    baton_runtime::gemm::GemmShapeError,
    baton_runtime::gemm::Fp8ShapeError,
    baton_runtime::gemm::GemmError,
    baton_runtime::block_scaled::BlockScaledError
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_rule_and_the_values() {
        let e = Error::LtBlockScaledShape {
            format: "nvfp4",
            mnk: (256, 256, 96),
            k_multiple: 64,
        }
        .to_string();
        assert!(
            e.contains("256x256x96") && e.contains("multiple of 64"),
            "{e}"
        );
        let e = Error::LtBlockwiseShape { m: 6, k: 256 }.to_string();
        assert!(e.contains("M = 6") && e.contains("K = 256"), "{e}");
        let e = Error::NonFiniteReference {
            reference: "cuBLASLt",
            gemm: "blockwise FP8",
            row: 3,
            col: 4,
            value: f64::NAN,
        }
        .to_string();
        assert!(e.contains("D[3][4]") && e.contains("NaN"), "{e}");
        assert!(Error::NotTraced.to_string().contains("BATON_TRACE=1"));
    }

    #[test]
    fn runtime_errors_pass_through_unchanged() {
        let inner = baton_runtime::Error::from(baton_runtime::gemm::GemmShapeError::MissingC);
        let shown = inner.to_string();
        assert_eq!(Error::from(inner).to_string(), shown);
    }
}
