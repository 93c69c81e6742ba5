//! Typed loads and stores to shared memory (`ld.shared` / `st.shared`).
//!
//! The core crate's [`SharedRef`] grants no Rust-level access to shared
//! bytes on the GPU; these helpers read and write single words through it,
//! on top of the raw-address `baton::arch::ptx::{st,ld}_shared_u32`.
//! Both act on the generic proxy: shared memory written here and read next by
//! TMA or `wgmma` also needs `fence_proxy_async_shared` before the barrier.

use baton::arch::ptx;
use baton::smem::SharedRef;

/// `st.shared.u32 [dst], v`.
#[inline(always)]
pub fn st_shared_u32(dst: SharedRef<'_, u32>, v: u32) {
    // SAFETY: `dst` addresses a live, aligned u32 in this block's shared
    // memory (the `SharedRef` contract); races are the caller's protocol.
    unsafe { ptx::st_shared_u32(dst.addr(), v) }
}

/// `ld.shared.u32 v, [src]`, ordered after the barrier waits before it.
#[inline(always)]
pub fn ld_shared_u32(src: SharedRef<'_, u32>) -> u32 {
    // SAFETY: as `st_shared_u32`.
    unsafe { ptx::ld_shared_u32(src.addr()) }
}
