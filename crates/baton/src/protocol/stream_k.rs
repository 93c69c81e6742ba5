//! Stream-K fixup: how the workers that share a unit
//! ([`StreamKSchedule`](super::tile_scheduler::StreamKSchedule)) hand their
//! partial accumulators to the unit's finalizer, through a workspace in
//! global memory and one flag per worker.
//!
//! | role | does | then |
//! |---|---|---|
//! | contributor (segment does not start the unit) | writes its partial accumulator to workspace slot `w` (its own worker index) | [`FixupFlags::publish`]`(w, epoch)`: release store |
//! | finalizer (segment starts the unit) | computes its own segment | for each contributor `c` in [`contributors`](super::tile_scheduler::StreamKSchedule::contributors), in order: [`FixupFlags::wait`]`(c, epoch)` (acquire), add slot `c` |
//!
//! `epoch` is a nonzero number the host changes on every launch that uses
//! the workspace, so flags never need clearing (a flag left from an earlier
//! launch holds another epoch). Each worker publishes at most one partial
//! per launch (the schedule guarantees it), so one slot and one flag per
//! worker suffice, and contributors never wait: with every worker of a
//! persistent grid resident, the fixup cannot deadlock.
//!
//! The flags are `AtomicU32`s: on the GPU (global memory) the release store
//! and acquire load are `st.release.gpu` / `ld.acquire.gpu` (GPU scope: the
//! readers are CTAs of the same grid; a Rust atomic's system scope cost a
//! `MEMBAR.ALL.SYS` per hand-over); on the host they are the CPU's (loom's
//! under `--cfg loom`).
//!
//! ```
//! use baton::protocol::stream_k::FixupFlags;
//! use std::sync::atomic::AtomicU32;
//! let cells: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
//! let flags = FixupFlags::new(&cells);
//! flags.publish(2, 7); // worker 2's partial is in its slot (epoch 7)
//! flags.wait(2, 7); // returns at once
//! assert!(!flags.is_published(1, 7));
//! ```

#[cfg(all(loom, not(target_arch = "nvptx64")))]
use loom::sync::atomic::{AtomicU32, Ordering};

#[cfg(not(all(loom, not(target_arch = "nvptx64"))))]
use core::sync::atomic::AtomicU32;
#[cfg(not(any(loom, target_arch = "nvptx64")))]
use core::sync::atomic::Ordering;

/// One flag per worker of a stream-K grid.
#[derive(Clone, Copy)]
pub struct FixupFlags<'a> {
    flags: &'a [AtomicU32],
}

impl<'a> FixupFlags<'a> {
    /// Flags over `flags` (one per worker; zero-initialized once, when the
    /// workspace is allocated).
    #[inline(always)]
    pub const fn new(flags: &'a [AtomicU32]) -> Self {
        Self { flags }
    }

    /// Flags over `workers` `u32`s at `ptr` (global memory on the GPU).
    ///
    /// # Safety
    /// `ptr` points at `workers` 4-byte-aligned `u32`s that live for `'a`
    /// and are only accessed through flags (atomically) meanwhile.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut u32, workers: u32) -> Self {
        // SAFETY: forwarded: AtomicU32 has u32's size and alignment.
        Self::new(unsafe { core::slice::from_raw_parts(ptr as *const AtomicU32, workers as usize) })
    }

    /// Contributor `worker`: its partial is in its workspace slot (every
    /// write of it happens before this release store).
    ///
    /// On the GPU every thread that wrote part of the slot must be ordered
    /// before the publishing thread first (a CTA barrier); then one thread
    /// publishes.
    #[inline(always)]
    pub fn publish(&self, worker: u32, epoch: u32) {
        let flag = &self.flags[worker as usize];
        // GPU scope: the finalizers are CTAs of the same grid.
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the flag is a live, aligned u32 of global memory (`new`,
        // `from_raw`) that every thread accesses atomically.
        unsafe {
            crate::arch::ptx::st_release_gpu_u32(flag.as_ptr(), epoch)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        flag.store(epoch, Ordering::Release);
    }

    /// Whether `worker` has published in `epoch` (one acquire load).
    #[inline(always)]
    pub fn is_published(&self, worker: u32, epoch: u32) -> bool {
        let flag = &self.flags[worker as usize];
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: as in `publish`.
        let v = unsafe { crate::arch::ptx::ld_acquire_gpu_u32(flag.as_ptr()) };
        #[cfg(not(target_arch = "nvptx64"))]
        let v = flag.load(Ordering::Acquire);
        v == epoch
    }

    /// Finalizer: waits until contributor `worker` published in `epoch`;
    /// its slot may be read afterwards (acquire). On the GPU one thread
    /// waits, then a CTA barrier lets the others read the slot.
    ///
    /// Debug builds give up after 2^28 polls with a panic naming the
    /// worker and epoch (a contributor that never publishes is a schedule
    /// or epoch bug, not a slow peer).
    #[inline(always)]
    pub fn wait(&self, worker: u32, epoch: u32) {
        let mut polls: u32 = 0;
        while !self.is_published(worker, epoch) {
            polls = polls.wrapping_add(1);
            if cfg!(debug_assertions) && polls == 1 << 28 {
                panic!("stream-K fixup: contributor never published its partial");
            }
            #[cfg(all(loom, not(target_arch = "nvptx64")))]
            loom::thread::yield_now();
            #[cfg(not(all(loom, not(target_arch = "nvptx64"))))]
            core::hint::spin_loop();
        }
    }
}
