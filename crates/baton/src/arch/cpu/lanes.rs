//! Simulated lanes: how many GPU threads the calling host thread stands for.
//!
//! A host thread started by [`CpuBlock::run_warps`](super::CpuBlock::run_warps)
//! stands for a full warp (32 lanes): one `arrive` is 32 arrivals, as when a
//! converged warp executes `mbarrier.arrive`. Inside
//! [`elect_one`](super::elect_one) it stands for one lane. Any other thread
//! (a plain test thread) stands for one thread.

use super::sync::thread_local;
use core::cell::Cell;

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

thread_local! {
    #[allow(clippy::missing_const_for_thread_local)]
    static LANES: Cell<u32> = Cell::new(1);
}

/// Lanes the calling host thread currently stands for.
#[inline]
pub fn active_lanes() -> u32 {
    LANES.with(|l| l.get())
}

/// Runs `f` with the calling thread standing for `lanes` lanes, restoring the
/// previous value afterwards (also on panic).
pub fn with_lanes<R>(lanes: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            let v = self.0;
            LANES.with(|l| l.set(v));
        }
    }
    let _restore = Restore(LANES.with(|l| l.replace(lanes)));
    f()
}
