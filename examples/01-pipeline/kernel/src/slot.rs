//! Word access to a slot in shared memory: the only code of this crate that
//! differs between the targets (`ld.shared`/`st.shared` on the GPU, the
//! slot's host memory on the CPU).

use crate::Slot;
use baton::smem::SharedRef;

/// Reads word `i` of `slot`.
///
/// # Safety
/// `i < CHUNK`; nobody writes the word concurrently (the pipeline orders the
/// producer's writes before the consumers' reads).
#[inline(always)]
pub unsafe fn load_word(slot: SharedRef<'_, Slot>, i: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: forwarded: the word lies inside the slot.
        unsafe { baton::arch::ptx::ld_shared_u32(slot.addr() + 4 * i) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded: in bounds, no concurrent write.
        unsafe {
            slot.get()
                .read(baton::tensor_map::Swizzle::None, 0, i as usize)
        }
    }
}

/// Writes word `i` of `slot`.
///
/// # Safety
/// `i < CHUNK`; the caller holds the slot's stage as its producer.
#[inline(always)]
pub unsafe fn store_word(slot: SharedRef<'_, Slot>, i: u32, value: u32) {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: forwarded: the word lies inside the slot.
        unsafe { baton::arch::ptx::st_shared_u32(slot.addr() + 4 * i, value) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded: in bounds, exclusive.
        unsafe {
            slot.get()
                .write(baton::tensor_map::Swizzle::None, 0, i as usize, value)
        }
    }
}
