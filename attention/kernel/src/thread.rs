//! What the CTA program ([`fwd::cta`](crate::fwd::cta)) needs from the GPU
//! thread it runs on, beyond what baton names alike on both backends
//! (`baton::arch::current::tma`, `baton::arch::wgmma`, the pipelines):
//! [`CtaThread`], implemented by [`GpuThread`] (nvptx: the special
//! registers and `bar` instructions, `#[inline(always)]`, so the kernel
//! compiles to the code it had with the calls written inline) and by
//! [`CpuThread`] (host: one simulated GPU thread of a CTA run by
//! [`run_cta`], every GPU thread a host thread).

/// The GPU thread the CTA program runs as.
///
/// ```ignore
/// fn is_producer(thread: &impl CtaThread) -> bool {
///     thread.warp_idx() == 0 && thread.elect_one()
/// }
/// ```
pub trait CtaThread {
    /// `threadIdx.x` (the CTA is one-dimensional).
    fn thread_idx_x(&self) -> u32;
    /// Warp index in the CTA (`threadIdx.x / 32`).
    fn warp_idx(&self) -> u32;
    /// `blockIdx.x`.
    fn block_idx_x(&self) -> u32;
    /// `%nctaid.x`, read where it is used (on the GPU not `pure`, so not
    /// hoisted out of the tile loop into a register that lives, and
    /// spills, across it).
    fn launch_ctas(&self) -> u32;
    /// `elect.sync` over the full warp: true in exactly one lane.
    fn elect_one(&self) -> bool;
    /// Runs `init` in thread 0, then `barrier.sync 0` (every thread of
    /// the CTA): the setup of barriers before any role uses them.
    fn init_then_sync(&self, init: impl FnOnce());
    /// `barrier.sync id, threads`: waits until `threads` threads (waiting
    /// or [arriving](Self::named_barrier_arrive)) reached barrier `id`.
    fn named_barrier_sync(&self, id: u32, threads: u32);
    /// `bar.arrive id, threads`: counts this thread towards barrier `id`
    /// without waiting.
    fn named_barrier_arrive(&self, id: u32, threads: u32);
    /// `st.shared.u32 [addr], value` (`addr` as `wgmma::smem_addr` gives it).
    ///
    /// # Safety
    /// `addr` is 4-byte aligned, inside the CTA's shared memory, and no other
    /// thread or async proxy accesses those bytes concurrently.
    unsafe fn st_shared_u32(&self, addr: u32, value: u32);
}

#[cfg(target_arch = "nvptx64")]
pub use gpu::GpuThread;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::CtaThread;
    use baton::arch::ptx;

    /// The calling GPU thread.
    ///
    /// ```ignore
    /// fwd::cta::<…>(GpuThread, unsafe { dynamic_smem() }, &p);
    /// ```
    #[derive(Clone, Copy, Debug, Default)]
    pub struct GpuThread;

    impl CtaThread for GpuThread {
        #[inline(always)]
        fn thread_idx_x(&self) -> u32 {
            ptx::thread_idx_x()
        }
        #[inline(always)]
        fn warp_idx(&self) -> u32 {
            ptx::warp_idx()
        }
        #[inline(always)]
        fn block_idx_x(&self) -> u32 {
            ptx::block_idx_x()
        }
        #[inline(always)]
        fn launch_ctas(&self) -> u32 {
            let n: u32;
            // SAFETY: reads a special register.
            unsafe {
                core::arch::asm!("mov.u32 {n}, %nctaid.x;", n = out(reg32) n, options(nomem, nostack))
            };
            n
        }
        #[inline(always)]
        fn elect_one(&self) -> bool {
            ptx::elect_one()
        }
        #[inline(always)]
        fn init_then_sync(&self, init: impl FnOnce()) {
            baton_kernel_roles::sm90::dispatch::init_then_sync::<1>(init)
        }
        #[inline(always)]
        fn named_barrier_sync(&self, id: u32, threads: u32) {
            ptx::named_barrier_sync(id, threads)
        }
        #[inline(always)]
        fn named_barrier_arrive(&self, id: u32, threads: u32) {
            // SAFETY: a barrier arrival; `threads` matches every use of `id`
            // (the caller's contract).
            unsafe {
                core::arch::asm!("bar.arrive {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack))
            };
        }
        #[inline(always)]
        unsafe fn st_shared_u32(&self, addr: u32, value: u32) {
            // SAFETY: forwarded to the caller.
            unsafe { ptx::st_shared_u32(addr, value) }
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::{CpuThread, NamedBarriers, run_cta};

#[cfg(not(target_arch = "nvptx64"))]
mod cpu {
    use super::CtaThread;
    use baton::arch::cpu::{CpuBlock, run_warpgroup};
    use baton::smem::SharedRef;
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    /// How long a thread waits at a named barrier before the simulation
    /// reports a hang.
    const BARRIER_TIMEOUT: Duration = Duration::from_secs(60);

    /// The CTA's 16 hardware barriers (`bar` / `barrier` ids 0..16) with
    /// PTX semantics: barrier `id` completes when `threads` threads reached
    /// it, waiting ([`sync`](Self::sync)) or not ([`arrive`](Self::arrive));
    /// then its waiters go on and it starts over.
    ///
    /// ```ignore
    /// use baton_attention_kernel::thread::NamedBarriers;
    /// let bars = NamedBarriers::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| bars.arrive(3, 2));
    ///     bars.sync(3, 2); // returns once the other thread arrived
    /// });
    /// ```
    pub struct NamedBarriers {
        /// Per id: threads arrived in the current round, rounds completed.
        state: Mutex<[(u32, u64); 16]>,
        cv: Condvar,
    }

    impl Default for NamedBarriers {
        fn default() -> Self {
            Self::new()
        }
    }

    impl NamedBarriers {
        /// All 16 barriers with no thread arrived.
        pub fn new() -> Self {
            Self {
                state: Mutex::new([(0, 0); 16]),
                cv: Condvar::new(),
            }
        }

        /// Counts one thread at barrier `id`; returns the round it joined
        /// and whether it completed it.
        fn count(&self, id: u32, threads: u32) -> (std::sync::MutexGuard<'_, [(u32, u64); 16]>, u64) {
            assert!(
                id < 16 && threads > 0 && threads.is_multiple_of(32),
                "baton cpu: named barrier {id} over {threads} threads (ids 0..16, a multiple of 32 threads)"
            );
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let slot = &mut st[id as usize];
            let round = slot.1;
            slot.0 += 1;
            assert!(
                slot.0 <= threads,
                "baton cpu: named barrier {id} reached by {} threads, used with {threads}",
                slot.0
            );
            if slot.0 == threads {
                *slot = (0, round + 1);
                self.cv.notify_all();
            }
            (st, round)
        }

        /// `barrier.sync id, threads`: this thread counts and waits for the
        /// round to complete (panics after a minute: a hang).
        pub fn sync(&self, id: u32, threads: u32) {
            let (mut st, round) = self.count(id, threads);
            while st[id as usize].1 == round {
                let (g, timeout) = self
                    .cv
                    .wait_timeout(st, BARRIER_TIMEOUT)
                    .unwrap_or_else(|e| e.into_inner());
                st = g;
                assert!(
                    !(timeout.timed_out() && st[id as usize].1 == round),
                    "baton cpu: named barrier {id} timed out: {} of {threads} threads reached it",
                    st[id as usize].0
                );
            }
        }

        /// `bar.arrive id, threads`: this thread counts, without waiting.
        pub fn arrive(&self, id: u32, threads: u32) {
            drop(self.count(id, threads));
        }
    }

    /// One simulated GPU thread of a CTA run by [`run_cta`].
    ///
    /// ```ignore
    /// use baton_attention_kernel::thread::{CtaThread, run_cta};
    /// run_cta(0u32, 1, 3, 4, |t, _smem| {
    ///     assert_eq!((t.block_idx_x(), t.launch_ctas()), (3, 4));
    ///     assert_eq!(t.warp_idx(), t.thread_idx_x() / 32);
    /// });
    /// ```
    pub struct CpuThread<'c> {
        tid: u32,
        cta: u32,
        grid: u32,
        bars: &'c NamedBarriers,
        /// Host address of the CTA's shared memory (shared address 0).
        smem_base: usize,
        threads: u32,
    }

    impl CtaThread for CpuThread<'_> {
        fn thread_idx_x(&self) -> u32 {
            self.tid
        }
        fn warp_idx(&self) -> u32 {
            self.tid / 32
        }
        fn block_idx_x(&self) -> u32 {
            self.cta
        }
        fn launch_ctas(&self) -> u32 {
            self.grid
        }
        fn elect_one(&self) -> bool {
            self.tid.is_multiple_of(32)
        }
        fn init_then_sync(&self, init: impl FnOnce()) {
            if self.tid == 0 {
                init();
            }
            self.bars.sync(0, self.threads)
        }
        fn named_barrier_sync(&self, id: u32, threads: u32) {
            self.bars.sync(id, threads)
        }
        fn named_barrier_arrive(&self, id: u32, threads: u32) {
            self.bars.arrive(id, threads)
        }
        unsafe fn st_shared_u32(&self, addr: u32, value: u32) {
            // SAFETY: `addr` is an offset in this CTA's shared memory (the
            // caller's contract, as `smem_addr` gives it), aligned and not
            // accessed concurrently.
            unsafe { ((self.smem_base + addr as usize) as *mut u32).write(value) }
        }
    }

    /// Runs CTA `cta` of a launch of `grid` CTAs of `warpgroups · 128`
    /// threads over shared memory `smem`: every GPU thread is a host thread
    /// (each warpgroup a `baton::arch::cpu::run_warpgroup`, so that its
    /// `wgmma`s and shuffles are collective over its 128 threads, and each
    /// thread's barrier arrivals count one), running `body`; joins them (a
    /// panic in any is re-raised). `smem` lives in the calling thread's
    /// stack frame: give large ones a thread with a large stack.
    ///
    /// ```ignore
    /// use baton_attention_kernel::thread::{CtaThread, run_cta};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// let elected = AtomicU32::new(0);
    /// run_cta(0u32, 2, 0, 1, |t, _smem| {
    ///     if t.elect_one() {
    ///         elected.fetch_add(1, Ordering::Relaxed);
    ///     }
    ///     t.init_then_sync(|| {});
    /// });
    /// assert_eq!(elected.into_inner(), 8); // one lane per warp
    /// ```
    pub fn run_cta<S: Sync>(
        smem: S,
        warpgroups: u32,
        cta: u32,
        grid: u32,
        body: impl Fn(&CpuThread<'_>, SharedRef<'_, S>) + Sync,
    ) {
        let bars = NamedBarriers::new();
        let block = CpuBlock::new(smem);
        block.run_warps(warpgroups, |warpgroup, smem| {
            run_warpgroup(|tid| {
                let thread = CpuThread {
                    tid: 128 * warpgroup.index() + tid,
                    cta,
                    grid,
                    bars: &bars,
                    smem_base: smem.addr(),
                    threads: 128 * warpgroups,
                };
                body(&thread, smem)
            })
        });
    }
}
