//! Warpgroup MMA (`wgmma`, sm_90a): shared-memory matrix descriptors, the
//! async fence/commit/wait protocol, and register reallocation.
//!
//! A warpgroup is 4 consecutive warps starting at a warp index divisible by
//! 4. The MMA itself is asynchronous: after [`fence`], issue one or more
//! `mma_*` ([`ops`]), [`commit_group`], and later [`wait_group::<N>`] — which
//! returns once at most `N` committed groups are still in flight. Only then
//! may the accumulators be read and the shared-memory operands be released
//! (e.g. by arriving on a pipeline's `empty` barrier).

use core::arch::asm;

#[path = "wgmma_ops.rs"]
pub mod ops;

/// `wgmma.fence.sync.aligned`: orders prior register/shared-memory accesses
/// before the next `wgmma.mma_async` of this warpgroup.
#[inline(always)]
pub fn fence() {
    // SAFETY: warpgroup-collective fence; all 128 threads execute it.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

/// `wgmma.commit_group.sync.aligned`: closes the group of MMAs issued since
/// the last commit.
#[inline(always)]
pub fn commit_group() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most `N` committed
/// groups are pending.
#[inline(always)]
pub fn wait_group<const N: u32>() {
    // SAFETY: warpgroup-collective; memory clobber keeps accumulator and
    // shared-memory accesses after it.
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack)) };
}

pub use crate::arch::wgmma_desc::{
    SmemLayout, SplitDescriptor, descriptor_advance, descriptor_k_major, descriptor_mn_major,
};

/// The shared-memory address of `r` as a `wgmma` descriptor takes it (the
/// `.shared` window address); the CPU backend's `smem_addr` gives the
/// offset in the simulated CTA's window instead.
///
/// ```ignore
/// let da = descriptor_k_major(smem_addr(stage.tiles()), SmemLayout::Swizzle128B);
/// ```
#[inline(always)]
pub fn smem_addr<T>(r: crate::smem::SharedRef<'_, T>) -> u32 {
    r.addr()
}

/// `setmaxnreg.inc.sync.aligned.u32 N`: this warpgroup asks for `N`
/// registers per thread (a multiple of 8 in 24..=256). Takes effect only when
/// the kernel has a register cap at entry; the whole warpgroup executes it.
#[inline(always)]
pub fn setmaxnreg_inc<const N: u32>() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}

/// `setmaxnreg.dec.sync.aligned.u32 N`: this warpgroup releases registers
/// down to `N` per thread.
#[inline(always)]
pub fn setmaxnreg_dec<const N: u32>() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}
