//! Hopper BF16 GEMM: `D = alpha·A·Bᵀ + beta·C`, persistent and
//! warp-specialized, built from baton's pipelines.
//!
//! * A: M×K row-major bf16; B: N×K row-major bf16 (K-major, "TN"); C, D: M×N
//!   row-major bf16; fp32 accumulation.
//! * CTA tile 128×256×64, 384 threads:
//!   - warpgroup 0 (registers released to 40): warp 0's elected lane is the
//!     main-loop producer (`InputTilePipeline<StandardTilePayload>`, 4 stages,
//!     TMA, 128-byte swizzle); warp 1's elected lane is the epilogue-load
//!     producer (`EpiLoadPipeline`, C sub-tiles by TMA, only when beta ≠ 0);
//!   - warpgroups 1 and 2 (232 registers): consumers, 64×256 each with
//!     `wgmma.m64n256k16`; stage `k` is released (one arrival per
//!     warpgroup) after `wgmma.wait_group<1>` retired the MMAs that read it
//!     (`defer_release`).
//! * Epilogue per consumer warpgroup, in 8 sub-tiles of 64×32: read C from
//!   its `EpiLoadPipeline` stage (beta ≠ 0), write `alpha·acc + beta·C` as
//!   bf16 into a 64-byte-swizzled shared buffer (bank-conflict free),
//!   `fence.proxy.async`, and one thread TMA-stores it (double-buffered with
//!   `cp.async.bulk.wait_group.read`). TMA clips ragged edges; the stores
//!   drain while the warpgroup starts the next tile's main loop.
//! * Persistent grid: CTA `b` takes tiles `b, b + grid, …` in grouped
//!   (L2-friendly) order.

use baton::arch::sm90::tma::{
    TensorMap, load_2d, store_2d, store_commit_group, store_wait_group, store_wait_group_read,
};
use baton::arch::sm90::wgmma::{
    self, SmemLayout, descriptor_advance, descriptor_k_major, ops::mma_m64n256k16_f32_bf16,
};
use baton::arch::sm90::{
    block_idx_x, dynamic_smem, elect_one, fence_proxy_async_shared, grid_dim_x, ld_shared_u32,
    named_barrier_sync, st_shared_u32, sync_threads, thread_idx_x, warp_idx,
};
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::{PendingRelease, PipelineBarriers};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{
    InputConsumer, InputTilePipeline, InputTileStorage, StandardTilePayload, Tile,
};
use core::arch::asm;

/// CTA tile rows (M).
pub const BM: u32 = 128;
/// CTA tile columns (N).
pub const BN: u32 = 256;
/// K per stage.
pub const BK: u32 = 64;
const STAGES: usize = 4;
const CONSUMER_WARPGROUPS: u32 = 2;
/// Tiles along M grouped together for L2 reuse.
const GROUP_M: u32 = 8;
/// Epilogue sub-tile: 64 rows × 32 columns (64-byte rows).
const SUB_ROWS: usize = 64;
const SUB_COLS: usize = 32;
const SUBTILES: u32 = BN / SUB_COLS as u32;

type Payload = StandardTilePayload<u16, u16, { BM as usize }, { BN as usize }, { BK as usize }>;
type SubTile = Tile<u16, SUB_ROWS, SUB_COLS>;

#[repr(C)]
struct GemmSmem {
    input: InputTileStorage<Payload, STAGES>,
    /// D staging, `[warpgroup][buffer]`.
    d_tiles: [[SubTile; 2]; 2],
    /// C stages of each warpgroup's `EpiLoadPipeline`, `[warpgroup][stage]`.
    c_tiles: [[SubTile; 2]; 2],
    epi_bars: [PipelineBarriers<2>; 2],
}

/// Dynamic shared memory the kernel needs.
pub const SMEM_BYTES: usize = core::mem::size_of::<GemmSmem>();
const _: () = assert!(
    SMEM_BYTES <= 227 * 1024,
    "GEMM shared memory exceeds the 227 KiB opt-in limit"
);

/// Tile `t` of the grouped rasterization → (tile row, tile column).
#[inline(always)]
fn tile_coords(t: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    let per_group = GROUP_M * tiles_n;
    let group = t / per_group;
    let first_m = group * GROUP_M;
    let group_rows = if tiles_m - first_m < GROUP_M {
        tiles_m - first_m
    } else {
        GROUP_M
    };
    let in_group = t % per_group;
    (first_m + in_group % group_rows, in_group / group_rows)
}

#[inline(always)]
fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: pure conversion.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
    };
    r
}

/// Byte offset of (row, 4-byte column pair `pair`) in a 64×32 bf16 sub-tile
/// with TMA's 64-byte swizzle (16-byte chunk index XOR bits 1..2 of the row).
#[inline(always)]
fn swizzled64(row: u32, pair: u32) -> u32 {
    let byte = pair * 4;
    row * 64 + ((((byte >> 4) ^ (row >> 1)) & 3) << 4) + (byte & 15)
}

/// Issues the 4 `wgmma`s of one K block (64) for this warpgroup's 64 rows.
#[inline(always)]
fn mma_k_block(acc: &mut [f32; 128], a: u32, b: u32, accumulate: bool) {
    let da = descriptor_k_major(a, SmemLayout::Swizzle128B);
    let db = descriptor_k_major(b, SmemLayout::Swizzle128B);
    wgmma::fence();
    crate::unroll!(KK in [0, 1, 2, 3] {
        // SAFETY: the stage is loaded (waited) and stays unreleased until
        // wait_group retires these MMAs; `acc` is not touched meanwhile.
        unsafe {
            mma_m64n256k16_f32_bf16(acc, descriptor_advance(da, KK * 32), descriptor_advance(db, KK * 32), accumulate || KK > 0)
        };
    });
    wgmma::commit_group();
}

/// The GEMM. Launch: grid = min(tiles, SMs) CTAs of 384 threads,
/// `SMEM_BYTES` of dynamic shared memory.
///
/// # Safety
/// The tensor maps (in global memory) describe, with 128-byte swizzle,
/// A (dims {K, M}, box {64, 128}) and B (dims {K, N}, box {64, 256}); with
/// 64-byte swizzle, C and D (dims {N, M}, box {32, 64}); all bf16. `tma_c`
/// is only read when `beta != 0`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_gemm_bf16_128x256(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
) {
    // SAFETY: launched with SMEM_BYTES of dynamic shared memory.
    let smem: SharedRef<'static, GemmSmem> = unsafe { dynamic_smem::<GemmSmem>() };
    let input = InputTilePipeline::<Payload, STAGES>::new(
        smem_field!(smem, GemmSmem, input),
        c"gemm-mainloop",
    );
    let epi_bars = smem_field!(smem, GemmSmem, epi_bars);
    let c_tiles = smem_field!(smem, GemmSmem, c_tiles);
    let d_tiles = smem_field!(smem, GemmSmem, d_tiles);
    let epi_for = |w: usize| EpiLoadPipeline::new(epi_bars.at(w), c"gemm-epi-load");
    if thread_idx_x() == 0 {
        input.init(CONSUMER_WARPGROUPS);
        // Producer: one elected thread's arrive_expect_tx; consumer: one
        // arrival per warpgroup, after all its threads read the C sub-tile.
        epi_for(0).init_barriers(1, 1);
        epi_for(1).init_barriers(1, 1);
    }
    sync_threads();

    let tiles_m = m.div_ceil(BM);
    let tiles_n = n.div_ceil(BN);
    let tiles = tiles_m * tiles_n;
    let k_blocks = k.div_ceil(BK);
    let warpgroup = warp_idx() / 4;
    let residual = beta != 0.0;

    if warpgroup == 0 {
        wgmma::setmaxnreg_dec::<40>();
        if warp_idx() == 0 && elect_one() {
            let mut producer = input.producer();
            let mut t = block_idx_x();
            while t < tiles {
                let (tm, tn) = tile_coords(t, tiles_m, tiles_n);
                for kb in 0..k_blocks {
                    let stage = producer.acquire();
                    stage.arrive_expect_tx();
                    let tiles = stage.tiles();
                    let (kc, bar) = ((kb * BK) as i32, stage.barrier());
                    // SAFETY: maps per the kernel contract; the stage is ours
                    // and its full barrier expects Payload::TMA_BYTES.
                    unsafe {
                        load_2d(
                            tma_a,
                            smem_field!(tiles, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, a),
                            bar,
                            kc,
                            (tm * BM) as i32,
                        );
                        load_2d(
                            tma_b,
                            smem_field!(tiles, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, b),
                            bar,
                            kc,
                            (tn * BN) as i32,
                        );
                    }
                }
                t += grid_dim_x();
            }
            producer.drain();
        } else if warp_idx() == 1 && residual && elect_one() {
            let (mut epi0, mut epi1) = (epi_for(0), epi_for(1));
            let load_c = |pipe: &mut EpiLoadPipeline<'_, 2>, w: usize, col: i32, row: i32| {
                let stage = pipe.produce_explicit();
                stage.arrive_expect_tx(SubTile::BYTES);
                // SAFETY: C map per the contract; the stage is ours.
                unsafe {
                    load_2d(
                        tma_c,
                        c_tiles.at(w).at(stage.index() as usize),
                        stage.mbar(),
                        col,
                        row,
                    )
                };
            };
            let mut t = block_idx_x();
            while t < tiles {
                let (tm, tn) = tile_coords(t, tiles_m, tiles_n);
                for j in 0..SUBTILES {
                    let col = (tn * BN) as i32 + (j as usize * SUB_COLS) as i32;
                    let row = (tm * BM) as i32;
                    load_c(&mut epi0, 0, col, row);
                    load_c(&mut epi1, 1, col, row + SUB_ROWS as i32);
                }
                t += grid_dim_x();
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
        let mut consumer: InputConsumer<'_, Payload, STAGES> = input.consumer();
        let mut epi = epi_for(wg);
        // `zeroed` lowers to a memset that SROA splits into registers; an
        // array repeat expression lowers to a loop that keeps `acc` in local
        // memory.
        // SAFETY: all-zero is a valid [f32; 128].
        let mut acc: [f32; 128] = unsafe { core::mem::zeroed() };
        let a_offset = (wg * 64 * 128) as u32;
        let mut t = block_idx_x();
        while t < tiles {
            let (tm, tn) = tile_coords(t, tiles_m, tiles_n);
            // Main loop: K block kb's MMAs stay in flight while kb-1's
            // stage is handed back.
            let stage = consumer.acquire_stage();
            let st = stage.tiles();
            mma_k_block(
                &mut acc,
                smem_field!(st, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, a)
                    .addr()
                    + a_offset,
                smem_field!(st, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, b)
                    .addr(),
                false,
            );
            let mut pending: PendingRelease<'_> = stage.defer_release();
            for _ in 1..k_blocks {
                let stage = consumer.acquire_stage();
                let st = stage.tiles();
                mma_k_block(
                    &mut acc,
                    smem_field!(st, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, a)
                        .addr()
                        + a_offset,
                    smem_field!(st, baton::tile_pipeline::StandardStage<u16, u16, 128, 256, 64>, b)
                        .addr(),
                    true,
                );
                wgmma::wait_group::<1>();
                pending.release_if(signaller);
                pending = stage.defer_release();
            }
            wgmma::wait_group::<0>();
            pending.release_if(signaller);

            // Epilogue: 8 sub-tiles of 64 rows × 32 columns.
            let row = warp * 16 + lane / 4;
            let d_buf = d_tiles.at(wg);
            crate::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
                let buf = d_buf.at((J % 2) as usize);
                // Buffer J%2 is free once the store issued from it two
                // sub-tiles ago has finished reading it.
                if signaller {
                    store_wait_group_read::<1>();
                }
                named_barrier_sync(1 + wg as u32, 128);
                // C sub-tile J (direct API: an Option of a guard would keep
                // the pipeline state in local memory).
                let c_stage = epi.consumer_stage();
                if residual {
                    epi.wait_producer();
                }
                // SAFETY: pipeline stage indices are < 2.
                let c_buf = unsafe { c_tiles.at(wg).at_unchecked(c_stage as usize) }.addr();
                crate::unroll!(Q in [0, 1, 2, 3] {
                    crate::unroll!(H in [0, 1] {
                        // Registers 16J + 4Q + 2H (+1): row + 8H, columns
                        // 8Q + 2(lane % 4) (+1) of sub-tile J.
                        let i = (16 * J + 4 * Q + 2 * H) as usize;
                        let r = row + 8 * H;
                        let off = swizzled64(r, 4 * Q + lane % 4);
                        let (mut x0, mut x1) = (alpha * acc[i], alpha * acc[i + 1]);
                        if residual {
                            // SAFETY: the C stage is full (waited); in bounds.
                            let cv = unsafe { ld_shared_u32(c_buf + off) };
                            x0 += beta * f32::from_bits(cv << 16);
                            x1 += beta * f32::from_bits(cv & 0xFFFF_0000);
                        }
                        // SAFETY: buffer J%2 is free (barrier above); in bounds.
                        unsafe { st_shared_u32(buf.addr() + off, pack_bf16x2(x0, x1)) };
                    });
                });
                fence_proxy_async_shared();
                named_barrier_sync(1 + wg as u32, 128);
                if residual {
                    // Every thread of the warpgroup has read its C values.
                    epi.pipeline().consumer_mbar(c_stage).arrive_if(signaller);
                    epi.consumer_step();
                }
                if signaller {
                    let col = (tn * BN) as i32 + (J as usize * SUB_COLS) as i32;
                    let r0 = (tm * BM) as i32 + (wg * SUB_ROWS) as i32;
                    // SAFETY: D map per the contract; the buffer holds the
                    // finished sub-tile (fenced for the async proxy).
                    unsafe { store_2d(tma_d, buf, col, r0) };
                    store_commit_group();
                }
            });
            t += grid_dim_x();
        }
        if signaller {
            store_wait_group::<0>();
        }
    }
}
