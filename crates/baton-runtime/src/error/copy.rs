//! Why a pitched copy ([`PitchedCopy`](crate::pitched_copy::PitchedCopy))
//! was refused before launch.

/// A pitched copy refused before anything was enqueued: the rule broken.
///
/// ```
/// use baton_runtime::pitched_copy::{PitchedCopy, PitchedCopyError};
/// let c = PitchedCopy { dst: 1 << 20, dst_pitch: 64, src: 1 << 30, src_pitch: 100, row_bytes: 100, rows: 4 };
/// assert!(matches!(c.params(), Err(PitchedCopyError::DstPitchTooSmall { dst_pitch: 64, row_bytes: 100 })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PitchedCopyError {
    /// Destination rows closer together than one row: they would overlap.
    #[error(
        "destination pitch {dst_pitch} bytes is less than a row ({row_bytes} bytes); rows would overlap"
    )]
    DstPitchTooSmall {
        /// The destination pitch, bytes.
        dst_pitch: u64,
        /// Bytes per row.
        row_bytes: u64,
    },
    /// More rows, or longer rows, than one launch copies.
    #[error("{what} is {value}; one pitched copy handles at most {max}")]
    TooLarge {
        /// `rows` or `row_bytes`.
        what: &'static str,
        /// The value asked for.
        value: u64,
        /// The limit (`baton_kernels_abi::pitched_copy::{MAX_ROWS, MAX_ROW_BYTES}`).
        max: u64,
    },
    /// The destination rows' span overlaps the source rows' span (the
    /// kernel reads its source through the non-coherent cache, so nothing
    /// it writes may be read).
    #[error(
        "destination bytes [{dst:#x}, +{dst_span}) overlap source bytes [{src:#x}, +{src_span}); \
         copy into a separate buffer"
    )]
    Overlap {
        /// Destination address.
        dst: u64,
        /// Bytes from the first destination row's start to the last's end.
        dst_span: u64,
        /// Source address.
        src: u64,
        /// Bytes from the first source row's start to the last's end.
        src_span: u64,
    },
}
