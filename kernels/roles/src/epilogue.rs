//! The C-load warp and the epilogue warpgroup of the sm_100a GEMMs
//! ([`gemm_sm100`](crate::gemm_sm100), [`gemm_sm100_block_scaled`](crate::gemm_sm100_block_scaled)):
//! one source for both kernels and both targets.
//!
//! * C-load warp (only with `beta ≠ 0`): one elected thread TMA-loads the
//!   C sub-tiles of every tile of this CTA, in schedule order, into the
//!   two stages of an `EpiLoadPipeline` (producer: one `arrive_expect_tx`;
//!   consumer: every epilogue thread arrives).
//! * Epilogue warpgroup (4 warps, TMEM lane quarters 0–3, 128 threads):
//!   per tile it acquires the accumulator stage of a `TmemOutputPipeline`,
//!   and per sub-tile of 128 rows × 32 columns `tcgen05.ld`s its row,
//!   computes `alpha·acc + beta·C` in fp32, writes bf16 into one of two
//!   64-byte-swizzled staging buffers and the leader thread TMA-stores it;
//!   then it releases the accumulator stage.

use crate::ctx::WarpCtx;
use crate::gemm_sm100::{pack_bf16x2, sub_tile_offset};
use crate::smem_io::{ld_u32, st_u32};
use baton::arch::current::fence_proxy_async_shared;
use baton::arch::current::tma::{
    TensorMap, load_2d, store_2d, store_commit_group, store_wait_group, store_wait_group_read,
};
use baton::arch::tcgen05 as tc;
use baton::epi_load::EpiLoadPipeline;
use baton::protocol::tile_scheduler::GroupedRaster;
use baton::smem::SharedRef;
use baton::tile_pipeline::{Tile, TmemOutputPipeline};

/// Tile rows (one TMEM lane each).
pub const BM: u32 = 128;
/// Columns of an epilogue sub-tile (64 bytes of bf16 per row).
pub const SUB_COLS: u32 = 32;
/// One C or D sub-tile: 128 rows × 32 bf16, 64-byte swizzle.
pub type SubTile = Tile<u16, { BM as usize }, { SUB_COLS as usize }>;

const _: () = assert!(SUB_COLS == 32, "the epilogue unrolls 16 bf16 pairs per row");

/// What the epilogue reads and writes besides its pipelines.
#[derive(Clone, Copy)]
pub struct EpilogueIo<'a> {
    /// C: bf16, dims {N, M}, box {32, 128}, 64-byte swizzle (read only
    /// with `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D: as C.
    pub tma_d: *const TensorMap,
    /// `D = alpha·acc + beta·C`.
    pub alpha: f32,
    /// See `alpha`.
    pub beta: f32,
    /// The C stages of the `EpiLoadPipeline`.
    pub c_tiles: SharedRef<'a, [SubTile; 2]>,
    /// D staging buffers.
    pub d_tiles: SharedRef<'a, [SubTile; 2]>,
}

/// This CTA's tiles: `cta, cta + grid, …` below `raster.units()`.
#[derive(Clone, Copy)]
pub struct TileWalk {
    /// The grouped rasterization of the tile grid.
    pub raster: GroupedRaster,
    /// This CTA.
    pub cta: u32,
    /// CTAs in the persistent grid.
    pub grid: u32,
}

/// The C-load warp's program (call it from every lane of that warp; only
/// with `beta ≠ 0`): C sub-tiles of every tile of the walk, in order,
/// through `c_pipe`.
///
/// # Safety
/// `io.tma_c` describes C as [`EpilogueIo`] says; `c_pipe`'s stages are
/// `io.c_tiles`, its barriers initialized with one producer arrival.
#[inline(always)]
pub unsafe fn c_load_role<W: WarpCtx, const BN: u32>(
    w: &W,
    c_pipe: &mut EpiLoadPipeline<'_, 2>,
    io: &EpilogueIo<'_>,
    walk: TileWalk,
) {
    let TileWalk { raster, cta, grid } = walk;
    let tiles = raster.units();
    let c_tiles = io.c_tiles;
    let residual = io.beta != 0.0;
    if residual {
        w.elect(|| {
            let mut t = cta;
            while t < tiles {
                let (tm, tn) = raster.coords(t);
                for j in 0..BN / SUB_COLS {
                    let stage = c_pipe.produce_explicit();
                    stage.arrive_expect_tx(SubTile::BYTES);
                    // SAFETY: C map per the contract; the stage is ours.
                    unsafe {
                        load_2d(
                            io.tma_c,
                            c_tiles.at(stage.index() as usize),
                            stage.mbar(),
                            (tn * BN + j * SUB_COLS) as i32,
                            (tm * BM) as i32,
                        )
                    };
                }
                t += grid;
            }
            c_pipe.drain();
        });
    }
}

/// The epilogue warpgroup's program (call it from warps
/// `epilogue_warp .. epilogue_warp + 4`, with `warp` this warp's index):
/// every tile of the walk from its accumulator stage in `acc` to D.
///
/// # Safety
/// `io.tma_d` (and with `beta ≠ 0`, `io.tma_c` and `c_pipe`, fed by
/// [`c_load_role`]) as [`EpilogueIo`] says; `acc`'s stages are committed by
/// the MMA warp in the same tile order; `epilogue_warp % 4 == 0`.
#[inline(always)]
pub unsafe fn epilogue_role<W: WarpCtx, const BN: u32, const STAGES: usize>(
    w: &W,
    warp: u32,
    epilogue_warp: u32,
    acc: &TmemOutputPipeline<'_, STAGES, BN>,
    c_pipe: &mut EpiLoadPipeline<'_, 2>,
    io: &EpilogueIo<'_>,
    walk: TileWalk,
) {
    let TileWalk { raster, cta, grid } = walk;
    let tiles = raster.units();
    let residual = io.beta != 0.0;
    let (c_tiles, d_tiles) = (io.c_tiles, io.d_tiles);
    let quarter = warp % 4;
    let leader = warp == epilogue_warp;
    let mut consumer = acc.consumer();
    let mut d_next = 0u32;
    let mut t = cta;
    while t < tiles {
        let (tm, tn) = raster.coords(t);
        // Waits `full[a]`, fences.
        let acc_stage = consumer.acquire_stage();
        let base = acc_stage.warp_tmem(warp);
        for j in 0..BN / SUB_COLS {
            let buf = d_tiles.at(((d_next + j) & 1) as usize);
            // The buffer is free once the store issued from it two
            // sub-tiles ago has read it.
            if leader {
                w.elect(store_wait_group_read::<1>);
            }
            w.sync_epilogue();
            let c_stage = c_pipe.consumer_stage();
            if residual {
                c_pipe.wait_producer();
            }
            let c_buf = c_tiles.at(c_stage as usize);
            w.for_each_lane(|lane| {
                let row = 32 * quarter + lane;
                let addr = base.offset(w.tmem_row(lane), j * SUB_COLS);
                // SAFETY: the stage's MMAs are complete (full waited,
                // fenced); lanes of this warp's quarter.
                let v = unsafe { tc::tmem::ld_32x32b_x32(addr) };
                tc::tmem::wait_ld();
                baton::unroll!(P in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    let off = sub_tile_offset(row, P);
                    let mut x0 = io.alpha * f32::from_bits(v[2 * P as usize]);
                    let mut x1 = io.alpha * f32::from_bits(v[2 * P as usize + 1]);
                    if residual {
                        // SAFETY: the C stage is full (waited); in bounds.
                        let cv = unsafe { ld_u32(c_buf, off) };
                        x0 += io.beta * f32::from_bits(cv << 16);
                        x1 += io.beta * f32::from_bits(cv & 0xFFFF_0000);
                    }
                    // SAFETY: the buffer is free (barrier above); in bounds.
                    unsafe { st_u32(buf, off, pack_bf16x2(x0, x1)) };
                });
                fence_proxy_async_shared();
            });
            w.sync_epilogue();
            if residual {
                // Every thread has read its C values.
                w.for_each_lane(|_| c_pipe.pipeline().consumer_mbar(c_stage).arrive());
                c_pipe.consumer_step();
            }
            if leader {
                w.elect(|| {
                    // SAFETY: D map per the contract; the buffer holds
                    // the finished sub-tile, fenced for the async proxy.
                    unsafe {
                        store_2d(
                            io.tma_d,
                            buf,
                            (tn * BN + j * SUB_COLS) as i32,
                            (tm * BM) as i32,
                        )
                    };
                    store_commit_group();
                });
            }
        }
        // Every TMEM read of the stage is done (waited): hand it back
        // (fence, one arrival per thread on `empty[a]`).
        acc_stage.release();
        d_next += BN / SUB_COLS;
        t += grid;
    }
    if leader {
        w.elect(store_wait_group::<0>);
    }
}
