//! Plain loads and stores to shared memory (`ld.shared` / `st.shared`).
//!
//! The core crate's [`SharedRef`] grants no Rust-level access to shared
//! bytes on the GPU; these helpers read and write single words through it.
//! Both act on the generic proxy: shared memory written here and read next by
//! TMA or `wgmma` also needs `fence_proxy_async_shared` before the barrier.

use baton::smem::SharedRef;
use core::arch::asm;

/// `st.shared.u32 [dst], v`.
#[inline(always)]
pub fn st_shared_u32(dst: SharedRef<'_, u32>, v: u32) {
    // SAFETY: `dst` addresses a live, aligned u32 in this block's shared
    // memory (the `SharedRef` contract); races are the caller's protocol.
    unsafe {
        asm!("st.shared.u32 [{a}], {v};", a = in(reg32) dst.addr(), v = in(reg32) v, options(nostack))
    };
}

/// `ld.shared.u32 v, [src]`.
#[inline(always)]
pub fn ld_shared_u32(src: SharedRef<'_, u32>) -> u32 {
    let v: u32;
    // SAFETY: as `st_shared_u32`. Not `pure`/`readonly`: the load must stay
    // ordered after the barrier wait that makes the data visible.
    unsafe {
        asm!("ld.shared.u32 {v}, [{a}];", a = in(reg32) src.addr(), v = out(reg32) v, options(nostack))
    };
    v
}
