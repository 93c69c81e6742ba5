//! 32-bit shared-memory accesses inside a tile, on both targets:
//! `ld.shared`/`st.shared` on the GPU, the tile's host bytes on the CPU.

use baton::smem::SharedRef;
use baton::tile_pipeline::Tile;

/// Reads the 32-bit word at byte `offset` of `tile`.
///
/// # Safety
/// `offset + 4 ≤ size_of::<Tile<T, R, C>>()`, 4-byte aligned; no
/// concurrent write of those bytes (the pipeline protocol orders them).
///
/// ```
/// use baton::smem::SharedRef;
/// use baton::tile_pipeline::Tile;
/// use baton_kernel_roles::smem_io::{ld_u32, st_u32};
/// let t = Tile::<u16, 2, 4>::new();
/// let r = SharedRef::from_ref(&t);
/// unsafe { st_u32(r, 4, 0xdead_beef) };
/// assert_eq!(unsafe { ld_u32(r, 4) }, 0xdead_beef);
/// ```
#[inline(always)]
pub unsafe fn ld_u32<T: Copy, const R: usize, const C: usize>(
    tile: SharedRef<'_, Tile<T, R, C>>,
    offset: u32,
) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: forwarded: in bounds of a shared-memory tile.
        unsafe { baton::arch::ptx::ld_shared_u32(tile.addr() + offset) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded: in bounds, no concurrent write.
        unsafe {
            tile.get()
                .with_ptr(|p| p.add(offset as usize).cast::<u32>().read_unaligned())
        }
    }
}

/// Writes the 32-bit word at byte `offset` of `tile`.
///
/// # Safety
/// As [`ld_u32`], and no concurrent access to those bytes.
#[inline(always)]
pub unsafe fn st_u32<T: Copy, const R: usize, const C: usize>(
    tile: SharedRef<'_, Tile<T, R, C>>,
    offset: u32,
    value: u32,
) {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: forwarded: in bounds of a shared-memory tile.
        unsafe { baton::arch::ptx::st_shared_u32(tile.addr() + offset, value) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded: in bounds, exclusive.
        unsafe {
            tile.get()
                .with_mut_ptr(|p| p.add(offset as usize).cast::<u32>().write_unaligned(value))
        }
    }
}
