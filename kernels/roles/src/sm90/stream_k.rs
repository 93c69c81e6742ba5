//! The stream-K walk's fixup between consumer warpgroups of different CTAs:
//! partial accumulators handed from contributors to a unit's finalizer
//! through global memory ([`StreamKFixup`], [`stream_k_fixup!`](crate::stream_k_fixup)),
//! or, for split-K units, reduced by all of the unit's workers, each its
//! share of the tile ([`StreamKFixup::reduce_split_share`]).

#[cfg(not(target_arch = "nvptx64"))]
use baton::arch::ptx::block_idx_x;
use baton::arch::ptx::{ld_global_v4_f32, named_barrier_sync, st_global_v4_f32};
use baton::protocol::stream_k::FixupFlags;

/// `%ctaid.x`, read where it is called: no `pure`, so LLVM neither
/// merges nor hoists it (see [`StreamKFixup::own_slot`]).
#[inline(always)]
fn block_idx_here() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: reads a special register; no memory is accessed.
        unsafe {
            core::arch::asm!("mov.u32 {r}, %ctaid.x;", r = out(reg32) r, options(nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    block_idx_x()
}

/// Workers' partials the distributed split-K fixup of a warpgroup of
/// `acc` accumulators per thread loads at once
/// ([`StreamKFixup::reduce_split_share`]'s `BATCH`): it reduces one 64 × 32
/// sub-tile at a time (16 values a thread per partial), so its
/// temporaries are `16 · batch` registers besides the `acc` live ones:
/// 4 up to 32 accumulators, 2 up to 64, 1 above (ptxas allocates the
/// consumers within the kernel's 168-register launch bound, not their 232
/// after `setmaxnreg`: 4 spilled 8 bytes at 64, 2 spilled 600 at 128).
///
/// ```
/// use baton_kernel_roles::sm90::stream_k::split_batch;
/// assert_eq!((split_batch(32), split_batch(64), split_batch(128)), (4, 2, 1));
/// ```
pub const fn split_batch(acc: usize) -> usize {
    if acc <= 32 {
        4
    } else if acc <= 64 {
        2
    } else {
        1
    }
}

/// Whether a cooperative kernel whose consumer warpgroups hold `acc`
/// accumulators per thread takes the distributed split-K fixup
/// ([`StreamKFixup::reduce_split_share`], with
/// `StoreEpilogue::store_range` and `CLoad::run_distributed`) for split
/// units: up to 64 (BN ≤ 128). Above, the second (ranged) epilogue beside
/// the batched one made ptxas spill 48–560 bytes within the 168-register
/// launch bound (BN = 192..256, session 24), so those kernels keep the
/// finalizer path.
///
/// ```
/// use baton_kernel_roles::sm90::stream_k::distributed_split_k;
/// assert!(distributed_split_k(64) && !distributed_split_k(128));
/// ```
pub const fn distributed_split_k(acc: usize) -> bool {
    acc <= 64
}

/// A launch's stream-K fixup state in global memory (see
/// `baton::protocol::stream_k`): one partial-accumulator slot and one flag
/// per consumer warpgroup of every CTA (`SLOTS_PER_CTA`: the kernel's role
/// table's `consumer_warpgroups`, 2 by default), and the launch's epoch.
///
/// Slot `s` holds a warpgroup's `128 × ACC` fp32 accumulators (`PARTS` of
/// them one after the other for two-wave tiles), thread-major
/// in 16-byte chunks: chunk `i` of thread `tid` at float `(i·128 + tid)·4`,
/// so each `st.global.v4` of the warpgroup writes 2 KiB contiguously.
/// Contributor and finalizer run the same kernel, so their register layouts
/// agree and the slot never needs the (row, column) of a value.
///
/// Protocol contract: a slot is written by one contributor warpgroup (all
/// 128 threads) once per launch and published by its thread 0 (release,
/// after a named barrier over the warpgroup); the finalizer's thread 0
/// waits for the launch's epoch (acquire), then a named barrier orders the
/// reads of all 128 threads after it.
///
/// ```ignore
/// // SAFETY: the kernel's stream-K buffers, per `new`'s contract.
/// let fixup = unsafe {
///     StreamKFixup::<{ GEMM_ROLES.consumer_warpgroups }>::new(sk_partials, sk_flags, sk_epoch)
/// };
/// ```
#[derive(Clone, Copy)]
pub struct StreamKFixup<const SLOTS_PER_CTA: u32 = 2> {
    partials: *mut f32,
    flags: *mut u32,
    epoch: u32,
}

impl<const SLOTS_PER_CTA: u32> StreamKFixup<SLOTS_PER_CTA> {
    /// The fixup state over `partials`, `flags` and `epoch`.
    ///
    /// # Safety
    /// Unless the schedule has no stream-K units (then nothing is
    /// accessed): with `slots` the kernel's slot count (`SLOTS_PER_CTA` per CTA),
    /// `partials` points at `slots · 128 · ACC` floats and
    /// `flags` at `slots` zero-initialized-once `u32`s, both global,
    /// 16-byte / 4-byte aligned, used by this launch alone; `epoch ≠ 0`
    /// differs from the previous launch's.
    ///
    /// ```ignore
    /// let fixup = unsafe { StreamKFixup::<2>::new(sk_partials, sk_flags, sk_epoch) };
    /// ```
    #[inline(always)]
    pub unsafe fn new(partials: *mut f32, flags: *mut u32, epoch: u32) -> Self {
        Self {
            partials,
            flags,
            epoch,
        }
    }

    /// Slot of consumer warpgroup `wg` of the `cta`-th CTA of the 1-D grid:
    /// `cta · SLOTS_PER_CTA + wg`.
    ///
    /// ```ignore
    /// let slot = fixup.slot_of(c * cluster_m + rank, wg);
    /// ```
    #[inline(always)]
    pub fn slot_of(&self, cta: u32, wg: u32) -> u32 {
        cta * SLOTS_PER_CTA + wg
    }

    /// This CTA's slot for consumer warpgroup `wg`
    /// ([`slot_of`](Self::slot_of) this block).
    /// `blockIdx.x` is read here, where the slot is used (an asm without
    /// `pure`): as a plain value LLVM hoists the slot's flag address to
    /// the kernel's start and keeps it through the main loop (the FP8
    /// 128×256 kernel, at its register limit, spilled it).
    ///
    /// ```ignore
    /// let slot = fixup.own_slot(wg);
    /// ```
    #[inline(always)]
    pub fn own_slot(&self, wg: u32) -> u32 {
        self.slot_of(block_idx_here(), wg)
    }

    /// The flag of `slot` alone (a one-flag view: no bounds check, hence
    /// no panic path, in the kernel).
    ///
    /// # Safety
    /// `slot < slots`.
    #[inline(always)]
    unsafe fn flag(&self, slot: u32) -> FixupFlags<'_> {
        // SAFETY: per `new`'s contract and slot < slots.
        unsafe { FixupFlags::from_raw(self.flags.add(slot as usize), 1) }
    }

    /// Contributor warpgroup: writes its partial accumulators to `slot`,
    /// orders all 128 threads' writes before thread 0 (named barrier `bar`
    /// over the warpgroup), and thread 0 publishes the flag (release).
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup; `slot < slots` is this
    /// warpgroup's own, written once per launch.
    ///
    /// ```ignore
    /// unsafe { fixup.publish::<64>(fixup.own_slot(wg), tid, 1 + wg, &acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn publish<const ACC: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        acc: &[f32; ACC],
    ) {
        // SAFETY: forwarded.
        unsafe { self.publish_parts::<ACC, 1>(slot, tid, bar, [acc]) }
    }

    /// [`publish`](Self::publish) of a warpgroup whose accumulators are
    /// `PARTS` arrays of `ACC` (the two waves of a two-wave tile): part `p`
    /// goes to floats `p · 128 · ACC ..` of a slot of `PARTS · 128 · ACC`.
    ///
    /// # Safety
    /// As [`publish`](Self::publish), with `partials` sized for slots of
    /// `PARTS · 128 · ACC` floats.
    ///
    /// ```ignore
    /// unsafe { fixup.publish_parts::<64, 2>(slot, tid, 1 + wg, [&acc, &acc_hi]) };
    /// ```
    #[inline(always)]
    pub unsafe fn publish_parts<const ACC: usize, const PARTS: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        accs: [&[f32; ACC]; PARTS],
    ) {
        let base = self.slot_ptr::<ACC, PARTS>(slot);
        baton::unroll!(P in [0, 1] {
          if (P as usize) < PARTS {
            let acc = accs[P as usize];
            let part = base.wrapping_add(P as usize * 128 * ACC);
            baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
                if (I as usize) < ACC / 4 {
                    let i = 4 * I as usize;
                    // SAFETY: inside this slot (part P, chunk I of thread
                    // tid < 128).
                    unsafe {
                        st_global_v4_f32(
                            part.add((I * 128 + tid) as usize * 4),
                            [acc[i], acc[i + 1], acc[i + 2], acc[i + 3]],
                        )
                    };
                }
            });
          }
        });
        named_barrier_sync(bar, 128);
        if tid == 0 {
            // SAFETY: slot < slots (caller).
            unsafe { self.flag(slot) }.publish(0, self.epoch);
        }
    }

    /// Finalizer warpgroup: waits (thread 0, acquire; then named barrier
    /// `bar`) until `slot` is published in this launch, and adds it into
    /// `acc`.
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup; `slot < slots` is
    /// published by a contributor of this launch (the schedule's
    /// `contributors`), or this waits forever.
    ///
    /// ```ignore
    /// unsafe { fixup.accumulate::<64>(slot, tid, 1 + wg, &mut acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn accumulate<const ACC: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        acc: &mut [f32; ACC],
    ) {
        // SAFETY: forwarded.
        unsafe { self.accumulate_parts::<ACC, 1>(slot, tid, bar, [acc]) }
    }

    /// [`accumulate`](Self::accumulate) into `PARTS` accumulator arrays
    /// (the layout of [`publish_parts`](Self::publish_parts)).
    ///
    /// # Safety
    /// As [`accumulate`](Self::accumulate), with slots of
    /// `PARTS · 128 · ACC` floats.
    ///
    /// ```ignore
    /// unsafe { fixup.accumulate_parts::<64, 2>(slot, tid, 1 + wg, [&mut acc, &mut acc_hi]) };
    /// ```
    #[inline(always)]
    pub unsafe fn accumulate_parts<const ACC: usize, const PARTS: usize>(
        &self,
        slot: u32,
        tid: u32,
        bar: u32,
        accs: [&mut [f32; ACC]; PARTS],
    ) {
        if tid == 0 {
            // SAFETY: slot < slots (caller).
            unsafe { self.flag(slot) }.wait(0, self.epoch);
        }
        named_barrier_sync(bar, 128);
        let base = self.slot_ptr::<ACC, PARTS>(slot);
        baton::unroll!(P in [0, 1] {
          if (P as usize) < PARTS {
            let acc = &mut *accs[P as usize];
            let part = base.wrapping_add(P as usize * 128 * ACC);
            baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
                if (I as usize) < ACC / 4 {
                    let i = 4 * I as usize;
                    // SAFETY: inside the slot; published (acquire) and
                    // ordered before every thread by the barrier.
                    let v = unsafe { ld_global_v4_f32(part.add((I * 128 + tid) as usize * 4)) };
                    acc[i] += v[0];
                    acc[i + 1] += v[1];
                    acc[i + 2] += v[2];
                    acc[i + 3] += v[3];
                }
            });
          }
        });
    }

    /// Finalizer warpgroup of a unit whose contributors are workers
    /// `first..=last` (slot of worker `c`: `(c · cluster_m + rank) · 2 +
    /// wg`): waits for all of them at once — thread `t` acquires the flags
    /// of contributors `first + t`, `first + t + 128`, …, then named barrier
    /// `bar` orders every thread's reads after all those acquires — and
    /// adds their partials into `acc` in worker order, loading the partials
    /// of 4 contributors together. The sum is the same, in the same order,
    /// as [`accumulate`](Self::accumulate) over `first..=last` (the same
    /// bits), but the hand-overs overlap: one flag round trip in all and a
    /// load round trip per 4 contributors, instead of both per contributor
    /// (session 9 measured ≈ 0.65 µs per contributor in sequence).
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup; every worker in
    /// `first..=last` contributes to this unit in this launch
    /// (`StreamKSchedule::contributors`), its slot `< slots`, or this waits
    /// forever.
    ///
    /// ```ignore
    /// unsafe { fixup.accumulate_all::<8>((first, last), (1, 0, wg), tid, 1 + wg, &mut acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn accumulate_all<const ACC: usize>(
        &self,
        contributors: (u32, u32),
        ids: (u32, u32, u32),
        tid: u32,
        bar: u32,
        acc: &mut [f32; ACC],
    ) {
        // SAFETY: forwarded.
        unsafe { self.accumulate_all_batched::<ACC, 4>(contributors, ids, tid, bar, acc) }
    }

    /// [`accumulate_all`](Self::accumulate_all) loading the partials of
    /// `BATCH` (1, 2 or 4) contributors together: the same flags, barrier
    /// and sum (worker order, element by element); a smaller batch keeps
    /// fewer loads in flight, for warpgroups whose accumulators leave no
    /// registers for 4 (the cooperative BF16 kernels: `ACC` up to 128).
    ///
    /// # Safety
    /// As [`accumulate_all`](Self::accumulate_all).
    ///
    /// ```ignore
    /// unsafe { fixup.accumulate_all_batched::<64, 1>((first, last), (2, rank, wg), tid, 1 + wg, &mut acc) };
    /// ```
    #[inline(always)]
    pub unsafe fn accumulate_all_batched<const ACC: usize, const BATCH: usize>(
        &self,
        (first, last): (u32, u32),
        (cluster_m, rank, wg): (u32, u32, u32),
        tid: u32,
        bar: u32,
        acc: &mut [f32; ACC],
    ) {
        const { assert!(BATCH == 1 || BATCH == 2 || BATCH == 4) };
        let slot = |c: u32| self.slot_of(c * cluster_m + rank, wg);
        let mut c = first + tid;
        while c <= last {
            // SAFETY: worker c contributes in this launch (caller): its
            // slot is in range and published before the kernel ends.
            unsafe { self.flag(slot(c)) }.wait(0, self.epoch);
            c += 128;
        }
        named_barrier_sync(bar, 128);
        let mut c = first;
        while BATCH > 1 && c + (BATCH as u32 - 1) <= last {
            let mut p = [core::ptr::null_mut::<f32>(); 4];
            baton::unroll!(J in [0, 1, 2, 3] {
                if (J as usize) < BATCH {
                    p[J as usize] = self.slot_ptr::<ACC, 1>(slot(c + J));
                }
            });
            baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
                if (I as usize) < ACC / 4 {
                    let i = 4 * I as usize;
                    let at = (I * 128 + tid) as usize * 4;
                    let mut v = [[0.0f32; 4]; 4];
                    baton::unroll!(J in [0, 1, 2, 3] {
                        if (J as usize) < BATCH {
                            // SAFETY: inside each slot (chunk I of thread
                            // tid < 128); published (acquire) and ordered
                            // before every thread by the barrier.
                            v[J as usize] = unsafe { ld_global_v4_f32(p[J as usize].add(at)) };
                        }
                    });
                    // Worker order, element by element.
                    baton::unroll!(E in [0, 1, 2, 3] {
                        baton::unroll!(J in [0, 1, 2, 3] {
                            if (J as usize) < BATCH {
                                acc[i + E as usize] += v[J as usize][E as usize];
                            }
                        });
                    });
                }
            });
            c += BATCH as u32;
        }
        while c <= last {
            let part = self.slot_ptr::<ACC, 1>(slot(c));
            baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
                if (I as usize) < ACC / 4 {
                    let i = 4 * I as usize;
                    // SAFETY: as above.
                    let v = unsafe { ld_global_v4_f32(part.add((I * 128 + tid) as usize * 4)) };
                    acc[i] += v[0];
                    acc[i + 1] += v[1];
                    acc[i + 2] += v[2];
                    acc[i + 3] += v[3];
                }
            });
            c += 1;
        }
    }

    /// The distributed split-K fixup of one consumer warpgroup
    /// (`baton::protocol::stream_k`, module docs): worker `first +
    /// position` of a unit of `splits` workers (`StreamKSchedule::distributed_workers`)
    /// publishes its whole partial (`acc`) to its own slot
    /// ([`publish`](Self::publish): all 128 threads write, named barrier
    /// `bar`, thread 0's release store); then, unless its share
    /// `begin..end` of the warpgroup's `ACC / 16` sub-tiles
    /// (`baton::protocol::stream_k::split_share`) is empty, thread `t <
    /// splits` (`t ≠ position`) acquires worker `first + t`'s flag, named
    /// barrier `bar`, and the warpgroup sums the share's registers (sub-tile
    /// `J`: `acc[16J..16J + 16]`, chunks `4J..4J + 4`) over the unit's
    /// `splits` partials in worker order — worker 0's from `acc` when this
    /// is worker 0, else from its slot; its own read back — loading the
    /// partials of [`split_batch`]`(ACC)` workers at once. The share's
    /// registers then hold the same bits as
    /// [`accumulate_all`](Self::accumulate_all) in worker 0 (the
    /// finalizer's sum); the other registers are left as they were (this
    /// worker's partial): store only the share.
    ///
    /// Who writes: each worker its own slot, once; who waits: each worker
    /// with a non-empty share, for `splits − 1` flags; who reads: each
    /// worker, its share of every slot of the unit.
    ///
    /// # Safety
    /// Called by all 128 threads of the warpgroup, for the one split
    /// segment of this worker (`distributed_workers` of its unit is `Some((first,
    /// splits))`, `position = worker − first`); every worker of the unit
    /// runs it in this launch and all of them are resident (split-K
    /// grids), or a wait never ends; `begin ≤ end ≤ ACC / 16`.
    ///
    /// ```ignore
    /// let (first, splits) = sched.distributed_workers(seg.unit).unwrap();
    /// let share = split_share(work.worker - first, splits, ACC as u32 / 16, wg);
    /// unsafe { fixup.reduce_split_share::<64>((first, splits, work.worker - first), (CLUSTER_M, rank, wg), tid, 1 + wg, share, &mut acc) };
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce_split_share<const ACC: usize>(
        &self,
        unit: (u32, u32, u32),
        ids: (u32, u32, u32),
        tid: u32,
        bar: u32,
        share: (u32, u32),
        acc: &mut [f32; ACC],
    ) {
        // The batch is a const argument: each count spelled out, the
        // branch on the constant folds.
        // SAFETY: forwarded.
        unsafe {
            if split_batch(ACC) == 4 {
                self.reduce_split_share_batched::<ACC, 4>(unit, ids, tid, bar, share, acc)
            } else if split_batch(ACC) == 2 {
                self.reduce_split_share_batched::<ACC, 2>(unit, ids, tid, bar, share, acc)
            } else {
                self.reduce_split_share_batched::<ACC, 1>(unit, ids, tid, bar, share, acc)
            }
        }
    }

    /// [`reduce_split_share`](Self::reduce_split_share) loading `BATCH`
    /// (1, 2 or 4) workers' partials at once (that one: [`split_batch`]).
    ///
    /// # Safety
    /// As [`reduce_split_share`](Self::reduce_split_share).
    ///
    /// ```ignore
    /// unsafe { fixup.reduce_split_share_batched::<64, 4>((first, splits, position), (2, rank, wg), tid, 1 + wg, share, &mut acc) };
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce_split_share_batched<const ACC: usize, const BATCH: usize>(
        &self,
        (first, splits, position): (u32, u32, u32),
        (cluster_m, rank, wg): (u32, u32, u32),
        tid: u32,
        bar: u32,
        (begin, end): (u32, u32),
        acc: &mut [f32; ACC],
    ) {
        const { assert!(BATCH == 1 || BATCH == 2 || BATCH == 4) };
        // SAFETY: all 128 threads; our own slot (this CTA's, warpgroup wg),
        // written once per launch (one split segment per worker).
        unsafe { self.publish::<ACC>(self.own_slot(wg), tid, bar, acc) };
        if begin >= end {
            return;
        }
        let slot = |c: u32| self.slot_of((first + c) * cluster_m + rank, wg);
        let mut c = tid;
        while c < splits {
            if c != position {
                // SAFETY: worker first + c is of this unit and publishes in
                // this launch (caller): its slot is in range.
                unsafe { self.flag(slot(c)) }.wait(0, self.epoch);
            }
            c += 128;
        }
        named_barrier_sync(bar, 128);
        baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
          if (J as usize) < ACC / 16 && J >= begin && J < end {
            let at = |q: u32| ((4 * J + q) * 128 + tid) as usize * 4;
            if position != 0 {
                // Worker 0's partial first (the finalizer's registers).
                let p0 = self.slot_ptr::<ACC, 1>(slot(0));
                baton::unroll!(Q in [0, 1, 2, 3] {
                    // SAFETY: inside the slot (chunk 4J + Q of thread tid);
                    // published (acquire) and ordered by the barrier.
                    let v = unsafe { ld_global_v4_f32(p0.add(at(Q))) };
                    let i = 16 * J as usize + 4 * Q as usize;
                    acc[i] = v[0];
                    acc[i + 1] = v[1];
                    acc[i + 2] = v[2];
                    acc[i + 3] = v[3];
                });
            }
            let mut c = 1;
            while BATCH > 1 && c + (BATCH as u32 - 1) < splits {
                let mut p = [core::ptr::null_mut::<f32>(); 4];
                baton::unroll!(B in [0, 1, 2, 3] {
                    if (B as usize) < BATCH {
                        p[B as usize] = self.slot_ptr::<ACC, 1>(slot(c + B));
                    }
                });
                let mut v = [[[0.0f32; 4]; 4]; 4];
                baton::unroll!(B in [0, 1, 2, 3] {
                    if (B as usize) < BATCH {
                        baton::unroll!(Q in [0, 1, 2, 3] {
                            // SAFETY: as above (this worker's own slot is
                            // its own writes, program order).
                            v[B as usize][Q as usize] = unsafe { ld_global_v4_f32(p[B as usize].add(at(Q))) };
                        });
                    }
                });
                // Worker order, element by element.
                baton::unroll!(Q in [0, 1, 2, 3] {
                    baton::unroll!(E in [0, 1, 2, 3] {
                        baton::unroll!(B in [0, 1, 2, 3] {
                            if (B as usize) < BATCH {
                                acc[16 * J as usize + 4 * Q as usize + E as usize] += v[B as usize][Q as usize][E as usize];
                            }
                        });
                    });
                });
                c += BATCH as u32;
            }
            while c < splits {
                let part = self.slot_ptr::<ACC, 1>(slot(c));
                baton::unroll!(Q in [0, 1, 2, 3] {
                    // SAFETY: as above.
                    let v = unsafe { ld_global_v4_f32(part.add(at(Q))) };
                    let i = 16 * J as usize + 4 * Q as usize;
                    acc[i] += v[0];
                    acc[i + 1] += v[1];
                    acc[i + 2] += v[2];
                    acc[i + 3] += v[3];
                });
                c += 1;
            }
          }
        });
    }

    #[inline(always)]
    fn slot_ptr<const ACC: usize, const PARTS: usize>(&self, slot: u32) -> *mut f32 {
        const { assert!(ACC % 4 == 0 && ACC <= 128 && PARTS >= 1 && PARTS <= 2) };
        self.partials
            .wrapping_add(slot as usize * 128 * ACC * PARTS)
    }
}

/// The stream-K fixup step of a consumer warpgroup after the main loop of
/// segment `$seg` (all 128 threads; named barrier `1 + $wg`), inside the
/// loop over `$sched.segments(worker)`:
///
/// * a contributor (its segment does not start the unit) publishes its
///   partial to its own slot and `continue`s: it has no epilogue;
/// * a finalizer of a split unit adds the contributors' partials (the same
///   rank's CTA of each worker in `StreamKSchedule::contributors`, in
///   worker order), then falls through to the epilogue, as does a whole unit.
///
/// Slots are per consumer warpgroup (`$wg`) of each CTA; worker
/// `w`'s CTA of rank `$rank` is CTA `w · $cluster_m + $rank` of the 1-D grid.
/// (A macro, not a function: the same instructions as written inline — a
/// function of the same body made ptxas spill in the 128×256 kernel — and
/// the contributor's `continue` skips the rest of the caller's loop body.)
///
/// Safety: the kernel's stream-K buffers per [`StreamKFixup::new`];
/// `$seg` comes from this launch's schedule, walked in order.
///
/// ```ignore
/// for seg in work.segments() {
///     /* main loop into `acc` */
///     baton_kernel_roles::stream_k_fixup!(fixup, work.sched, seg, CLUSTER_M, work.rank, wg, tid, acc, ACC);
///     /* epilogue: whole units and finalizers only */
/// }
/// ```
#[macro_export]
macro_rules! stream_k_fixup {
    ($fixup:expr, $sched:expr, $seg:expr, $cluster_m:expr, $rank:expr, $wg:expr, $tid:expr, $acc:expr, $acc_len:expr) => {
        $crate::stream_k_fixup!(@parts $fixup, $sched, $seg, $cluster_m, $rank, $wg, $tid, [$acc], $acc_len, 1);
    };
    // A warpgroup with `$parts` accumulator arrays (two-wave tiles: both
    // waves' accumulators, in slots of `$parts · 128 · $acc_len` floats).
    (@parts $fixup:expr, $sched:expr, $seg:expr, $cluster_m:expr, $rank:expr, $wg:expr, $tid:expr, [$($acc:expr),+], $acc_len:expr, $parts:expr) => {
        let bar = 1 + $wg;
        if $seg.is_contributor() {
            let slot = $fixup.own_slot($wg);
            // SAFETY: all 128 threads; the slot is ours, published once per
            // launch (a worker has one contributor segment at most).
            unsafe { $fixup.publish_parts::<{ $acc_len }, { $parts }>(slot, $tid, bar, [$(&$acc),+]) };
            continue;
        }
        if !$seg.is_whole() {
            let (first, last) = $sched.contributors($seg.unit);
            for c in first..=last {
                let slot = $fixup.slot_of(c * $cluster_m + $rank, $wg);
                // SAFETY: all 128 threads; worker c contributes to this unit
                // in this launch (StreamKSchedule::contributors).
                unsafe { $fixup.accumulate_parts::<{ $acc_len }, { $parts }>(slot, $tid, bar, [$(&mut $acc),+]) };
            }
        }
    };
}

/// [`stream_k_fixup!`](crate::stream_k_fixup) with the finalizer's
/// hand-overs overlapped ([`StreamKFixup::accumulate_all`]): the same
/// contributor step, the same sum in the same order, for warpgroups of one
/// accumulator array (the swap-AB kernels, whose many small split-K units
/// made the in-turn hand-over the cost).
///
/// ```ignore
/// baton_kernel_roles::stream_k_fixup_overlapped!(fixup, work.sched, seg, 1, 0, wg, tid, acc, ACC);
/// ```
#[macro_export]
macro_rules! stream_k_fixup_overlapped {
    ($fixup:expr, $sched:expr, $seg:expr, $cluster_m:expr, $rank:expr, $wg:expr, $tid:expr, $acc:expr, $acc_len:expr) => {
        $crate::stream_k_fixup_overlapped!(
            $fixup, $sched, $seg, $cluster_m, $rank, $wg, $tid, $acc, $acc_len, 4
        );
    };
    // Partials loaded `$batch` (1, 2 or 4) contributors at a time
    // (`StreamKFixup::accumulate_all_batched`).
    ($fixup:expr, $sched:expr, $seg:expr, $cluster_m:expr, $rank:expr, $wg:expr, $tid:expr, $acc:expr, $acc_len:expr, $batch:expr) => {
        let bar = 1 + $wg;
        if $seg.is_contributor() {
            let slot = $fixup.own_slot($wg);
            // SAFETY: all 128 threads; the slot is ours, published once per
            // launch (a worker has one contributor segment at most).
            unsafe { $fixup.publish::<{ $acc_len }>(slot, $tid, bar, &$acc) };
            continue;
        }
        if !$seg.is_whole() {
            let contributors = $sched.contributors($seg.unit);
            // SAFETY: all 128 threads; the workers of `contributors`
            // contribute to this unit in this launch.
            unsafe {
                $fixup.accumulate_all_batched::<{ $acc_len }, { $batch }>(
                    contributors,
                    ($cluster_m, $rank, $wg),
                    $tid,
                    bar,
                    &mut $acc,
                )
            };
        }
    };
}
