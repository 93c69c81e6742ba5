//! What role code needs from the thread it runs on, for both targets.
//!
//! The one rule that makes a role portable: code that differs per lane (each
//! lane moves its own words) goes inside [`Warp::for_each_lane`]; everything
//! else — pipeline waits and arrivals — is warp-uniform. On the GPU every
//! thread runs the role and `for_each_lane` calls its body once, for this
//! thread's lane; on the CPU one host thread stands for a whole warp (its
//! barrier arrivals count 32) and `for_each_lane` runs the body for lanes
//! `0..32` in turn.

/// The GPU thread, or simulated CPU warp, a role runs on.
pub trait Warp {
    /// Warp index in the block.
    fn index(&self) -> u32;
    /// Barrier over every warp of the block (`bar.sync 0`).
    fn sync_block(&self);
    /// Runs `f` in one elected lane of the warp.
    fn elect(&self, f: impl FnOnce());
    /// Runs per-lane code: `f(lane)` for this thread's lane on the GPU, for
    /// lanes `0..32` on the CPU.
    fn for_each_lane(&self, f: impl FnMut(u32));
}

/// The calling GPU thread.
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy, Debug)]
pub struct GpuWarp;

#[cfg(target_arch = "nvptx64")]
impl Warp for GpuWarp {
    #[inline(always)]
    fn index(&self) -> u32 {
        baton::arch::ptx::warp_idx()
    }
    #[inline(always)]
    fn sync_block(&self) {
        baton::arch::ptx::sync_threads()
    }
    #[inline(always)]
    fn elect(&self, f: impl FnOnce()) {
        if baton::arch::ptx::elect_one() {
            f()
        }
    }
    #[inline(always)]
    fn for_each_lane(&self, mut f: impl FnMut(u32)) {
        f(baton::arch::ptx::lane_id())
    }
}

/// A simulated warp of baton's CPU backend (one host thread).
#[cfg(not(target_arch = "nvptx64"))]
pub struct CpuWarp<'b>(pub baton::arch::cpu::Warp<'b>);

#[cfg(not(target_arch = "nvptx64"))]
impl Warp for CpuWarp<'_> {
    fn index(&self) -> u32 {
        self.0.index()
    }
    fn sync_block(&self) {
        self.0.sync_block()
    }
    fn elect(&self, f: impl FnOnce()) {
        // Inside, the thread stands for one lane (arrivals count once).
        baton::arch::cpu::elect_one(f)
    }
    fn for_each_lane(&self, mut f: impl FnMut(u32)) {
        for lane in 0..32 {
            f(lane)
        }
    }
}
