//! A simulated warpgroup: 128 host threads, each standing for one GPU
//! thread, for the warpgroup-collective operations whose per-thread data
//! other threads need — `wgmma` with A from registers
//! ([`wgmma`](super::wgmma)) and warp shuffles ([`shfl_xor`]).
//!
//! [`run_warpgroup`] starts them in the calling thread's simulated CTA;
//! each knows its index (`0..128`, what `threadIdx.x % 128` is on the GPU)
//! and meets the others at every collective operation. All 128 threads must
//! execute each collective operation, in the same order (on the GPU a
//! `.sync.aligned` instruction or a converged warp's shuffle); a thread that
//! never arrives is reported after a minute, and a thread's panic stops the
//! others at their next collective operation instead of hanging them.

use super::cluster::{ContextHandle, current_context, enter_context};
use super::lanes::with_lanes;
use super::sync::thread_local;
use core::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Threads in a warpgroup.
pub const WARPGROUP_THREADS: u32 = 128;

/// How long a thread waits for the rest of its warpgroup at a collective
/// operation before the simulation reports a hang.
const COLLECTIVE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a thread's panic says when it stops because another thread of its
/// warpgroup panicked.
const POISONED: &str = "another thread of the warpgroup panicked";

/// What the 128 threads of one simulated warpgroup share: the values they
/// post at a collective operation, and the barrier they meet at.
pub(crate) struct Collective {
    /// The RS MMA's A registers and B descriptor per thread.
    mma: Mutex<Vec<([u32; 4], u64)>>,
    /// A shuffle's value per thread.
    shuffle: Mutex<Vec<u32>>,
    meet: Mutex<MeetState>,
    cv: Condvar,
}

struct MeetState {
    arrived: u32,
    generation: u64,
    /// A thread of the warpgroup panicked: the others must not wait for it.
    poisoned: bool,
}

impl Collective {
    fn new() -> Self {
        Self {
            mma: Mutex::new(vec![([0; 4], 0); WARPGROUP_THREADS as usize]),
            shuffle: Mutex::new(vec![0; WARPGROUP_THREADS as usize]),
            meet: Mutex::new(MeetState {
                arrived: 0,
                generation: 0,
                poisoned: false,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock_meet(&self) -> MutexGuard<'_, MeetState> {
        self.meet.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until all 128 threads arrived (`what` names the operation in
    /// the hang report).
    pub(crate) fn meet(&self, what: &str) {
        let mut m = self.lock_meet();
        assert!(!m.poisoned, "baton cpu warpgroup: {POISONED} before {what}");
        m.arrived += 1;
        if m.arrived == WARPGROUP_THREADS {
            m.arrived = 0;
            m.generation += 1;
            self.cv.notify_all();
            return;
        }
        let generation = m.generation;
        while m.generation == generation {
            let (g, timeout) = self
                .cv
                .wait_timeout(m, COLLECTIVE_TIMEOUT)
                .unwrap_or_else(|e| e.into_inner());
            m = g;
            assert!(!m.poisoned, "baton cpu warpgroup: {POISONED} during {what}");
            assert!(
                !(timeout.timed_out() && m.generation == generation),
                "baton cpu warpgroup: {what} timed out: {} of 128 threads of the warpgroup reached it (a collective operation needs all 128)",
                m.arrived
            );
        }
    }

    /// Posts this thread's `(a, b)` of an RS MMA, meets the others, runs
    /// `f` over every thread's, and meets again (nobody posts the next
    /// before all have read).
    pub(crate) fn exchange(
        &self,
        what: &str,
        tid: u32,
        value: ([u32; 4], u64),
        f: impl FnOnce(&[([u32; 4], u64)]),
    ) {
        self.mma.lock().unwrap_or_else(|e| e.into_inner())[tid as usize] = value;
        self.meet(what);
        f(&self.mma.lock().unwrap_or_else(|e| e.into_inner()));
        self.meet(what);
    }

    fn poison(&self) {
        self.lock_meet().poisoned = true;
        self.cv.notify_all();
    }
}

thread_local! {
    #[allow(clippy::missing_const_for_thread_local)]
    static THREAD: Cell<(*const Collective, u32)> = Cell::new((core::ptr::null(), 0));
}

/// Runs `f` with the calling thread's warpgroup and thread index; panics
/// outside [`run_warpgroup`], naming `what` needs one.
pub(crate) fn with_thread<R>(what: &str, f: impl FnOnce(&Collective, u32) -> R) -> R {
    let (p, tid) = THREAD.with(|t| t.get());
    assert!(
        !p.is_null(),
        "baton cpu: {what} needs a simulated warpgroup thread (run it in baton::arch::cpu::run_warpgroup)"
    );
    // SAFETY: set by `run_warpgroup` for the lifetime of the thread's body;
    // the `Collective` outlives every thread of its scope.
    f(unsafe { &*p }, tid)
}

/// Runs one simulated warpgroup: 128 host threads, each standing for one
/// GPU thread (barrier arrivals count one each), running `body(tid)` with
/// `tid` in `0..128` (what `threadIdx.x % 128` is on the GPU), in the
/// calling thread's CTA (its shared memory, for the MMAs' descriptors).
/// Joins them; a panic in any is re-raised here (the others stop at their
/// next collective MMA instead of hanging).
///
/// ```
/// use baton::arch::cpu::{CpuBlock, run_warpgroup};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let block = CpuBlock::new(AtomicU32::new(0));
/// block.run_warps(1, |_warp, smem| {
///     run_warpgroup(|tid| {
///         smem.get().fetch_add(tid, Ordering::Relaxed);
///     });
/// });
/// assert_eq!(block.smem().get().load(Ordering::Relaxed), 127 * 128 / 2);
/// ```
pub fn run_warpgroup(body: impl Fn(u32) + Sync) {
    let ctx: ContextHandle = current_context();
    let collective = Collective::new();
    let (body, collective) = (&body, &collective);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WARPGROUP_THREADS)
            .map(|tid| {
                std::thread::Builder::new()
                    .name(format!("wg.t{tid}"))
                    .spawn_scoped(scope, move || {
                        struct Reset<'c>(&'c Collective);
                        impl Drop for Reset<'_> {
                            fn drop(&mut self) {
                                if std::thread::panicking() {
                                    self.0.poison();
                                }
                                THREAD.with(|t| t.set((core::ptr::null(), 0)));
                            }
                        }
                        THREAD.with(|t| t.set((collective as *const Collective, tid)));
                        let _reset = Reset(collective);
                        enter_context(ctx, || with_lanes(1, || body(tid)))
                    })
                    .expect("spawn warpgroup thread")
            })
            .collect();
        let panics: Vec<_> = handles.into_iter().filter_map(|h| h.join().err()).collect();
        // The first thread to panic makes the others panic at their next
        // collective: re-raise its message, not theirs.
        let echo = |p: &Box<dyn std::any::Any + Send>| {
            p.downcast_ref::<String>()
                .is_some_and(|m| m.contains(POISONED))
        };
        let first = panics
            .iter()
            .position(|p| !echo(p))
            .or((!panics.is_empty()).then_some(0));
        if let Some(i) = first {
            std::panic::resume_unwind(panics.into_iter().nth(i).expect("index in range"));
        }
    });
}

/// `shfl.sync.bfly.b32 x, mask` over a full warp: the value `x` of lane
/// `lane ^ mask` of the calling thread's warp (`mask < 32`). Collective
/// over the simulated warpgroup: all 128 threads must call it.
///
/// ```
/// use baton::arch::cpu::{CpuBlock, run_warpgroup, shfl_xor};
/// let block = CpuBlock::new(0u32);
/// block.run_warps(1, |_warp, _smem| {
///     run_warpgroup(|tid| {
///         assert_eq!(shfl_xor(tid, 1), tid ^ 1);
///         assert_eq!(shfl_xor(1000 + tid, 16), 1000 + (tid ^ 16));
///     });
/// });
/// ```
pub fn shfl_xor(x: u32, mask: u32) -> u32 {
    assert!(
        mask < 32,
        "baton cpu: shfl_xor lane mask {mask} is not below 32"
    );
    with_thread("shfl_xor", |coll, tid| {
        coll.shuffle.lock().unwrap_or_else(|e| e.into_inner())[tid as usize] = x;
        coll.meet("shfl_xor");
        let src = (tid & !31) | ((tid % 32) ^ mask);
        let v = coll.shuffle.lock().unwrap_or_else(|e| e.into_inner())[src as usize];
        coll.meet("shfl_xor");
        v
    })
}
