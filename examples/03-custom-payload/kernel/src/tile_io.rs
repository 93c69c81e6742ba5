//! Reading one word of a 128-byte-swizzled tile in shared memory: the only
//! code of this crate that differs between the targets.
//!
//! TMA writes a tile with the 128-byte swizzle: the 16-byte chunk `j` of
//! row `r` lands at chunk `j ^ (r % 8)`. Reading row `r`, column `c` must
//! apply the same permutation ([`Swizzle::apply`]); in return the 32 lanes
//! of a warp reading one column of 32 rows hit 8 different chunks instead of
//! one bank.

use crate::payload::KvTile;
use baton::smem::SharedRef;
use baton::tensor_map::Swizzle;

/// The swizzle of the K and V tensor maps.
pub const SWIZZLE: Swizzle = Swizzle::B128;

/// Element `(row, col)` of `tile`.
///
/// # Safety
/// `row < ROWS`, `col < DIM`; the caller holds the tile's stage (nobody
/// writes it concurrently).
#[inline(always)]
pub unsafe fn load(tile: SharedRef<'_, KvTile>, row: u32, col: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let offset = SWIZZLE.apply((row as usize * crate::payload::DIM + col as usize) * 4) as u32;
        // SAFETY: forwarded: the word lies inside the tile.
        unsafe { baton::arch::ptx::ld_shared_u32(tile.addr() + offset) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded: in bounds, no concurrent write.
        unsafe { tile.get().read(SWIZZLE, row as usize, col as usize) }
    }
}
