//! Hopper BF16 GEMM: `D = alpha·A·Bᵀ + beta·C`, persistent and
//! warp-specialized, built from baton's pipelines.
//!
//! * A: M×K row-major bf16; B: N×K row-major bf16 (K-major, "TN"); C, D: M×N
//!   row-major bf16; fp32 accumulation.
//! * CTA tile 128 × BN × 64 (BN = 256, 224, 128 or 64; one kernel entry per
//!   configuration, input stages derived from the shared-memory budget),
//!   384 threads:
//!   - warpgroup 0 (registers released to 40): warp 0's elected lane is the
//!     main-loop producer (`InputTilePipeline<StandardTilePayload>`, TMA,
//!     128-byte swizzle); warp 1's elected lane is the epilogue-load
//!     producer (`EpiLoadPipeline`, C sub-tiles by TMA, only when beta ≠ 0);
//!   - warpgroups 1 and 2 (232 registers): consumers, 64 × BN each with
//!     `wgmma.m64nBNk16`; stage `k` is released (one arrival per warpgroup
//!     and CTA) after `wgmma.wait_group<1>` retired the MMAs that read it
//!     (`defer_release`).
//! * `_c2` configurations: clusters of 2 CTAs along M; each CTA loads half of
//!   the shared B tile and multicasts it to both, so the empty barriers
//!   count both CTAs' consumer warpgroups.
//! * Epilogue per consumer warpgroup, in BN / 32 sub-tiles of 64×32 through
//!   four 64-byte-swizzled shared buffers (bank-conflict free). With
//!   beta ≠ 0 the buffers are the stages of the warpgroup's
//!   `EpiLoadPipeline`: each thread reads its C values and writes
//!   `alpha·acc + beta·C` as bf16 over them, one thread TMA-stores the
//!   buffer, and the stage goes back to the C-load warp once the store has
//!   read it (`cp.async.bulk.wait_group.read`), so four C loads are in
//!   flight. With beta = 0 the four buffers rotate as D staging. TMA clips
//!   ragged edges; the stores drain while the warpgroup starts the next
//!   tile's main loop.
//! * Persistent grid: CTA `b` takes work units `b, b + grid, …` (a unit is a
//!   cluster's tiles) in grouped, L2-friendly order (`group_m`).

use crate::gemm_common::{
    ClusterWork, StageDescriptors, StreamKFixup, a_rows_loaded, load_b_tile, pack_bf16x2,
    release_stage, stream_k_fixup, swizzled64,
};
use baton::arch::sm90::tma::{
    TensorMap, load_2d, prefetch_tensormap, store_2d, store_commit_group, store_wait_group,
    store_wait_group_read,
};
use baton::arch::sm90::wgmma::{
    self, SplitDescriptor,
    ops::{
        mma_m64n64k16_f32_bf16, mma_m64n128k16_f32_bf16, mma_m64n224k16_f32_bf16,
        mma_m64n256k16_f32_bf16,
    },
};
use baton::arch::sm90::{
    cluster_sync, dynamic_smem, elect_one, fence_proxy_async_shared, ld_shared_u32,
    named_barrier_sync, st_shared_u32, sync_threads, thread_idx_x, warp_idx,
};
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::PendingRelease;
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{InputConsumer, InputTilePipeline};

use baton_kernels_abi::gemm_bf16::{
    self as abi, EPI_STAGES, GemmSmem, Payload, SUB_COLS, SUB_ROWS, Stage, SubTile, stages_for,
};
pub use baton_kernels_abi::gemm_bf16::{BK, BM};
use baton_kernels_abi::gemm_params::{GemmBf16Params, StreamKParams};
const CONSUMER_WARPGROUPS: u32 = 2;

/// One `wgmma` shape: a warpgroup's 64 × N block, `ACC = N / 2` fp32
/// accumulators per thread, K = 16.
trait TileMma<const ACC: usize> {
    /// # Safety
    /// As [`mma_m64n256k16_f32_bf16`].
    unsafe fn mma(acc: &mut [f32; ACC], a: u64, b: u64, accumulate: bool);
}

struct N256;
struct N224;
struct N128;
struct N64;

impl TileMma<128> for N256 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n256k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl TileMma<112> for N224 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 112], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n224k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl TileMma<64> for N128 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n128k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl TileMma<32> for N64 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 32], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n64k16_f32_bf16(acc, a, b, accumulate) }
    }
}

/// Issues the 4 `wgmma`s of one K block (64) for this warpgroup's 64 rows.
#[inline(always)]
fn mma_k_block<M: TileMma<ACC>, const ACC: usize>(
    acc: &mut [f32; ACC],
    (da, db): (SplitDescriptor, SplitDescriptor),
    accumulate: bool,
) {
    wgmma::fence();
    baton::unroll!(KK in [0, 1, 2, 3] {
        // SAFETY: the stage is loaded (waited) and stays unreleased until
        // wait_group retires these MMAs; `acc` is not touched meanwhile.
        unsafe { M::mma(acc, da.advance(KK * 32).join(), db.advance(KK * 32).join(), accumulate || KK > 0) };
    });
    wgmma::commit_group();
}

macro_rules! gemm_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $bnh:literal, $acc:literal, $cluster:literal, $mma:ty) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(tiles, SMs) CTAs of 384 threads, with
            /// `size_of` the configuration's shared-memory layout as dynamic
            /// shared memory (the host's table; checked by a test against the PTX).
            ///
            /// # Safety
            /// The tensor maps (in global memory) describe, with 128-byte
            /// swizzle, A (dims {K, M}, box {64, 128}) and B (dims {K, N},
            /// box {64, BN}); with 64-byte swizzle, C and D (dims {N, M},
            /// box {32, 64}); all bf16. `tma_c` is only read when `beta != 0`.
            /// `group_m ≥ 1`: cluster-unit rows per rasterization group.
            ///
            /// Stream-K (`sk_min_segment > 0`): the last `units mod workers`
            /// (+ `sk_extra_waves` full waves) work units are split along K
            /// across all workers
            /// (`StreamKSchedule`), with segments of at least `sk_min_segment`
            /// K blocks; `sk_partials` then holds `2 · grid · 64 · BN` floats and
            /// `sk_flags` `2 · grid` `u32`s (zeroed once), and `sk_epoch ≠ 0`
            /// differs from the previous launch's on these buffers. With
            /// `sk_min_segment == 0` they are never touched (may be null).
            ///
            /// `tail_rows` is `M mod 128`; when it is not 0, `tma_a_tail`
            /// describes A with a box of `tail_rows` rows (the last tile row
            /// loads only those), otherwise it is never read.
            pub fn $name(p: GemmBf16Params) {
                let GemmBf16Params { tma_a, tma_b, tma_c, tma_d, m, n, k, group_m, alpha, beta, stream_k: StreamKParams { partials: sk_partials, flags: sk_flags, epoch: sk_epoch, min_segment: sk_min_segment, extra_waves: sk_extra_waves }, tma_a_tail, tail_rows } = p;
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<GemmSmem<$bn, { stages_for($bn) }>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract.
                let fixup = unsafe { StreamKFixup::new(sk_partials, sk_flags, sk_epoch) };
                // SAFETY: forwarded to the kernel's contract.
                unsafe { gemm::<$mma, $bn, $bnh, $acc, { stages_for($bn) }, $cluster>(tma_a, tma_b, tma_c, tma_d, m, n, k, group_m, alpha, beta, fixup, (sk_min_segment, sk_extra_waves), (tma_a_tail, tail_rows)) }
            }
        }
    };
}

gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, 4 stages (m64n256k16).
    abi::GEMM_128X256,
    baton_gemm_bf16_128x256, 256, 256, 128, 1, N256
);
gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, 4 stages, clusters of 2 CTAs along M
    /// sharing the B tile by TMA multicast (each CTA loads half).
    abi::GEMM_128X256_C2,
    baton_gemm_bf16_128x256_c2, 256, 128, 128, 2, N256
);
gemm_entry!(
    /// BF16 GEMM, 128×224×64 tiles, 2-CTA clusters with B multicast: N
    /// multiples of 224 (7168 = 32 × 224) tile without a ragged column.
    abi::GEMM_128X224_C2,
    baton_gemm_bf16_128x224_c2, 224, 112, 112, 2, N224
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, 6 stages (m64n128k16).
    abi::GEMM_128X128,
    baton_gemm_bf16_128x128, 128, 128, 64, 1, N128
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, 6 stages, 2-CTA clusters with B multicast.
    abi::GEMM_128X128_C2,
    baton_gemm_bf16_128x128_c2, 128, 64, 64, 2, N128
);
gemm_entry!(
    /// BF16 GEMM, 128×64×64 tiles, 8 stages (m64n64k16): for few, skinny tiles.
    abi::GEMM_128X64,
    baton_gemm_bf16_128x64, 64, 64, 32, 1, N64
);

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<
    M: TileMma<ACC>,
    const BN: usize,
    const BNH: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
>(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    alpha: f32,
    beta: f32,
    fixup: StreamKFixup,
    (sk_min_segment, sk_extra_waves): (u32, u32),
    (tma_a_tail, tail_rows): (*const TensorMap, u32),
) {
    // SAFETY: launched with size_of::<GemmSmem<BN, STAGES>>() of dynamic
    // shared memory (the kernel traps otherwise).
    let smem: SharedRef<'static, GemmSmem<BN, STAGES>> =
        unsafe { dynamic_smem::<GemmSmem<BN, STAGES>>() };
    let input = InputTilePipeline::<Payload<BN>, STAGES>::new(
        smem_field!(smem, GemmSmem<BN, STAGES>, input),
        c"gemm-mainloop",
    );
    let epi_bars = smem_field!(smem, GemmSmem<BN, STAGES>, epi_bars);
    let epi_tiles = smem_field!(smem, GemmSmem<BN, STAGES>, epi_tiles);
    let subtiles = (BN / SUB_COLS) as u32;
    let bn = BN as u32;
    let epi_for = |w: usize| EpiLoadPipeline::new(epi_bars.at(w), c"gemm-epi-load");
    if thread_idx_x() == 0 {
        // Fetch the tensor maps into the descriptor cache while the
        // barriers are set up (the first TMA of each would wait for it).
        // SAFETY: the maps are valid per the kernel contract (C only read
        // with beta ≠ 0).
        unsafe {
            prefetch_tensormap(tma_a);
            prefetch_tensormap(tma_b);
            prefetch_tensormap(tma_d);
            if beta != 0.0 {
                prefetch_tensormap(tma_c);
            }
            if tail_rows != 0 {
                prefetch_tensormap(tma_a_tail);
            }
        }
        // Empty barriers: one arrival per consumer warpgroup of every CTA
        // whose TMA multicast writes into the stage (the whole cluster).
        input.init(CONSUMER_WARPGROUPS * CLUSTER_M);
        // Producer: one elected thread's arrive_expect_tx; consumer: one
        // arrival per warpgroup, once the D sub-tile written over the C
        // sub-tile has been read by its TMA store.
        epi_for(0).init_barriers(1, 1);
        epi_for(1).init_barriers(1, 1);
    }
    if CLUSTER_M > 1 {
        // Peers arrive on and multicast into our barriers: they must all be
        // initialized cluster-wide first.
        cluster_sync();
    } else {
        sync_threads();
    }

    // Work units: CLUSTER_M vertically adjacent tiles sharing one B tile;
    // CTA `rank` of a cluster takes tile row `unit_row * CLUSTER_M + rank`
    // (a row past M loads no A, computes on stale stage data and is
    // clipped by the store).
    // Every role walks the same schedule (data-parallel units, then this
    // worker's stream-K share).
    let work = ClusterWork::<CLUSTER_M>::new(
        m.div_ceil(BM),
        n.div_ceil(bn),
        k.div_ceil(BK),
        group_m,
        (sk_min_segment, sk_extra_waves),
    );
    let (sched, rank) = (work.sched, work.rank);
    let warpgroup = warp_idx() / 4;
    let residual = beta != 0.0;
    // Rows of A per tile row: `a_rows_loaded`. K past the end is still
    // zero-filled: it feeds every row.
    let tiles_m = m.div_ceil(BM);
    let a_row_bytes = BK * 2;
    let b_bytes = bn * BK * 2;

    if warpgroup == 0 {
        wgmma::setmaxnreg_dec::<40>();
        if warp_idx() == 0 && elect_one() {
            let mut producer = input.producer();
            for seg in work.segments() {
                let (tm, tn) = work.tile_of(seg.unit);
                let a_rows = a_rows_loaded(tm, tiles_m, tail_rows, BM);
                let map_a = if a_rows == BM { tma_a } else { tma_a_tail };
                for kb in seg.k_begin..seg.k_end {
                    let stage = producer.acquire();
                    if a_rows == BM {
                        stage.arrive_expect_tx();
                    } else {
                        stage.arrive_expect_tx_bytes(a_rows * a_row_bytes + b_bytes);
                    }
                    let tiles = stage.tiles();
                    let (kc, bar) = ((kb * BK) as i32, stage.barrier());
                    // SAFETY: maps per the kernel contract; the stage is ours
                    // and its full barrier expects Payload::TMA_BYTES (with
                    // a trimmed A: a_rows rows of A plus B).
                    unsafe {
                        if a_rows != 0 {
                            load_2d(
                                map_a,
                                smem_field!(tiles, Stage<BN>, a),
                                bar,
                                kc,
                                (tm * BM) as i32,
                            );
                        }
                        load_b_tile::<u16, BN, BNH, { BK as usize }, CLUSTER_M>(
                            tma_b,
                            smem_field!(tiles, Stage<BN>, b),
                            bar,
                            kc,
                            tn * bn,
                            rank,
                        );
                    }
                }
            }
            producer.drain();
        } else if warp_idx() == 1 && residual && elect_one() {
            let (mut epi0, mut epi1) = (epi_for(0), epi_for(1));
            let load_c =
                |pipe: &mut EpiLoadPipeline<'_, EPI_STAGES>, w: usize, col: i32, row: i32| {
                    let stage = pipe.produce_explicit();
                    stage.arrive_expect_tx(SubTile::BYTES);
                    // SAFETY: C map per the contract; the stage is ours.
                    unsafe {
                        load_2d(
                            tma_c,
                            epi_tiles.at(w).at(stage.index() as usize),
                            stage.mbar(),
                            col,
                            row,
                        )
                    };
                };
            // C is read by the segments that write D: the finalizers.
            for seg in work.segments() {
                if !seg.is_finalizer() {
                    continue;
                }
                let (tm, tn) = work.tile_of(seg.unit);
                for j in 0..subtiles {
                    let col = (tn * bn) as i32 + (j as usize * SUB_COLS) as i32;
                    let row = (tm * BM) as i32;
                    load_c(&mut epi0, 0, col, row);
                    load_c(&mut epi1, 1, col, row + SUB_ROWS as i32);
                }
            }
            epi0.producer_tail();
            epi1.producer_tail();
        }
    } else {
        wgmma::setmaxnreg_inc::<232>();
        let wg = (warpgroup - 1) as usize;
        let tid = thread_idx_x() % 128;
        let signaller = tid == 0;
        let (warp, lane) = (tid / 32, tid % 32);
        let mut consumer: InputConsumer<'_, Payload<BN>, STAGES> = input.consumer();
        let mut epi = epi_for(wg);
        // `zeroed` lowers to a memset that SROA splits into registers; an
        // array repeat expression lowers to a loop that keeps `acc` in local
        // memory.
        // SAFETY: all-zero is a valid [f32; 128].
        let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
        // This warpgroup's 64 rows of A (64 rows × 128 bytes further).
        let st0 = input.stage(0);
        let descs = StageDescriptors::new(
            smem_field!(st0, Stage<BN>, a).addr() + (wg * 64 * 128) as u32,
            smem_field!(st0, Stage<BN>, b).addr(),
            core::mem::size_of::<Stage<BN>>() as u32,
        );
        let mut d_next = 0u32;
        for seg in work.segments() {
            let (tm, tn) = work.tile_of(seg.unit);
            // Main loop: K block kb's MMAs stay in flight while kb-1's
            // stage is handed back.
            let stage = consumer.acquire_stage();
            mma_k_block::<M, ACC>(&mut acc, descs.at(stage.stage()), false);
            let mut pending: PendingRelease<'_> = stage.defer_release();
            for _ in 1..seg.len() {
                let stage = consumer.acquire_stage();
                mma_k_block::<M, ACC>(&mut acc, descs.at(stage.stage()), true);
                wgmma::wait_group::<1>();
                release_stage::<CLUSTER_M>(pending, signaller);
                pending = stage.defer_release();
            }
            wgmma::wait_group::<0>();
            release_stage::<CLUSTER_M>(pending, signaller);

            // Stream-K fixup: a contributor hands its partial to the unit's
            // finalizer and has no epilogue (`continue`); a finalizer of a
            // split unit adds the contributors' partials first.
            stream_k_fixup!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC);

            // Epilogue: BN / 32 sub-tiles of 64 rows × 32 columns.
            //
            // beta ≠ 0: sub-tile J is C stage `c_stage` of the warpgroup's
            // `EpiLoadPipeline`; every thread reads its C values and writes
            // D over them (same addresses, same thread), then one thread
            // TMA-stores the buffer. The stage goes back to the C-load warp
            // only once that store has read it, one sub-tile later (the
            // last of a tile at the tile's end), so up to EPI_STAGES C loads
            // are in flight and D needs no buffer of its own.
            //
            // beta = 0: D rotates through the EPI_STAGES buffers across
            // tiles (`d_next` counts sub-tiles), a store lagging up to
            // EPI_STAGES - 1 sub-tiles behind.
            let row = warp * 16 + lane / 4;
            let bufs = epi_tiles.at(wg);
            baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
              if J < subtiles {
                let slot = if residual {
                    epi.wait_producer();
                    epi.consumer_stage()
                } else {
                    // The buffer is free once the store issued from it one
                    // rotation ago has finished reading it.
                    if signaller {
                        store_wait_group_read::<{ EPI_STAGES as u32 - 1 }>();
                    }
                    named_barrier_sync(1 + wg as u32, 128);
                    (d_next + J) % EPI_STAGES as u32
                };
                // SAFETY: slot < EPI_STAGES.
                let buf_tile = unsafe { bufs.at_unchecked(slot as usize) };
                let buf = buf_tile.addr();
                baton::unroll!(Q in [0, 1, 2, 3] {
                    baton::unroll!(H in [0, 1] {
                        // Registers 16J + 4Q + 2H (+1): row + 8H, columns
                        // 8Q + 2(lane % 4) (+1) of sub-tile J.
                        let i = (16 * J + 4 * Q + 2 * H) as usize;
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
                fence_proxy_async_shared();
                named_barrier_sync(1 + wg as u32, 128);
                if signaller {
                    let col = (tn * bn) as i32 + (J as usize * SUB_COLS) as i32;
                    let r0 = (tm * BM) as i32 + (wg * SUB_ROWS) as i32;
                    // SAFETY: D map per the contract; the buffer holds the
                    // finished sub-tile (fenced for the async proxy).
                    unsafe { store_2d(tma_d, buf_tile, col, r0) };
                    store_commit_group();
                }
                if residual {
                    if J > 0 {
                        // The previous sub-tile's store has read its stage:
                        // hand that stage back to the C-load warp.
                        if signaller {
                            store_wait_group_read::<1>();
                        }
                        let prev = (slot + EPI_STAGES as u32 - 1) % EPI_STAGES as u32;
                        epi.pipeline().consumer_mbar(prev).arrive_if(signaller);
                    }
                    if J + 1 == subtiles {
                        if signaller {
                            store_wait_group_read::<0>();
                        }
                        epi.pipeline().consumer_mbar(slot).arrive_if(signaller);
                    }
                    epi.consumer_step();
                }
              }
            });
            d_next += subtiles;
        }
        if signaller {
            store_wait_group::<0>();
        }
    }
    // No final cluster barrier: every access a peer makes to this CTA's
    // shared memory is accounted for by this CTA's own waits — the peer's
    // multicast loads complete on our `full` barriers, which our consumers
    // wait for, and the peer consumers' releases arrive on our `empty`
    // barriers, which our producer's `drain` waits for — and the drain keeps
    // the CTA alive until then. (Idle warps parked in a cluster barrier for
    // the whole kernel cost half the throughput: measured.)
}
