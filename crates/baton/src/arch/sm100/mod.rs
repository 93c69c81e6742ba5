//! Blackwell (`sm_100a`) additions: tensor memory (TMEM) and the `tcgen05`
//! MMA, through inline assembly. Everything else (mbarrier, TMA, thread
//! identity, shared memory) is the Hopper backend's ([`super::ptx`]), which
//! sm_100a executes unchanged.
//!
//! **Assembled, never run**: no Blackwell GPU has been available to this
//! project. Every instruction here is assembled by `ptxas -arch=sm_100a` in
//! CI (the `baton_sm100_smoke` kernel, `tools/build-ptx.sh`), and the PTX
//! syntax follows the PTX ISA (`tcgen05` family, PTX 8.6) and CUTLASS's
//! `cute/arch/{tmem_allocator_sm100,mma_sm100_umma,mma_sm100_desc}.hpp`;
//! the descriptor encodings and the data layouts are not yet checked against
//! hardware.
//!
//! The protocol, as a kernel uses it (CUTLASS's order):
//!
//! 1. one warp [`tmem::alloc`]s columns (the address goes to shared memory),
//!    then [`tmem::relinquish_alloc_permit`]; [`fence_before_thread_sync`],
//!    a block barrier, [`fence_after_thread_sync`], and every thread reads
//!    the address;
//! 2. one thread issues [`mma::mma_f16_ss`] (operands in shared memory,
//!    accumulator in TMEM) and [`mma::commit`]s to an mbarrier, whose phase
//!    completes when those MMAs are done;
//! 3. epilogue warps wait on that mbarrier, [`fence_after_thread_sync`], and
//!    read their lane quarter with [`tmem::ld_32x32b_x16`] (or another width);
//! 4. [`fence_before_thread_sync`], a block barrier, and the allocating warp
//!    [`fence_after_thread_sync`]s and [`tmem::dealloc`]s.
//!
//! CTA pairs (`cta_group::2`) follow the same steps with
//! [`tmem::alloc_pair`], [`mma::mma_f16_ss_pair`] issued by the leader CTA,
//! [`mma::commit_pair_multicast`] to both CTAs' barriers, cluster barriers
//! in place of block barriers, and [`tmem::dealloc_pair`]. A kernel uses
//! one `cta_group` throughout.
//!
//! Only compiled for `nvptx64-nvidia-cuda`; only kernels built with
//! `-C target-cpu=sm_100a` (or later `a` targets) may call it — ptxas
//! rejects `tcgen05` for sm_90a.

pub mod mma;
pub mod tmem;

use core::arch::asm;

/// `tcgen05.fence::before_thread_sync`: orders this thread's earlier
/// `tcgen05` operations (loads, stores, MMAs, allocation) before the next
/// thread synchronization (`bar.sync`, an mbarrier arrive, ...).
///
/// Executed by every thread whose `tcgen05` work another thread must see
/// after a barrier — e.g. the allocating warp before the block barrier that
/// publishes the TMEM address, or the epilogue warps before the barrier that
/// lets the allocating warp deallocate.
#[inline(always)]
pub fn fence_before_thread_sync() {
    // SAFETY: a fence; no operands.
    unsafe { asm!("tcgen05.fence::before_thread_sync;", options(nostack)) };
}

/// `tcgen05.fence::after_thread_sync`: orders this thread's later `tcgen05`
/// operations after the thread synchronization it just completed.
///
/// Executed by every thread after the barrier (or mbarrier wait) that
/// precedes its `tcgen05` work: after reading the TMEM address, after waiting
/// on an MMA's commit barrier before [`tmem::ld_32x32b_x16`], before
/// [`tmem::dealloc`], and by the MMA thread after the wait that hands it a
/// free accumulator stage.
#[inline(always)]
pub fn fence_after_thread_sync() {
    // SAFETY: a fence; no operands.
    unsafe { asm!("tcgen05.fence::after_thread_sync;", options(nostack)) };
}

/// The shared-memory address of `r` as `tcgen05` descriptors and operands
/// take it (the `.shared` window address); the CPU simulation's form
/// returns the offset in the simulated CTA's window.
#[inline(always)]
pub fn smem_addr<T>(r: crate::smem::SharedRef<'_, T>) -> u32 {
    r.addr()
}
