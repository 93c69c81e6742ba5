//! GPU tests of `baton::pipeline` and `baton::epi_load` (issue: pipeline).
//!
//! Block shape for every kernel here: 5 warps (160 threads). Warp 0 is the
//! producer; warps 1..=4 are the consumers (128 threads).

use crate::smem_io::{ld_shared_u32, st_shared_u32};
use baton::arch::sm90::{
    block_idx_x, dynamic_smem, elect_one, grid_dim_x, lane_id, sync_threads, sync_warp,
    thread_idx_x, warp_idx,
};
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::smem_field;

const STAGES: usize = 4;
const CONSUMER_THREADS: u32 = 128;

#[repr(C)]
struct HandoffSmem {
    bars: PipelineBarriers<STAGES>,
    slots: [[u32; 32]; STAGES],
}

/// The payload lane `lane` writes for sequence number `seq`.
#[inline(always)]
fn payload(seed: u32, seq: u32, lane: u32) -> u32 {
    (seq ^ seed)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(lane.wrapping_mul(0x85EB_CA6B))
}

/// Sequence-numbered handoffs through a 4-stage ring, linear API on the
/// producer (32 arrivals: the whole warp writes and arrives) and scoped API on
/// the consumers (128 arrivals). Every consumer thread checks the word of its
/// lane in every slot. `out[block * 128 + t] = (mismatches, checksum)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_pipeline_handoff(out: *mut u32, items: u32, seed: u32) {
    // SAFETY: the host launches with size_of::<HandoffSmem>() dynamic smem.
    let smem = unsafe { dynamic_smem::<HandoffSmem>() };
    let slots = smem_field!(smem, HandoffSmem, slots);
    let mut pipe = ProducerConsumerPipeline::new(smem_field!(smem, HandoffSmem, bars), c"handoff");
    if thread_idx_x() == 0 {
        pipe.init_barriers(32, CONSUMER_THREADS);
    }
    sync_threads();
    let lane = lane_id();
    if warp_idx() == 0 {
        for seq in 0..items {
            let stage = pipe.acquire_producer();
            // The producer owns the stage between acquire and release.
            st_shared_u32(
                slots.at(stage.index() as usize).at(lane as usize),
                payload(seed, seq, lane),
            );
            stage.release();
        }
        pipe.producer_tail();
    } else {
        let (mut errors, mut sum) = (0u32, 0u32);
        for seq in 0..items {
            let stage = pipe.consume();
            // The stage is full until this guard drops.
            let v = ld_shared_u32(slots.at(stage.index() as usize).at(lane as usize));
            errors += (v != payload(seed, seq, lane)) as u32;
            sum = sum.wrapping_add(v);
        }
        let t = (block_idx_x() * CONSUMER_THREADS + thread_idx_x() - 32) as usize;
        // SAFETY: the host allocates 2 × 128 words per block.
        unsafe {
            *out.add(2 * t) = errors;
            *out.add(2 * t + 1) = sum;
        }
    }
}

/// Explicit consumption: consumer arrive count 4 (one lane per consumer
/// warp); each warp reads, `bar.warp.sync`s, and lane 0 arrives
/// (`consume_explicit` steps without arriving). Producer: one elected thread
/// writes the whole slot and arrives once (`produce`, count 1).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_pipeline_explicit(out: *mut u32, items: u32, seed: u32) {
    // SAFETY: as above.
    let smem = unsafe { dynamic_smem::<HandoffSmem>() };
    let slots = smem_field!(smem, HandoffSmem, slots);
    let mut pipe = ProducerConsumerPipeline::new(smem_field!(smem, HandoffSmem, bars), c"explicit");
    if thread_idx_x() == 0 {
        pipe.init_barriers(1, 4);
    }
    sync_threads();
    let lane = lane_id();
    if warp_idx() == 0 {
        if elect_one() {
            for seq in 0..items {
                let stage = pipe.produce();
                let slot = slots.at(stage.index() as usize);
                for l in 0..32 {
                    // The producer owns the stage inside the guard.
                    st_shared_u32(slot.at(l as usize), payload(seed, seq, l));
                }
            }
            pipe.producer_tail();
        }
    } else {
        let (mut errors, mut sum) = (0u32, 0u32);
        for seq in 0..items {
            let stage = pipe.consume_explicit();
            // The stage is full until this warp's lane 0 arrives.
            let v = ld_shared_u32(slots.at(stage.index() as usize).at(lane as usize));
            errors += (v != payload(seed, seq, lane)) as u32;
            sum = sum.wrapping_add(v);
            sync_warp();
            if lane == 0 {
                stage.arrive();
            }
        }
        let t = (block_idx_x() * CONSUMER_THREADS + thread_idx_x() - 32) as usize;
        // SAFETY: as above.
        unsafe {
            *out.add(2 * t) = errors;
            *out.add(2 * t + 1) = sum;
        }
    }
}

const EPI_STAGES: usize = 2;
/// A C tile: 128 rows × 32 f32 columns.
const TILE_ROWS: u32 = 128;
const TILE_COLS: u32 = 32;

#[repr(C)]
struct EpiSmem {
    bars: PipelineBarriers<EPI_STAGES>,
    tiles: [[u32; (TILE_ROWS * TILE_COLS) as usize]; EPI_STAGES],
}

/// The accumulator value the "MMA" would have produced for element (r, c) of
/// tile `t` — a cheap deterministic function the host recomputes.
#[inline(always)]
fn accum(t: u32, r: u32, c: u32) -> f32 {
    ((t * 7 + r * 3 + c) % 1024) as f32 * 0.25 - 64.0
}

/// `EpiLoadPipeline` round trip: warp 0 (epilogue-load) copies C tiles from
/// global memory into the stage (all lanes copy, `bar.warp.sync`, one elected
/// arrival: producer count 1), warps 1..=4 (128 threads, the default count)
/// compute `D = accum + beta·C` row by row. `c` and `d` are `tiles × 128 × 32`
/// f32, row-major; each block handles tiles `block, block + grid, …`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_epi_load_roundtrip(
    d: *mut f32,
    c: *const f32,
    tiles: u32,
    beta: f32,
) {
    // SAFETY: the host launches with size_of::<EpiSmem>() dynamic smem.
    let smem = unsafe { dynamic_smem::<EpiSmem>() };
    let stage_tiles = smem_field!(smem, EpiSmem, tiles);
    let mut epi = EpiLoadPipeline::new(smem_field!(smem, EpiSmem, bars), c"epi-load");
    if thread_idx_x() == 0 {
        epi.init_barriers_default();
    }
    sync_threads();
    let lane = lane_id();
    let mut t = block_idx_x();
    if warp_idx() == 0 {
        while t < tiles {
            let stage = epi.produce_explicit();
            let tile = stage_tiles.at(stage.index() as usize);
            // SAFETY: tile t is in bounds of `c` (host contract).
            let src = unsafe { c.add((t * TILE_ROWS * TILE_COLS) as usize) };
            let mut i = lane;
            while i < TILE_ROWS * TILE_COLS {
                // SAFETY: i < 128 × 32, in tile t; the stage is ours until we arrive.
                st_shared_u32(
                    tile.at(i as usize),
                    unsafe { *src.add(i as usize) }.to_bits(),
                );
                i += 32;
            }
            sync_warp();
            if elect_one() {
                stage.arrive();
            }
            t += grid_dim_x();
        }
        epi.producer_tail();
    } else {
        let r = thread_idx_x() - 32;
        while t < tiles {
            let stage = epi.consume();
            let tile = stage_tiles.at(stage.index() as usize);
            // SAFETY: row r of tile t is in bounds of `d` (host contract).
            let dst = unsafe { d.add((t * TILE_ROWS * TILE_COLS + r * TILE_COLS) as usize) };
            for col in 0..TILE_COLS {
                // The stage is full until the guard drops.
                let cv = f32::from_bits(ld_shared_u32(tile.at((r * TILE_COLS + col) as usize)));
                // SAFETY: col < 32, inside row r.
                unsafe { *dst.add(col as usize) = accum(t, r, col) + beta * cv };
            }
            t += grid_dim_x();
        }
    }
}

/// A deliberate hang, for the hang report: one warp waits, as the consumer,
/// on `full[0]` of a pipeline nobody produces into. The debug PTX bounds the
/// wait, prints `baton: wait timed out: pipeline hang-test, consumer waiting
/// on full[0] for phase parity 0 (block …, thread …)` and traps; the release
/// PTX would spin forever, so only the debug variant is ever launched
/// (`baton hang-check`).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_pipeline_hang(out: *mut u32) {
    // SAFETY: launched with PipelineBarriers::<1>::GPU_BYTES of dynamic smem.
    let bars = unsafe { dynamic_smem::<PipelineBarriers<1>>() };
    let mut pipe = ProducerConsumerPipeline::new(bars, c"hang-test");
    if thread_idx_x() == 0 {
        pipe.init_barriers(1, 32);
    }
    sync_threads();
    let stage = pipe.acquire_consumer();
    // SAFETY: never reached in a passing run (the wait above never ends);
    // the host passes one word.
    unsafe { *out = stage.index() + 1 };
    stage.release();
}
