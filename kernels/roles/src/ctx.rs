//! What a warp-role program knows about the thread it runs on: [`WarpCtx`],
//! with a GPU implementation ([`GpuWarp`], nvptx only) and a CPU one
//! ([`CpuWarp`], host only, used by [`run_cta`]).
//!
//! The one rule that makes a role portable: code that differs per lane
//! (each lane owns a row of TMEM, a few shared-memory words) goes inside
//! [`WarpCtx::for_each_lane`]; everything else is warp-uniform. On the GPU
//! `for_each_lane` runs its body once, in every lane at once; on the CPU a
//! warp is one host thread and the body runs for lanes 0..32 in turn, each
//! counted as one lane by the barrier backend (so arrivals inside it count
//! 32 per warp on both).

/// The thread (GPU) or warp (CPU) a role runs on.
pub trait WarpCtx {
    /// Warp index within the CTA.
    fn warp(&self) -> u32;
    /// Barrier over every warp of the CTA (`bar.sync 0`).
    fn sync_cta(&self);
    /// Barrier over the epilogue warpgroup only (`bar.sync 1, 128`); only
    /// its warps call it.
    fn sync_epilogue(&self);
    /// Runs `f` in one elected lane of the warp (`elect.sync`); `None` in
    /// the other lanes.
    fn elect<R>(&self, f: impl FnOnce() -> R) -> Option<R>;
    /// Runs per-lane code: `f(lane)` for this thread's lane on the GPU, for
    /// lanes `0..32` in order on the CPU.
    fn for_each_lane(&self, f: impl FnMut(u32));
    /// The lane to add to a warp's TMEM lane-quarter base address for
    /// lane `lane`'s row: 0 on the GPU (`tcgen05.ld`/`st` take the quarter's
    /// base from every lane and each lane gets its own row), `lane` on the
    /// CPU (the simulated load reads the one row it is given).
    fn tmem_row(&self, lane: u32) -> u32;
}

#[cfg(target_arch = "nvptx64")]
pub use gpu::GpuWarp;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::WarpCtx;
    use baton::arch::ptx as arch;

    /// The calling GPU thread.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct GpuWarp;

    impl WarpCtx for GpuWarp {
        #[inline(always)]
        fn warp(&self) -> u32 {
            arch::warp_idx()
        }
        #[inline(always)]
        fn sync_cta(&self) {
            arch::sync_threads();
        }
        #[inline(always)]
        fn sync_epilogue(&self) {
            arch::named_barrier_sync(1, 128);
        }
        #[inline(always)]
        fn elect<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
            if arch::elect_one() { Some(f()) } else { None }
        }
        #[inline(always)]
        fn for_each_lane(&self, mut f: impl FnMut(u32)) {
            f(arch::thread_idx_x() % 32)
        }
        #[inline(always)]
        fn tmem_row(&self, _lane: u32) -> u32 {
            0
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::{CpuWarp, run_cta};

#[cfg(not(target_arch = "nvptx64"))]
mod cpu {
    use super::WarpCtx;
    use baton::arch::cpu::{BlockBarrier, CpuBlock, Warp, elect_one, with_lanes};
    use baton::smem::SharedRef;

    /// A simulated warp (one host thread standing for 32 lanes).
    pub struct CpuWarp<'b> {
        warp: Warp<'b>,
        epilogue: &'b BlockBarrier,
    }

    impl WarpCtx for CpuWarp<'_> {
        fn warp(&self) -> u32 {
            self.warp.index()
        }
        fn sync_cta(&self) {
            self.warp.sync_block();
        }
        fn sync_epilogue(&self) {
            self.epilogue.sync();
        }
        fn elect<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
            Some(elect_one(f))
        }
        fn for_each_lane(&self, mut f: impl FnMut(u32)) {
            for lane in 0..32 {
                with_lanes(1, || f(lane));
            }
        }
        fn tmem_row(&self, lane: u32) -> u32 {
            lane
        }
    }

    /// Runs one simulated CTA of `warps` warps (threads) over shared memory
    /// `smem`, `epilogue_warps` of which take part in
    /// [`WarpCtx::sync_epilogue`]; joins them (a panic in a warp is
    /// re-raised). The CTA has its own simulated TMEM
    /// (`baton::arch::tcgen05`); it must have freed every column when its
    /// warps return (panics otherwise).
    ///
    /// ```
    /// use baton_kernel_roles::ctx::{WarpCtx, run_cta};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// let lanes = AtomicU32::new(0);
    /// run_cta(0u32, 2, 0, |w, _smem| {
    ///     w.for_each_lane(|_| {
    ///         lanes.fetch_add(1, Ordering::Relaxed);
    ///     });
    ///     w.sync_cta();
    /// });
    /// assert_eq!(lanes.into_inner(), 64);
    /// ```
    pub fn run_cta<S: Sync>(
        smem: S,
        warps: u32,
        epilogue_warps: u32,
        body: impl Fn(&CpuWarp<'_>, SharedRef<'_, S>) + Sync,
    ) {
        let block = CpuBlock::new(smem);
        let epilogue = BlockBarrier::new(epilogue_warps.max(1));
        block.run_warps(warps, |warp, smem| {
            let ctx = CpuWarp {
                warp,
                epilogue: &epilogue,
            };
            body(&ctx, smem)
        });
    }
}
