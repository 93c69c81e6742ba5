//! The PTX backend, for `sm_90a` and later (the sm_100a kernels use it too):
//! `mbarrier`, fences, thread identity, shared memory and TMA through inline
//! assembly, plus Hopper's warpgroup MMA ([`wgmma`], sm_90a only: sm_100a has
//! `tcgen05` instead, in [`super::sm100`]).
//!
//! Every function here is `#[inline(always)]` so that kernels built from the
//! protocol code compile to the same instructions as hand-written PTX.
//!
//! Only compiled for `nvptx64-nvidia-cuda`.

mod debug;
mod mbarrier;
mod thread;
pub mod tma;
pub mod wgmma;

pub use debug::{report_hang, trap};
pub use mbarrier::{
    BarrierRef, MbarrierCell, WAIT_BOUND_NS, fence_barrier_init, fence_proxy_async_shared,
};
pub use thread::*;

use crate::smem::SharedRef;
use core::arch::asm;

/// Name of the `.extern .shared` array that stands for the launch's dynamic
/// shared memory. The PTX build step (`baton-build`) declares it at
/// module scope, aligned to 1024 bytes (what 128-byte-swizzled TMA tiles
/// need); PTX does not allow the declaration inside a function body.
pub const DYNAMIC_SMEM_SYMBOL: &str = "baton_dynamic_smem";

/// Bytes of dynamic shared memory this launch was given (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    let r: u32;
    // SAFETY: reads a special register.
    unsafe {
        asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) r, options(pure, nomem, nostack))
    };
    r
}

/// The block's dynamic shared memory, typed as `T` and aligned to 1024 bytes.
///
/// The address comes from the `.extern .shared` symbol the build declares,
/// never from an assumed address 0 (sm_90 reserves the start of each block's
/// shared window). Traps if the launch gave fewer bytes than `size_of::<T>()`
/// (a host/kernel layout mismatch), so a wrong launch cannot silently corrupt
/// memory.
///
/// # Safety
/// The caller decides how the block uses this memory: every `SharedRef`
/// derived from the result aliases the same bytes, and the kernel must keep
/// its warps' accesses race-free (that is what the pipelines are for).
#[inline(always)]
pub unsafe fn dynamic_smem<T>() -> SharedRef<'static, T> {
    const {
        assert!(
            core::mem::align_of::<T>() <= 1024,
            "dynamic shared memory is 1024-byte aligned"
        )
    };
    if (dynamic_smem_size() as usize) < core::mem::size_of::<T>() {
        trap();
    }
    let addr: u32;
    // SAFETY: `baton_dynamic_smem` is declared by the build step; `mov` of a
    // shared symbol yields its shared-window address.
    unsafe {
        asm!("mov.u32 {r}, baton_dynamic_smem;", r = out(reg32) addr, options(pure, nomem, nostack));
        SharedRef::from_addr(addr)
    }
}
