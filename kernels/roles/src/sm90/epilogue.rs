//! The TMA-store epilogue role of a Hopper GEMM consumer warpgroup: its
//! `64 × N` accumulators go to D in sub-tiles of 64 rows × 32 columns
//! through 64-byte-swizzled shared buffers and TMA stores — a ring of D
//! buffers (beta = 0), or in place over the C sub-tiles of the
//! warpgroup's `EpiLoadPipeline` (`D = alpha·acc + beta·C`).

use baton::arch::ptx::tma::{
    TensorMap, store_2d, store_3d, store_commit_group, store_wait_group_read,
};
use baton::arch::ptx::{
    fence_proxy_async_shared, ld_shared_u32, named_barrier_sync, st_shared_u32,
};
use baton::epi_load::EpiLoadPipeline;
use baton::smem::SharedRef;
use baton::tile_pipeline::Tile;
use core::arch::asm;

/// Epilogue sub-tile rows: one warpgroup's accumulator rows.
pub const SUB_ROWS: usize = 64;
/// Epilogue sub-tile columns (64-byte rows of bf16).
pub const SUB_COLS: usize = 32;
/// One epilogue sub-tile buffer (bf16, 64-byte swizzle).
pub type SubTile = Tile<u16, SUB_ROWS, SUB_COLS>;

/// Packs two f32 into a bf16x2 word (round to nearest even), `lo` in the
/// low half: the element at the lower address.
///
/// ```ignore
/// assert_eq!(pack_bf16x2(1.0, -2.0), 0xC000_3F80);
/// ```
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: pure conversion.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
    };
    r
}

/// Byte offset of (row, 4-byte column pair `pair`) in a 64×32 bf16 sub-tile
/// with TMA's 64-byte swizzle (16-byte chunk index XOR bits 1..2 of the row).
///
/// ```ignore
/// assert_eq!(swizzled64(0, 4), 16);
/// assert_eq!(swizzled64(2, 4), 128); // row 2: chunk 1 ^ 1 = 0
/// ```
#[inline(always)]
pub fn swizzled64(row: u32, pair: u32) -> u32 {
    let byte = pair * 4;
    row * 64 + ((((byte >> 4) ^ (row >> 1)) & 3) << 4) + (byte & 15)
}

/// `cp.async.bulk.wait_group.read RING - 1`: at most `RING - 1` TMA stores
/// of this thread are still reading their buffers, so the oldest of a ring
/// of `RING` (1..=8) is free ([`wait_read_pending`] with a constant: it
/// folds to the one instruction).
///
/// ```ignore
/// if tid == 0 { wait_ring_read::<4>(); } // cp.async.bulk.wait_group.read 3
/// ```
#[inline(always)]
pub fn wait_ring_read<const RING: usize>() {
    const { assert!(RING >= 1 && RING <= 8) };
    wait_read_pending(RING as u32 - 1)
}

/// `cp.async.bulk.wait_group.read n` for an `n` (0..=7, larger waits for
/// 7) that folds to a constant where this is inlined: at most `n` commit
/// groups of this thread's TMA stores still read their buffers. (A `match`
/// because the wait count is an immediate.)
///
/// ```ignore
/// if tid == 0 { wait_read_pending(8 / 4 - 1); } // cp.async.bulk.wait_group.read 1
/// ```
#[inline(always)]
pub fn wait_read_pending(n: u32) {
    match n {
        0 => store_wait_group_read::<0>(),
        1 => store_wait_group_read::<1>(),
        2 => store_wait_group_read::<2>(),
        3 => store_wait_group_read::<3>(),
        4 => store_wait_group_read::<4>(),
        5 => store_wait_group_read::<5>(),
        6 => store_wait_group_read::<6>(),
        _ => store_wait_group_read::<7>(),
    }
}

/// `x`, through an asm register move without `pure`: LLVM neither merges
/// nor hoists it, so what is computed from it stays where it is used.
///
/// ```ignore
/// let tid = here(self.tid); // offsets from `tid` are not hoisted
/// ```
#[inline(always)]
fn here(x: u32) -> u32 {
    let y: u32;
    // SAFETY: a register-to-register move; no memory is accessed.
    unsafe {
        asm!("mov.u32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(nomem, nostack))
    };
    y
}

/// Where the epilogue's C comes from: nowhere ([`NoC`], D = alpha·acc) or
/// the warpgroup's `EpiLoadPipeline` ([`LoadedC`]).
pub trait CSource {
    /// Whether C is read (`beta ≠ 0`).
    fn active(&self) -> bool;
    /// `beta`.
    fn beta(&self) -> f32;
    /// Waits until the next C sub-tile is loaded; its stage index.
    fn wait_full(&mut self) -> u32;
    /// Hands stage `slot` back to the C-load warp: one arrival, by the
    /// signalling thread.
    fn release(&mut self, slot: u32, signaller: bool);
    /// Steps to the next C stage.
    fn step(&mut self);
}

/// No C: `D = alpha·acc` (the ring of D buffers).
///
/// ```ignore
/// unsafe { epilogue.store(&acc, 1.0, &mut NoC, 0, 4, |j| (col0 + 32 * j as i32, row0)) };
/// ```
pub struct NoC;

impl CSource for NoC {
    #[inline(always)]
    fn active(&self) -> bool {
        false
    }
    #[inline(always)]
    fn beta(&self) -> f32 {
        0.0
    }
    #[inline(always)]
    fn wait_full(&mut self) -> u32 {
        0
    }
    #[inline(always)]
    fn release(&mut self, _slot: u32, _signaller: bool) {}
    #[inline(always)]
    fn step(&mut self) {}
}

/// C from the warpgroup's `EpiLoadPipeline` (filled by
/// [`CLoad`](super::c_load::CLoad)) when `beta ≠ 0`; the D sub-tile is
/// written over the C sub-tile it was computed from.
///
/// ```ignore
/// let mut c = LoadedC { pipe: epi_for(wg), beta };
/// ```
pub struct LoadedC<'a, const RING: usize> {
    /// This warpgroup's C pipeline (consumer side).
    pub pipe: EpiLoadPipeline<'a, RING>,
    /// `beta` (C is read only when it is not 0).
    pub beta: f32,
}

impl<const RING: usize> CSource for LoadedC<'_, RING> {
    #[inline(always)]
    fn active(&self) -> bool {
        self.beta != 0.0
    }
    #[inline(always)]
    fn beta(&self) -> f32 {
        self.beta
    }
    #[inline(always)]
    fn wait_full(&mut self) -> u32 {
        self.pipe.wait_producer();
        self.pipe.consumer_stage()
    }
    #[inline(always)]
    fn release(&mut self, slot: u32, signaller: bool) {
        self.pipe
            .pipeline()
            .consumer_mbar(slot)
            .arrive_if(signaller);
    }
    #[inline(always)]
    fn step(&mut self) {
        self.pipe.consumer_step();
    }
}

/// Where a sub-tile goes in D: `(column, row)` of a rank-2 map, or
/// `(column, row, matrix)` of a rank-3 (batched) one — the TMA store of
/// that rank.
///
/// ```ignore
/// unsafe { epilogue.store(&acc, alpha, &mut c, d_next, 8, |j| (col0 + 32 * j as i32, row0, batch)) };
/// ```
pub trait StoreOrigin: Copy {
    /// TMA-stores the sub-tile `src` at this origin of `map`.
    ///
    /// # Safety
    /// As `store_2d` / `store_3d`: `map` is a valid map of this rank and
    /// `src` holds the finished sub-tile, fenced for the async proxy.
    unsafe fn store(self, map: *const TensorMap, src: SharedRef<'_, SubTile>);
}

impl StoreOrigin for (i32, i32) {
    #[inline(always)]
    unsafe fn store(self, map: *const TensorMap, src: SharedRef<'_, SubTile>) {
        // SAFETY: forwarded to the caller.
        unsafe { store_2d(map, src, self.0, self.1) }
    }
}

impl StoreOrigin for (i32, i32, i32) {
    #[inline(always)]
    unsafe fn store(self, map: *const TensorMap, src: SharedRef<'_, SubTile>) {
        // SAFETY: forwarded to the caller.
        unsafe { store_3d(map, src, self.0, self.1, self.2) }
    }
}

/// The TMA-store epilogue of one consumer warpgroup (all 128 threads run
/// it), over its `RING` sub-tile buffers.
///
/// Protocol contract:
/// * beta = 0: D rotates through the `RING` buffers across tiles
///   (`d_next` counts the sub-tiles stored so far), in batches of up to
///   `RING` sub-tiles with [`store`](Self::store), one at a time with [`store_one_at_a_time`](Self::store_one_at_a_time)): before
///   writing a batch the signalling thread waits until the batch's buffers
///   are read (`cp.async.bulk.wait_group.read`: 0 groups of stores still
///   reading for a whole-ring batch, `RING − 1` for one sub-tile),
///   then a named barrier (`1 + wg`, 128 threads) lets the warpgroup write
///   the batch into distinct buffers; after the writes one
///   `fence.proxy.async.shared` and one named barrier, then the signalling
///   thread issues the batch's stores as one commit group;
/// * beta ≠ 0: sub-tile `j` is C stage `wait_full()` of the warpgroup's
///   `EpiLoadPipeline`; every thread reads its C values and writes D over
///   them (same addresses, same thread); the stage goes back to the C-load
///   warp (one arrival, count 1) once the store has read it — one sub-tile
///   later, the tile's last at the tile's end — so up to `RING` C loads are
///   in flight and D needs no buffer of its own.
///
/// With beta ≠ 0, after each sub-tile's writes: `fence.proxy.async.shared`,
/// the named barrier, and the signalling thread issues the TMA store and
/// commits it.
/// TMA clips ragged edges; stores drain while the warpgroup starts the
/// next tile's main loop (wait for them all before exit:
/// `store_wait_group::<0>()`). Build it per tile, after the main loop
/// (`bufs` from `tiles.at(wg)` there): a bounds check ahead of the main
/// loop costs main-loop instructions (measured).
///
/// ```ignore
/// let epilogue = StoreEpilogue { bufs: epi_tiles.at(wg), map_d: tma_d, wg, tid };
/// unsafe { epilogue.store(&acc, alpha, &mut c, d_next, BN as u32 / 32, |j| (col0 + 32 * j as i32, row0)) };
/// ```
pub struct StoreEpilogue<'a, const RING: usize> {
    /// This warpgroup's sub-tile buffers (the C stages with beta ≠ 0).
    pub bufs: SharedRef<'a, [SubTile; RING]>,
    /// D's tensor map (bf16, box {32, 64}, 64-byte swizzle).
    pub map_d: *const TensorMap,
    /// Consumer warpgroup (0 or 1): named barrier `1 + wg`.
    pub wg: u32,
    /// Thread index in the warpgroup (0..128); thread 0 signals.
    pub tid: u32,
}

impl<const RING: usize> StoreEpilogue<'_, RING> {
    /// Stores `subtiles` (≤ 8) sub-tiles of a `wgmma` accumulator `acc`
    /// (registers `16J + 4Q + 2H (+1)` hold row `row + 8H`, columns
    /// `8Q + 2(lane % 4) (+1)` of sub-tile `J`) as bf16
    /// `alpha·acc + beta·C`; `origin(J)` is sub-tile `J`'s (column, row) in
    /// D, or (column, row, matrix) of a batched D ([`StoreOrigin`]). With
    /// beta = 0 it writes the ring's `RING` sub-tiles as one batch (one
    /// proxy fence, two barriers, one commit group: see the contract);
    /// [`store_one_at_a_time`](Self::store_one_at_a_time) is the form
    /// without batches.
    ///
    /// # Safety
    /// `map_d` is a valid tensor map of D; with `c` active, the C-load
    /// role fills this warpgroup's stages with this tile's sub-tiles in
    /// order.
    ///
    /// ```ignore
    /// unsafe { epilogue.store(&acc, alpha, &mut c, d_next, 8, |j| (col0 + 32 * j as i32, row0)) };
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store<const ACC: usize, C: CSource, O: StoreOrigin>(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        c: &mut C,
        d_next: u32,
        subtiles: u32,
        origin: impl Fn(u32) -> O,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.store_with::<true, false, ACC, C, O>(
                acc,
                alpha,
                c,
                d_next,
                subtiles,
                (0, subtiles),
                origin,
            )
        }
    }

    /// [`store`](Self::store) with beta = 0 into a ring that holds several
    /// batches (`subtiles ≤ RING`, the whole call one batch): before
    /// writing, the signalling thread waits only until at most
    /// `RING / subtiles − 1` commit groups still read, not until every
    /// earlier store has read its buffer. The batch's buffers are then
    /// free: the caller advances `d_next` by each call's `subtiles`, and
    /// every commit group of this ring holds at most `subtiles` buffers
    /// (all calls store the same count, or an earlier form waited for
    /// all), so the pending groups hold the buffers just before `d_next`
    /// and this batch the next `subtiles`, which is at most `RING` in
    /// all. A tile's stores then drain while the next tile's main loop
    /// runs, as DeepGEMM's whole-tile D staging does.
    ///
    /// # Safety
    /// As [`store`](Self::store); `c` is not active; `subtiles ≤ RING`;
    /// `d_next` as above.
    ///
    /// ```ignore
    /// unsafe { epilogue.store_pipelined(&acc, 1.0, &mut NoC, d_next, 4, |j| (col0 + 32 * j as i32, row0)) };
    /// d_next = (d_next + 4) % RING as u32;
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_pipelined<const ACC: usize, C: CSource, O: StoreOrigin>(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        c: &mut C,
        d_next: u32,
        subtiles: u32,
        origin: impl Fn(u32) -> O,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.store_with::<true, true, ACC, C, O>(
                acc,
                alpha,
                c,
                d_next,
                subtiles,
                (0, subtiles),
                origin,
            )
        }
    }

    /// [`store`](Self::store) one sub-tile at a time with beta = 0 too
    /// (a fence and two barriers per sub-tile; the wait before writing a
    /// buffer lets `RING − 1` stores still read): the FP8 kernels' rings of
    /// 2 except in the 256-row ones (the 128×256 FP8 kernel spills 8 bytes
    /// with batches).
    ///
    /// # Safety
    /// As [`store`](Self::store).
    ///
    /// ```ignore
    /// unsafe { epilogue.store_one_at_a_time(&acc, 1.0, &mut NoC, d_next, 4, |j| (col0 + 32 * j as i32, row0)) };
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_one_at_a_time<const ACC: usize, C: CSource, O: StoreOrigin>(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        c: &mut C,
        d_next: u32,
        subtiles: u32,
        origin: impl Fn(u32) -> O,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.store_with::<false, false, ACC, C, O>(
                acc,
                alpha,
                c,
                d_next,
                subtiles,
                (0, subtiles),
                origin,
            )
        }
    }

    /// [`store`](Self::store) of sub-tiles `first..end` of the tile alone
    /// (`end ≤ subtiles`; a split-K worker's share, see
    /// `StreamKFixup::reduce_split_share`), one at a time: sub-tile `J`
    /// still comes from `acc[16J..16J + 16]` and goes to `origin(J)`; the
    /// D ring's buffers are `d_next, d_next + 1, …` (count `end − first`
    /// into `d_next`). With beta = 0 the signalling thread first waits
    /// until no earlier store reads the ring (earlier tiles may have been
    /// stored in batches, whose groups hold several buffers); with beta ≠
    /// 0 the C-load role loads exactly these sub-tiles, in this order
    /// (`CLoad::run_distributed`). An empty range stores nothing.
    ///
    /// # Safety
    /// As [`store`](Self::store).
    ///
    /// ```ignore
    /// unsafe { epilogue.store_range(&acc, alpha, &mut c, d_next, 8, (b, e), |j| (col0 + 32 * j as i32, row0)) };
    /// ```
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_range<const ACC: usize, C: CSource, O: StoreOrigin>(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        c: &mut C,
        d_next: u32,
        subtiles: u32,
        range: (u32, u32),
        origin: impl Fn(u32) -> O,
    ) {
        if range.0 >= range.1 {
            return;
        }
        // The thread index re-read here, opaquely (an asm without `pure`):
        // otherwise LLVM may hoist this copy's swizzled offsets, derived
        // from `tid` alone, ahead of the caller's loop over segments and
        // keep them through the main loop.
        let this = StoreEpilogue {
            bufs: self.bufs,
            map_d: self.map_d,
            wg: self.wg,
            tid: here(self.tid),
        };
        if !c.active() && this.tid == 0 {
            store_wait_group_read::<0>();
        }
        // SAFETY: forwarded to the caller.
        unsafe {
            this.store_with::<false, false, ACC, C, O>(
                acc, alpha, c, d_next, subtiles, range, origin,
            )
        }
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn store_with<
        const BATCH: bool,
        const PIPELINED: bool,
        const ACC: usize,
        C: CSource,
        O: StoreOrigin,
    >(
        &self,
        acc: &[f32; ACC],
        alpha: f32,
        c: &mut C,
        d_next: u32,
        subtiles: u32,
        (first, end): (u32, u32),
        origin: impl Fn(u32) -> O,
    ) {
        let (tid, wg) = (self.tid, self.wg);
        let signaller = tid == 0;
        let (warp, lane) = (tid / 32, tid % 32);
        let row = warp * 16 + lane / 4;
        let residual = c.active();
        let beta = c.beta();
        let bufs = self.bufs;
        // One sub-tile's registers (16J + 4Q + 2H (+1): row + 8H, columns
        // 8Q + 2(lane % 4) (+1) of sub-tile J) into `buf`, as bf16
        // `alpha·acc + beta·C` (C read from `buf` first when active).
        let write = |j: usize, buf: u32| {
            baton::unroll!(Q in [0, 1, 2, 3] {
                baton::unroll!(H in [0, 1] {
                    let i = 16 * j + (4 * Q + 2 * H) as usize;
                    let r = row + 8 * H;
                    let off = swizzled64(r, 4 * Q + lane % 4);
                    let (mut x0, mut x1) = (alpha * acc[i], alpha * acc[i + 1]);
                    if residual {
                        // SAFETY: the C stage is full (waited); in bounds.
                        let cv = unsafe { ld_shared_u32(buf + off) };
                        x0 += beta * f32::from_bits(cv << 16);
                        x1 += beta * f32::from_bits(cv & 0xFFFF_0000);
                    }
                    // SAFETY: the buffer is this warpgroup's (a full C
                    // stage, or a D buffer whose store has read it); in
                    // bounds; with beta ≠ 0 this thread read `off` just
                    // above.
                    unsafe { st_shared_u32(buf + off, pack_bf16x2(x0, x1)) };
                });
            });
        };
        if !residual && BATCH {
            // The D ring in batches of its RING sub-tiles (`store`): wait
            // until the batch's buffers are read, write the batch into
            // distinct buffers, then one proxy fence, one barrier and the
            // batch's stores as one commit group — two barriers and one
            // fence per batch instead of per sub-tile (session 18's trace:
            // ~620 cycles per sub-tile, 5.4 k cycles per 128×256 tile).
            baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
              if J < subtiles {
                let batch_start = J as usize % RING == 0;
                let batch_end = J as usize % RING == RING - 1 || J + 1 == subtiles;
                if batch_start {
                    if signaller {
                        if PIPELINED {
                            // The batch's buffers are free once at most
                            // RING / subtiles − 1 groups still read
                            // (`store_pipelined`).
                            wait_read_pending(RING as u32 / subtiles - 1);
                        } else {
                            // A batch uses the whole ring: free once no
                            // earlier store still reads.
                            store_wait_group_read::<0>();
                        }
                    }
                    named_barrier_sync(1 + wg, 128);
                }
                let slot = (d_next + J) % RING as u32;
                // SAFETY: slot < RING.
                let buf_tile = unsafe { bufs.at_unchecked(slot as usize) };
                write(J as usize, buf_tile.addr());
                if batch_end {
                    fence_proxy_async_shared();
                    named_barrier_sync(1 + wg, 128);
                    if signaller {
                        // The batch's sub-tiles (constants: the batch is
                        // known at each unrolled J).
                        baton::unroll!(I in [0, 1, 2, 3, 4, 5, 6, 7] {
                          if I <= J && I >= J - J % RING as u32 {
                            // SAFETY: slot < RING; D map per the contract;
                            // the buffer holds the finished sub-tile I
                            // (fenced for the async proxy).
                            unsafe {
                                let buf = if I == J {
                                    buf_tile
                                } else {
                                    bufs.at_unchecked(((d_next + I) % RING as u32) as usize)
                                };
                                origin(I).store(self.map_d, buf);
                            }
                          }
                        });
                        store_commit_group();
                    }
                }
              }
            });
            return;
        }
        // The sub-tiles `first..end` (all of them but in `store_range`).
        baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
          if J < subtiles && J >= first && J < end {
            let slot = if residual {
                c.wait_full()
            } else {
                // The buffer is free once the store issued from it one
                // rotation ago has finished reading it.
                if signaller {
                    wait_ring_read::<RING>();
                }
                named_barrier_sync(1 + wg, 128);
                (d_next + J - first) % RING as u32
            };
            // SAFETY: slot < RING.
            let buf_tile = unsafe { bufs.at_unchecked(slot as usize) };
            write(J as usize, buf_tile.addr());
            fence_proxy_async_shared();
            named_barrier_sync(1 + wg, 128);
            if signaller {
                // SAFETY: D map per the contract; the buffer holds the
                // finished sub-tile (fenced for the async proxy).
                unsafe { origin(J).store(self.map_d, buf_tile) };
                store_commit_group();
            }
            if residual {
                if J > first {
                    // The previous sub-tile's store has read its stage:
                    // hand that stage back to the C-load warp.
                    if signaller {
                        store_wait_group_read::<1>();
                    }
                    let prev = (slot + RING as u32 - 1) % RING as u32;
                    c.release(prev, signaller);
                }
                if J + 1 == end {
                    if signaller {
                        store_wait_group_read::<0>();
                    }
                    c.release(slot, signaller);
                }
                c.step();
            }
          }
        });
    }
}
