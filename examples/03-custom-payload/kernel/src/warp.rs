//! What role code needs from the thread it runs on, for both targets.
//!
//! Role code is warp-uniform (pipeline waits and arrivals) except where it
//! says [`Warp::lane0`] (the TMA loads are issued by one thread) or
//! [`Warp::for_each_lane`] (each lane reduces its own row). On the GPU
//! every thread runs the role; on the CPU one host thread stands for a whole
//! warp (its barrier arrivals count 32) and becomes one lane inside `lane0`.

/// The GPU thread, or simulated CPU warp, a role runs on.
pub trait Warp {
    /// Warp index in the block.
    fn index(&self) -> u32;
    /// Barrier over every warp of the block (`bar.sync 0`).
    fn sync_block(&self);
    /// Runs `f` in lane 0 of the warp only — always the same thread, as
    /// TMA bulk-group waits (`store_wait_group`) must be.
    fn lane0(&self, f: impl FnOnce());
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
    fn lane0(&self, f: impl FnOnce()) {
        if baton::arch::ptx::lane_id() == 0 {
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
    fn lane0(&self, f: impl FnOnce()) {
        // Inside, the thread stands for one lane (arrivals count once).
        baton::arch::cpu::elect_one(f)
    }
    fn for_each_lane(&self, mut f: impl FnMut(u32)) {
        for lane in 0..32 {
            f(lane)
        }
    }
}
