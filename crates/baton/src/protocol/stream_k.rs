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
//! # Split-K: the distributed reduction
//!
//! When the stream-K region is cut unit by unit at least
//! [`DISTRIBUTED_MIN_SPLITS`](super::tile_scheduler::DISTRIBUTED_MIN_SPLITS)
//! ways (split-K:
//! [`StreamKSchedule::distributed_workers`](super::tile_scheduler::StreamKSchedule::distributed_workers)
//! is `Some`; fewer ways keep the finalizer), each of a unit's `splits` workers has exactly one segment,
//! in that unit, and all of them are resident (the host sizes split-K
//! grids for that). Then no worker finalizes alone:
//!
//! | role | does | then |
//! |---|---|---|
//! | every worker `first + p` of the unit (`p` in `0..splits`) | writes its whole partial to its slot | [`FixupFlags::publish`]`(first + p, epoch)`: release store, once |
//! | the same worker, if its [`split_share`] is not empty | waits (acquire) for the flags of the unit's `splits − 1` other workers ([`FixupFlags::wait_unit`]) | sums the unit's `splits` partials of its share in worker order (`p = 0, 1, …`: worker 0's from its registers, the others' from their slots, its own read back), writes only its share of the output |
//!
//! Who writes a slot: its worker, once per launch. Who waits: each worker
//! with a non-empty share, for `splits − 1` flags. Who reads a slot: the
//! unit's workers, each only its share of it. Every output sub-tile is in
//! exactly one worker's share ([`split_share`]), so it is written once,
//! and every element is the same worker-order sum as the finalizer's (the
//! same bits). A worker waits only for workers of its own unit, all
//! resident and none waiting before it publishes, so it cannot deadlock.
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

    /// Split-K worker `first + position` of a unit of `splits` workers
    /// `first..first + splits`: waits (acquire) until every other worker of
    /// the unit published in `epoch`, in worker order; afterwards every
    /// other slot of the unit may be read. (On the GPU the waits are spread
    /// over a warpgroup's threads, then a CTA barrier.)
    ///
    /// ```
    /// use baton::protocol::stream_k::FixupFlags;
    /// use std::sync::atomic::AtomicU32;
    /// let cells: Vec<AtomicU32> = (0..6).map(|_| AtomicU32::new(0)).collect();
    /// let flags = FixupFlags::new(&cells);
    /// // Unit of workers 3, 4, 5; worker 4 (position 1) waits for 3 and 5.
    /// flags.publish(3, 9);
    /// flags.publish(5, 9);
    /// flags.wait_unit(3, 3, 1, 9);
    /// ```
    #[inline(always)]
    pub fn wait_unit(&self, first: u32, splits: u32, position: u32, epoch: u32) {
        let mut p = 0;
        while p < splits {
            if p != position {
                self.wait(first + p, epoch);
            }
            p += 1;
        }
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
            {
                // Two or more waiters at once (the split-K fixup's workers)
                // would otherwise hand the CPU to each other forever in
                // loom's free post-yield switches: the cut-off of the CPU
                // backend's spin-waits (`arch::cpu`'s
                // `LOOM_POLLS_BEFORE_SKIP`, 3 polls). A failed poll changes
                // no shared state.
                if polls == 3 {
                    loom::skip_branch();
                }
                loom::thread::yield_now();
            }
            #[cfg(not(all(loom, not(target_arch = "nvptx64"))))]
            core::hint::spin_loop();
        }
    }
}

/// The epilogue sub-tiles `begin..end` (of `subtiles` per consumer
/// warpgroup, `0..subtiles`) that worker `position` (`0..splits`) of a
/// split-K unit reduces and stores for consumer warpgroup `wg`, in the
/// distributed split-K fixup (see the module docs).
///
/// Contract: for each `wg`, the shares of positions `0..splits` are
/// disjoint, contiguous and cover `0..subtiles` exactly once; their sizes
/// differ by one at most (`subtiles · p / splits` boundaries). Warpgroup
/// `wg` rotates the positions by `wg · max(1, splits / (2 · subtiles))`,
/// so that when there are fewer sub-tiles than workers the two warpgroups'
/// shares land on different workers (more SMs read partials at once).
/// `splits ≥ 1`, `wg ≤ 1`.
///
/// ```
/// use baton::protocol::stream_k::split_share;
/// // 8 sub-tiles (BN = 256) over 8 workers: one each.
/// assert_eq!(split_share(3, 8, 8, 0), (3, 4));
/// // 4 sub-tiles (BN = 128) over 8 workers: workers 1, 3, 5, 7 take
/// // warpgroup 0's, workers 0, 2, 4, 6 warpgroup 1's.
/// assert_eq!(split_share(1, 8, 4, 0), (0, 1));
/// assert_eq!(split_share(0, 8, 4, 0), (0, 0));
/// assert_eq!(split_share(0, 8, 4, 1), (0, 1));
/// // 8 sub-tiles over 3 workers: 2, 3, 3.
/// assert_eq!(split_share(0, 3, 8, 0), (0, 2));
/// assert_eq!(split_share(2, 3, 8, 0), (5, 8));
/// ```
#[inline(always)]
pub const fn split_share(position: u32, splits: u32, subtiles: u32, wg: u32) -> (u32, u32) {
    let splits = if splits == 0 { 1 } else { splits };
    let spread = if subtiles == 0 {
        1
    } else {
        splits / (2 * subtiles)
    };
    let shift = if wg == 0 {
        0
    } else if spread == 0 {
        1
    } else {
        spread
    };
    // `shift < splits` (or ≤ 1 = splits): `position + shift < 2 · splits`,
    // one conditional subtraction.
    let mut p = position + shift;
    if p >= splits {
        p -= splits;
    }
    (subtiles * p / splits, subtiles * (p + 1) / splits)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::split_share;

    /// Every sub-tile in exactly one share, for every split count 2..=16,
    /// sub-tile count 1..=8 and warpgroup; shares contiguous, balanced.
    #[test]
    fn split_shares_cover_every_subtile_once() {
        for splits in 1..=16u32 {
            for subtiles in 1..=8u32 {
                for wg in 0..2 {
                    let mut seen = vec![0u32; subtiles as usize];
                    let mut sizes = Vec::new();
                    for p in 0..splits {
                        let (b, e) = split_share(p, splits, subtiles, wg);
                        assert!(b <= e && e <= subtiles, "{p} {splits} {subtiles} {wg}");
                        for j in b..e {
                            seen[j as usize] += 1;
                        }
                        sizes.push(e - b);
                    }
                    assert!(
                        seen.iter().all(|&c| c == 1),
                        "splits {splits} subtiles {subtiles} wg {wg}: {seen:?}"
                    );
                    let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                    assert!(hi - lo <= 1, "{sizes:?}");
                }
            }
        }
    }

    /// With fewer sub-tiles than workers, the two warpgroups' non-empty
    /// shares fall on different workers whenever there are enough workers
    /// (2 · subtiles ≤ splits).
    #[test]
    fn warpgroup_shares_spread_over_workers() {
        for subtiles in 1..=8u32 {
            for splits in (2 * subtiles)..=16 {
                let busy = |wg| {
                    (0..splits)
                        .filter(|&p| {
                            let (b, e) = split_share(p, splits, subtiles, wg);
                            e > b
                        })
                        .collect::<Vec<_>>()
                };
                let (w0, w1) = (busy(0), busy(1));
                assert!(
                    w0.iter().all(|p| !w1.contains(p)),
                    "splits {splits} subtiles {subtiles}: {w0:?} {w1:?}"
                );
            }
        }
    }
}
