//! Tensor-memory addresses, on every target: the Blackwell backend
//! (`arch::sm100`, nvptx only) and the CPU simulation of TMEM both use
//! [`TmemAddr`], and so does the arch-independent protocol code that hands
//! TMEM accumulator stages from the MMA warp to the epilogue.
//!
//! ```
//! use baton::arch::tmem_addr::TmemAddr;
//! let base = TmemAddr(0);
//! let stage1 = base.offset(0, 256);
//! assert_eq!((stage1.lane(), stage1.column()), (0, 256));
//! assert_eq!(stage1.warp_quarter(5).lane(), 32);
//! ```

/// An address in tensor memory: bits `[16, 32)` lane, `[0, 16)` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct TmemAddr(pub u32);

impl TmemAddr {
    /// The raw 32-bit address (`lane << 16 | column`).
    #[inline(always)]
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The lane field.
    #[inline(always)]
    pub const fn lane(self) -> u32 {
        self.0 >> 16
    }

    /// The column field.
    #[inline(always)]
    pub const fn column(self) -> u32 {
        self.0 & 0xFFFF
    }

    /// This address moved by `lanes` lanes and `columns` columns (no
    /// bounds check: the caller stays inside its allocation).
    #[inline(always)]
    pub const fn offset(self, lanes: u32, columns: u32) -> Self {
        Self(self.0.wrapping_add((lanes << 16).wrapping_add(columns)))
    }

    /// The first lane of warp `warp`'s lane quarter (`32 * (warp % 4)`) at
    /// this address's column: where that warp's `tcgen05.ld`/`st` start.
    #[inline(always)]
    pub const fn warp_quarter(self, warp: u32) -> Self {
        Self((self.0 & 0xFFFF) | ((32 * (warp % 4)) << 16))
    }
}

/// Columns of TMEM per SM.
pub const TMEM_COLUMNS: u32 = 512;

/// Lanes of TMEM per SM (one per accumulator row of an M = 128 MMA).
pub const TMEM_LANES: u32 = 128;
