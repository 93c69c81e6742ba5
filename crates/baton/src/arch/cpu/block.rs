//! A simulated thread block: shared memory plus warps as host threads.

#[cfg(not(loom))]
use super::lanes::{WARP_SIZE, with_lanes};
use super::sync::{AtomicU32, Ordering, yield_now};
use crate::smem::SharedRef;

/// A reusable block-wide barrier (`bar.sync 0` / `__syncthreads()`) for
/// `participants` host threads.
pub struct BlockBarrier {
    participants: u32,
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl BlockBarrier {
    /// A barrier for `participants` threads.
    pub fn new(participants: u32) -> Self {
        assert!(
            participants > 0,
            "a block barrier needs at least one participant"
        );
        Self {
            participants,
            arrived: AtomicU32::new(0),
            generation: AtomicU32::new(0),
        }
    }

    /// Waits until all participants arrived (acquire-release: orders the
    /// memory of all participants, like `bar.sync`).
    pub fn sync(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.participants {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
        } else {
            #[cfg(not(loom))]
            let start = std::time::Instant::now();
            #[cfg(loom)]
            let mut polls = 0u32;
            while self.generation.load(Ordering::Acquire) == generation {
                #[cfg(loom)]
                {
                    // see `sync::LOOM_POLLS_BEFORE_SKIP`
                    polls += 1;
                    if polls == super::sync::LOOM_POLLS_BEFORE_SKIP {
                        super::sync::skip_branch();
                    }
                }
                yield_now();
                #[cfg(not(loom))]
                if start.elapsed() > std::time::Duration::from_secs(60) {
                    panic!("baton: block barrier timed out: a warp never reached sync_block()");
                }
            }
        }
    }
}

/// One simulated warp of a [`CpuBlock`].
pub struct Warp<'b> {
    index: u32,
    barrier: &'b BlockBarrier,
}

impl<'b> Warp<'b> {
    /// A warp handle for custom runners (loom tests build their own threads).
    pub fn new(index: u32, barrier: &'b BlockBarrier) -> Self {
        Self { index, barrier }
    }

    /// Warp index in the block (what `threadIdx.x / 32` is on the GPU).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `__syncthreads()` across the block's warps.
    pub fn sync_block(&self) {
        self.barrier.sync()
    }
}

/// A simulated thread block owning its shared memory `S`.
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// let block = CpuBlock::new(AtomicU32::new(0));
/// block.run_warps(4, |warp, smem| {
///     smem.get().fetch_add(warp.index() + 1, Ordering::Relaxed);
///     warp.sync_block();
///     assert_eq!(smem.get().load(Ordering::Relaxed), 1 + 2 + 3 + 4);
/// });
/// ```
pub struct CpuBlock<S> {
    smem: S,
}

impl<S: Sync> CpuBlock<S> {
    /// A block whose shared memory is `smem`.
    pub fn new(smem: S) -> Self {
        Self { smem }
    }

    /// The block's shared memory.
    pub fn smem(&self) -> SharedRef<'_, S> {
        SharedRef::from_ref(&self.smem)
    }

    /// Runs `warps` warps, each a host thread standing for 32 lanes, and
    /// joins them. A panic in any warp (a timed-out wait, a protocol
    /// violation) is re-raised here.
    #[cfg(not(loom))]
    pub fn run_warps<F>(&self, warps: u32, body: F)
    where
        F: Fn(Warp<'_>, SharedRef<'_, S>) + Sync,
    {
        let barrier = BlockBarrier::new(warps);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..warps)
                .map(|index| {
                    let (barrier, body, smem) = (&barrier, &body, self.smem());
                    std::thread::Builder::new()
                        .name(format!("warp{index}"))
                        .spawn_scoped(scope, move || {
                            with_lanes(WARP_SIZE, || body(Warp::new(index, barrier), smem))
                        })
                        .expect("spawn warp thread")
                })
                .collect();
            let mut first_panic = None;
            for h in handles {
                if let Err(p) = h.join() {
                    first_panic.get_or_insert(p);
                }
            }
            if let Some(p) = first_panic {
                std::panic::resume_unwind(p);
            }
        });
    }
}
