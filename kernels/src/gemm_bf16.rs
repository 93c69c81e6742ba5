//! Hopper BF16 GEMM: `D = alpha·A·Bᵀ + beta·C`, persistent and
//! warp-specialized, on baton pipelines.
//!
//! * A: M×K row-major bf16; B: N×K row-major bf16 (K-major, "TN"); C, D: M×N
//!   row-major bf16; fp32 accumulation.
//! * CTA tile 128×256×64, 4 stages (48 KiB each), 384 threads:
//!   warpgroup 0 = producer (one elected thread issues TMA loads, registers
//!   released to 40), warpgroups 1 and 2 = consumers (64×256 each,
//!   `wgmma.m64n256k16`, 232 registers).
//! * Persistent grid: CTA `b` takes tiles `b, b + grid, …` in grouped
//!   (L2-friendly) order; the producer runs ahead across tile boundaries.
//! * Input stages: `ProducerConsumerPipeline<4>`; full barriers: 1 arrival
//!   (the producer's `arrive_expect_tx`) + the TMA bytes; empty barriers: one
//!   arrival per consumer warpgroup, issued after `wgmma.wait_group` retired
//!   the MMAs that read the stage.

use baton::arch::sm90::wgmma::{
    self, SmemLayout, descriptor_advance, descriptor_k_major, ops::mma_m64n256k16_f32_bf16,
};
use baton::arch::sm90::{block_idx_x, dynamic_smem, elect_one, grid_dim_x, sync_threads, thread_idx_x, warp_idx};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::smem::SharedRef;
use baton::smem_field;
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

/// Opaque CUDA tensor map (`CUtensorMap`), 64-byte aligned, in global memory.
#[repr(C, align(64))]
pub struct TensorMap {
    _opaque: [u64; 16],
}

#[repr(C, align(1024))]
struct StageTiles {
    a: [u8; (BM * BK * 2) as usize],
    b: [u8; (BN * BK * 2) as usize],
}

/// Bytes the TMA delivers per stage: derived from the tile types.
const STAGE_TX_BYTES: u32 = core::mem::size_of::<StageTiles>() as u32;

#[repr(C)]
struct GemmSmem {
    stages: [StageTiles; STAGES],
    bars: PipelineBarriers<STAGES>,
}

/// Dynamic shared memory the kernel needs.
pub const SMEM_BYTES: usize = core::mem::size_of::<GemmSmem>();

#[inline(always)]
fn tma_load_2d(map: *const TensorMap, dst: u32, bar: u32, c0: i32, c1: i32) {
    // SAFETY: `map` is a valid tensor map in global memory (host contract);
    // `dst` is a 1024-aligned stage tile of the box's size; `bar` is the
    // stage's full barrier, armed with the stage's bytes.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) dst, m = in(reg64) map as u64, x = in(reg32) c0, y = in(reg32) c1, b = in(reg32) bar,
            options(nostack)
        )
    };
}

/// Tile `t` of the grouped rasterization → (tile row, tile column).
#[inline(always)]
fn tile_coords(t: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    let per_group = GROUP_M * tiles_n;
    let group = t / per_group;
    let first_m = group * GROUP_M;
    let group_rows = if tiles_m - first_m < GROUP_M { tiles_m - first_m } else { GROUP_M };
    let in_group = t % per_group;
    (first_m + in_group % group_rows, in_group / group_rows)
}

#[inline(always)]
fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let r: u32;
    // SAFETY: pure conversion.
    unsafe { asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack)) };
    r
}

/// The GEMM. Launch: grid = min(tiles, SMs) CTAs of 384 threads,
/// `SMEM_BYTES` of dynamic shared memory.
///
/// # Safety
/// `tma_a`/`tma_b` are tensor maps (in global memory) over A (dims {K, M},
/// box {64, 128}) and B (dims {K, N}, box {64, 256}), bf16, 128-byte swizzle;
/// `d` (and `c` when `beta != 0`) hold M×N bf16; N is even.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_gemm_bf16_128x256(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    d: *mut u32,
    c: *const u32,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
) {
    // SAFETY: launched with SMEM_BYTES of dynamic shared memory.
    let smem: SharedRef<'static, GemmSmem> = unsafe { dynamic_smem::<GemmSmem>() };
    let stages = smem_field!(smem, GemmSmem, stages);
    let mut pipe = ProducerConsumerPipeline::new(smem_field!(smem, GemmSmem, bars), c"gemm-mainloop");
    if thread_idx_x() == 0 {
        pipe.init_barriers(1, CONSUMER_WARPGROUPS);
    }
    sync_threads();

    let tiles_m = m.div_ceil(BM);
    let tiles_n = n.div_ceil(BN);
    let tiles = tiles_m * tiles_n;
    let k_blocks = k.div_ceil(BK);
    let warpgroup = warp_idx() / 4;

    if warpgroup == 0 {
        wgmma::setmaxnreg_dec::<40>();
        if warp_idx() == 0 && elect_one() {
            let mut t = block_idx_x();
            while t < tiles {
                let (tm, tn) = tile_coords(t, tiles_m, tiles_n);
                for kb in 0..k_blocks {
                    let stage = pipe.acquire_producer();
                    let tiles_addr = stages.at(stage.index() as usize);
                    let a = smem_field!(tiles_addr, StageTiles, a).addr();
                    let b = smem_field!(tiles_addr, StageTiles, b).addr();
                    stage.arrive_expect_tx(STAGE_TX_BYTES);
                    let bar = stage.mbar().addr();
                    tma_load_2d(tma_a, a, bar, (kb * BK) as i32, (tm * BM) as i32);
                    tma_load_2d(tma_b, b, bar, (kb * BK) as i32, (tn * BN) as i32);
                    stage.release_without_signal();
                }
                t += grid_dim_x();
            }
            pipe.producer_tail();
        }
    } else {
        wgmma::setmaxnreg_inc::<232>();
        let wg = warpgroup - 1;
        let tid = thread_idx_x() % 128;
        let (warp, lane) = (tid / 32, tid % 32);
        // `zeroed` lowers to a memset that SROA splits into registers; an array
        // repeat expression lowers to a loop that keeps `acc` in local memory.
        let mut acc: [f32; 128] = unsafe { core::mem::zeroed() };
        let mut t = block_idx_x();
        while t < tiles {
            let (tm, tn) = tile_coords(t, tiles_m, tiles_n);
            // Main loop: MMAs of k-block `kb` in flight while k-block `kb-1`'s
            // stage is released.
            let mut release_stage = pipe.consumer_stage();
            for kb in 0..k_blocks {
                pipe.wait_producer();
                let tiles_addr = unsafe { stages.at_unchecked(pipe.consumer_stage() as usize) };
                let a = smem_field!(tiles_addr, StageTiles, a).addr() + wg * 64 * 128;
                let b = smem_field!(tiles_addr, StageTiles, b).addr();
                let da = descriptor_k_major(a, SmemLayout::Swizzle128B);
                let db = descriptor_k_major(b, SmemLayout::Swizzle128B);
                wgmma::fence();
                for kk in 0..(BK / 16) {
                    // SAFETY: the stage is full (waited above) and stays
                    // unreleased until wait_group retires these MMAs.
                    unsafe {
                        mma_m64n256k16_f32_bf16(
                            &mut acc,
                            descriptor_advance(da, kk * 32),
                            descriptor_advance(db, kk * 32),
                            kb > 0 || kk > 0,
                        )
                    };
                }
                wgmma::commit_group();
                wgmma::wait_group::<1>();
                if kb > 0 {
                    pipe.consumer_mbar(release_stage).arrive_if(tid == 0);
                    release_stage = if release_stage + 1 == STAGES as u32 { 0 } else { release_stage + 1 };
                }
                pipe.consumer_step();
            }
            wgmma::wait_group::<0>();
            pipe.consumer_mbar(release_stage).arrive_if(k_blocks > 0 && tid == 0);

            // Epilogue: D = alpha·acc + beta·C, straight from registers.
            let row0 = tm * BM + wg * 64 + warp * 16 + lane / 4;
            let col0 = tn * BN + 2 * (lane % 4);
            // Fully unrolled so the accumulators stay in registers.
            crate::unroll!(J in [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,
                54, 55, 56, 57, 58, 59, 60, 61, 62, 63
            ] {
                let i = 2 * J as usize;
                let col = col0 + 8 * (J / 2);
                let row = row0 + 8 * (J % 2);
                if row < m && col < n {
                    let idx = ((row as usize) * (n as usize) + col as usize) / 2;
                    let (mut x0, mut x1) = (alpha * acc[i], alpha * acc[i + 1]);
                    if beta != 0.0 {
                        // SAFETY: idx < M·N/2 (row < M, col < N, N even).
                        let cv = unsafe { *c.add(idx) };
                        x0 += beta * f32::from_bits(cv << 16);
                        x1 += beta * f32::from_bits(cv & 0xFFFF_0000);
                    }
                    // SAFETY: as above.
                    unsafe { *d.add(idx) = pack_bf16x2(x0, x1) };
                }
            });
            t += grid_dim_x();
        }
    }
}
