//! What the CTA program ([`fwd::cta`](crate::fwd::cta)) needs from the GPU
//! thread it runs on, beyond what baton names alike on both backends
//! (`baton::arch::current::tma`, `baton::arch::wgmma`, the pipelines):
//! [`CtaThread`], implemented by [`GpuThread`] (nvptx: the special
//! registers and `bar` instructions, `#[inline(always)]`, so the kernel
//! compiles to the code it had with the calls written inline) and by
//! [`CpuThread`] (host: one simulated GPU thread of a CTA run by
//! [`run_cta`], every GPU thread a host thread). [`CurrentThread`] names
//! the one of the compilation target; the CTA program is not generic over
//! it (a type parameter, even one that is always `GpuThread`, changed
//! LLVM's code layout of the kernels: 5 % more PTX lines).

use baton::smem::SharedRef;

/// The GPU thread the CTA program runs as.
///
/// ```ignore
/// fn is_producer(thread: &impl CtaThread) -> bool {
///     thread.warp_idx() == 0 && thread.elect_one()
/// }
/// ```
pub trait CtaThread {
    /// The CTA's dynamic shared memory, typed as `S`.
    ///
    /// # Safety
    /// As `baton::arch::ptx::dynamic_smem`: the launch gave at least
    /// `size_of::<S>()` bytes laid out as `S`, and the caller keeps the
    /// threads' accesses race-free.
    unsafe fn dynamic_smem<S: 'static>(&self) -> SharedRef<'_, S>;
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
    use super::{CtaThread, SharedRef};
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
        unsafe fn dynamic_smem<S: 'static>(&self) -> SharedRef<'_, S> {
            // SAFETY: forwarded to the caller.
            unsafe { ptx::dynamic_smem::<S>() }
        }
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

/// The thread type of the compilation target: [`GpuThread`] on nvptx64,
/// [`CpuThread`] on the host (as `baton::arch::current` names the backend).
///
/// ```ignore
/// let thread = &CurrentThread::default();
/// ```
#[cfg(target_arch = "nvptx64")]
pub type CurrentThread = GpuThread;
/// The thread type of the compilation target: [`GpuThread`] on nvptx64,
/// [`CpuThread`] on the host (as `baton::arch::current` names the backend).
///
/// ```ignore
/// let thread = &CurrentThread::default();
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub type CurrentThread = CpuThread;

#[cfg(not(target_arch = "nvptx64"))]
mod cpu {
    use super::{CtaThread, SharedRef};
    use baton::arch::cpu::{CpuBlock, run_warpgroup};
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

        /// Counts one thread at barrier `id` (completing the round when it
        /// is the last); returns the lock and the round it joined.
        fn count(
            &self,
            id: u32,
            threads: u32,
        ) -> (std::sync::MutexGuard<'_, [(u32, u64); 16]>, u64) {
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

    /// Where a simulated GPU thread is: set by [`run_cta`] in each of its
    /// host threads.
    #[derive(Clone, Copy)]
    struct Place {
        tid: u32,
        cta: u32,
        grid: u32,
        /// The CTA's threads (`bar.sync 0` waits for all).
        threads: u32,
        /// The CTA's named barriers (alive while its threads run).
        bars: *const NamedBarriers,
        /// Host address of the CTA's shared memory (shared address 0).
        smem_base: usize,
        /// Its size in bytes.
        smem_bytes: usize,
    }

    thread_local! {
        static PLACE: core::cell::Cell<Option<Place>> = const { core::cell::Cell::new(None) };
    }

    /// The calling simulated GPU thread (of a CTA run by [`run_cta`]);
    /// every method panics in a host thread that is not one.
    ///
    /// ```ignore
    /// use baton_attention_kernel::thread::{CpuThread, CtaThread, run_cta};
    /// run_cta(0u32, 1, 3, 4, |_smem| {
    ///     let t = CpuThread;
    ///     assert_eq!((t.block_idx_x(), t.launch_ctas()), (3, 4));
    ///     assert_eq!(t.warp_idx(), t.thread_idx_x() / 32);
    /// });
    /// ```
    #[derive(Clone, Copy, Debug, Default)]
    pub struct CpuThread;

    impl CpuThread {
        fn place(&self) -> Place {
            PLACE.with(|p| p.get()).expect(
                "baton attention cpu: CpuThread used outside a simulated CTA (run it in thread::run_cta)",
            )
        }
        fn bars(&self) -> &NamedBarriers {
            // SAFETY: `run_cta` keeps the barriers alive while the thread's
            // place is set.
            unsafe { &*self.place().bars }
        }
    }

    impl CtaThread for CpuThread {
        unsafe fn dynamic_smem<S: 'static>(&self) -> SharedRef<'_, S> {
            let pl = self.place();
            assert!(
                core::mem::size_of::<S>() <= pl.smem_bytes
                    && pl.smem_base.is_multiple_of(core::mem::align_of::<S>()),
                "baton attention cpu: the CTA's {} bytes of shared memory do not hold a {}",
                pl.smem_bytes,
                core::any::type_name::<S>()
            );
            // SAFETY: in bounds and aligned (checked); the CTA's memory
            // outlives its threads; the layout and the races are the
            // caller's contract.
            SharedRef::from_ref(unsafe { &*(pl.smem_base as *const S) })
        }
        fn thread_idx_x(&self) -> u32 {
            self.place().tid
        }
        fn warp_idx(&self) -> u32 {
            self.place().tid / 32
        }
        fn block_idx_x(&self) -> u32 {
            self.place().cta
        }
        fn launch_ctas(&self) -> u32 {
            self.place().grid
        }
        fn elect_one(&self) -> bool {
            self.place().tid.is_multiple_of(32)
        }
        fn init_then_sync(&self, init: impl FnOnce()) {
            let pl = self.place();
            if pl.tid == 0 {
                init();
            }
            self.bars().sync(0, pl.threads)
        }
        fn named_barrier_sync(&self, id: u32, threads: u32) {
            self.bars().sync(id, threads)
        }
        fn named_barrier_arrive(&self, id: u32, threads: u32) {
            self.bars().arrive(id, threads)
        }
        unsafe fn st_shared_u32(&self, addr: u32, value: u32) {
            let pl = self.place();
            assert!(
                addr as usize + 4 <= pl.smem_bytes && addr.is_multiple_of(4),
                "baton attention cpu: st.shared.u32 at {addr:#x}, outside the CTA's {} bytes or unaligned",
                pl.smem_bytes
            );
            // SAFETY: in the CTA's shared memory and aligned (checked); no
            // concurrent access (the caller's contract).
            unsafe { ((pl.smem_base + addr as usize) as *mut u32).write(value) }
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
    /// use baton_attention_kernel::thread::{CpuThread, CtaThread, run_cta};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// let elected = AtomicU32::new(0);
    /// run_cta(0u32, 2, 0, 1, |_smem| {
    ///     let t = CpuThread;
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
        body: impl Fn(SharedRef<'_, S>) + Sync,
    ) {
        let bars = NamedBarriers::new();
        let block = CpuBlock::new(smem);
        block.run_warps(warpgroups, |warpgroup, smem| {
            run_warpgroup(|tid| {
                let place = Place {
                    tid: 128 * warpgroup.index() + tid,
                    cta,
                    grid,
                    threads: 128 * warpgroups,
                    bars: &bars,
                    smem_base: smem.addr(),
                    smem_bytes: core::mem::size_of::<S>(),
                };
                struct Unset;
                impl Drop for Unset {
                    fn drop(&mut self) {
                        PLACE.with(|p| p.set(None));
                    }
                }
                PLACE.with(|p| p.set(Some(place)));
                let _unset = Unset;
                body(smem)
            })
        });
    }
}
