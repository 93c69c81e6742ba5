//! The kernel: layout, setup, schedule, and the role dispatch.

use crate::{BK, BM, BN, D_BUFFERS, GemmParams, GemmSmem, Payload, STAGES};
use baton::arch::ptx::tma::{load_2d, prefetch_tensormap, store_wait_group};
use baton::arch::ptx::{dynamic_smem, thread_idx_x};
use baton::smem_field;
use baton::tile_pipeline::{InputTilePipeline, StandardStage};
use baton_kernel_roles::dispatch_roles;
use baton_kernel_roles::sm90::dispatch::{GEMM_ROLES, init_then_sync};
use baton_kernel_roles::sm90::epilogue::{NoC, SUB_COLS, SUB_ROWS, StoreEpilogue};
use baton_kernel_roles::sm90::mainloop_bf16::{Bf16N128, bf16_mainloop};
use baton_kernel_roles::sm90::producer::TmaProducer;
use baton_kernel_roles::sm90::schedule::{ClusterWork, TileRows};
use baton_kernel_roles::sm90::stage_descriptors::StageDescriptors;

type Stage = StandardStage<u16, u16, 128, 128, 64>;
/// Accumulator registers per thread: 64 rows × 128 columns over 128 threads.
const ACC: usize = 64;

/// One CTA of the GEMM.
#[inline(always)]
pub fn run(p: &GemmParams) {
    // SAFETY: launched with the module's dynamic shared memory,
    // size_of::<GemmSmem>() on the device (the spec; traps otherwise).
    let smem = unsafe { dynamic_smem::<GemmSmem>() };
    let input =
        InputTilePipeline::<Payload, STAGES>::new(smem_field!(smem, GemmSmem, input), c"ex04");
    init_then_sync::<1>(|| {
        // SAFETY: the host passes live tensor maps in global memory.
        unsafe {
            prefetch_tensormap(p.tma_a);
            prefetch_tensormap(p.tma_b);
            prefetch_tensormap(p.tma_d);
        }
        // One arrival per consumer warpgroup frees a stage.
        input.init(GEMM_ROLES.consumer_warpgroups);
    });
    let (tiles_m, tiles_n) = (p.m.div_ceil(BM), p.n.div_ceil(BN));
    let work = ClusterWork::<1>::new(tiles_m, tiles_n, p.k.div_ceil(BK), 8, [0; 4]);
    // tail_rows 0: every tile row loads a full 128-row box of A (zero fill past M).
    let rows = TileRows {
        tiles_m,
        tail_rows: 0,
        bm: BM,
    };

    dispatch_roles!(GEMM_ROLES, c_load_active: false,
        producer => {
            TmaProducer { input, work, rows }.run(|t| {
                // Bytes per stage (used only for trimmed tails; none here).
                (BM * BK * 2 + BN * BK * 2, move |tiles, bar, kb| {
                    let kc = (kb * BK) as i32;
                    // SAFETY: the producer holds the stage; its full barrier
                    // expects both boxes' bytes.
                    unsafe {
                        load_2d(p.tma_a, smem_field!(tiles, Stage, a), bar, kc, (t.tm * BM) as i32);
                        load_2d(p.tma_b, smem_field!(tiles, Stage, b), bar, kc, (t.tn * BN) as i32);
                    }
                })
            })
        },
        c_load => {},
        consumer(wg) => {
            let tid = thread_idx_x() % 128;
            let mut consumer = input.consumer();
            // SAFETY: all-zero is a valid [f32; ACC] (and stays in registers).
            let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
            // This warpgroup's 64 rows of A: 64 rows × 128 bytes into the tile.
            let st0 = input.stage(0);
            let descs = StageDescriptors::new(
                smem_field!(st0, Stage, a).addr() + wg * 64 * 128,
                smem_field!(st0, Stage, b).addr(),
                core::mem::size_of::<Stage>() as u32,
            );
            let mut d_next = 0u32;
            for seg in work.segments() {
                let (tm, tn) = work.tile_of(seg.unit);
                bf16_mainloop::<Bf16N128, _, ACC, STAGES, 1>(&mut consumer, descs, seg.len(), &mut acc, tid == 0);
                let epilogue = StoreEpilogue::<D_BUFFERS> {
                    bufs: smem_field!(smem, GemmSmem, d_buffers).at(wg as usize),
                    map_d: p.tma_d,
                    wg,
                    tid,
                };
                let subtiles = BN / SUB_COLS as u32;
                // SAFETY: D's map per the kernel contract.
                unsafe {
                    epilogue.store(&acc, p.alpha, &mut NoC, d_next, subtiles, |j| {
                        ((tn * BN + j * SUB_COLS as u32) as i32, (tm * BM + wg * SUB_ROWS as u32) as i32)
                    })
                };
                d_next += subtiles;
            }
            if tid == 0 {
                store_wait_group::<0>();
            }
        },
    );
}
