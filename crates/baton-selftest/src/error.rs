//! The self-tests' typed errors: the runtime's, plus a GPU result that is
//! wrong and a self-test asked of a shape it cannot run.

use baton_runtime::cudarc::driver::DriverError;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a self-test did not produce a passing result.
///
/// ```
/// use baton_selftest::{Error, TileCopyRule};
/// let e = Error::TileCopyShape { kernel: "baton_tile_copy_bf16", rows: 0, cols: 8, rule: TileCopyRule::Empty };
/// assert!(e.to_string().contains("0x8") && e.to_string().contains("empty"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime refused or failed (GPU, PTX, launch).
    #[error(transparent)]
    Runtime(#[from] baton_runtime::Error),
    /// Results a kernel wrote differ from what the host expects.
    #[error(
        "{check}: {wrong} of {total} {unit} wrong{}",
        first.map(|(r, c)| format!(" (first at row {r}, column {c})")).unwrap_or_default()
    )]
    Mismatch {
        /// What was checked (a kernel name, `memcpy_dtod`, ...).
        check: &'static str,
        /// How many results differ.
        wrong: usize,
        /// How many were checked.
        total: usize,
        /// What a result is (`consumer sums`, `elements`).
        unit: &'static str,
        /// Row and column of the first wrong element, for a matrix.
        first: Option<(usize, usize)>,
    },
    /// A tile copy of a matrix the kernel cannot copy.
    #[error("tile copy of a {rows}x{cols} matrix with `{kernel}`: {rule}")]
    TileCopyShape {
        /// The kernel.
        kernel: &'static str,
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
        /// The rule broken.
        rule: TileCopyRule,
    },
}

/// What a tile copy's shape must satisfy.
///
/// ```
/// let rule = baton_selftest::TileCopyRule::BufferTooSmall { needed: 64, src: 32, dst: 64 };
/// assert!(rule.to_string().contains("source has 32"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TileCopyRule {
    /// Rows and columns must both be at least 1.
    #[error("the matrix is empty; rows and columns must be at least 1")]
    Empty,
    /// rows · cols must fit in `usize` and the tile count in `u32`.
    #[error("too large: rows·cols must fit in usize and the 64x64 tile count below 2^32")]
    TooLarge,
    /// Each buffer must hold rows · cols elements.
    #[error("needs {needed} elements in each buffer; the source has {src}, the destination {dst}")]
    BufferTooSmall {
        /// rows · cols.
        needed: usize,
        /// Source elements.
        src: usize,
        /// Destination elements.
        dst: usize,
    },
}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::Runtime(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_check_and_the_counts() {
        let e = Error::Mismatch {
            check: "baton_tile_copy_bf16",
            wrong: 3,
            total: 4096,
            unit: "elements",
            first: Some((1, 2)),
        }
        .to_string();
        assert!(
            e.contains("baton_tile_copy_bf16")
                && e.contains("3 of 4096")
                && e.contains("row 1, column 2"),
            "{e}"
        );
        let e = Error::TileCopyShape {
            kernel: "k",
            rows: 10,
            cols: 20,
            rule: TileCopyRule::BufferTooSmall {
                needed: 200,
                src: 100,
                dst: 200,
            },
        }
        .to_string();
        assert!(
            e.contains("10x20") && e.contains("200") && e.contains("100"),
            "{e}"
        );
    }
}
