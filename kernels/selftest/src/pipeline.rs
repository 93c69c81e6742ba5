//! GPU tests of `baton::pipeline` and `baton::epi_load` (issue: pipeline).
//!
//! Block shape for every kernel here: 5 warps (160 threads). Warp 0 is the
//! producer; warps 1..=4 are the consumers (128 threads).

use crate::smem_io::{ld_shared_u32, st_shared_u32};
use baton::arch::ptx::{
    block_idx_x, dynamic_smem, elect_one, grid_dim_x, lane_id, sync_threads, sync_warp,
    thread_idx_x, warp_idx,
};
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use baton::smem_field;
use baton_kernels_abi::pipeline as abi;
use baton_kernels_abi::pipeline::{
    CONSUMER_THREADS, EpiLoadParams, EpiSmem, HandoffParams, HandoffSmem, HangParams, TILE_COLS,
    TILE_ROWS,
};

/// The payload lane `lane` writes for sequence number `seq`.
#[inline(always)]
fn payload(seed: u32, seq: u32, lane: u32) -> u32 {
    (seq ^ seed)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(lane.wrapping_mul(0x85EB_CA6B))
}

baton::kernel! {
    #[spec(abi::HANDOFF)]
    /// Sequence-numbered handoffs through a 4-stage ring, linear API on the
    /// producer (32 arrivals: the whole warp writes and arrives) and scoped API on
    /// the consumers (128 arrivals). Every consumer thread checks the word of its
    /// lane in every slot. `out[block * 128 + t] = (mismatches, checksum)`.
    pub fn baton_pipeline_handoff(p: HandoffParams) {
        let HandoffParams { out, items, seed } = p;
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
            pipe.drain();
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
}

baton::kernel! {
    #[spec(abi::EXPLICIT)]
    /// Explicit consumption: consumer arrive count 4 (one lane per consumer
    /// warp); each warp reads, `bar.warp.sync`s, and lane 0 arrives
    /// (`consume_explicit` steps without arriving). Producer: one elected thread
    /// writes the whole slot and arrives once (`produce`, count 1).
    pub fn baton_pipeline_explicit(p: HandoffParams) {
        let HandoffParams { out, items, seed } = p;
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
                pipe.drain();
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
}

/// The accumulator value the "MMA" would have produced for element (r, c) of
/// tile `t` — a cheap deterministic function the host recomputes.
#[inline(always)]
fn accum(t: u32, r: u32, c: u32) -> f32 {
    ((t * 7 + r * 3 + c) % 1024) as f32 * 0.25 - 64.0
}

baton::kernel! {
    #[spec(abi::EPI_LOAD)]
    /// `EpiLoadPipeline` round trip: warp 0 (epilogue-load) copies C tiles from
    /// global memory into the stage (all lanes copy, `bar.warp.sync`, one elected
    /// arrival: producer count 1), warps 1..=4 (128 threads, the default count)
    /// compute `D = accum + beta·C` row by row. `c` and `d` are `tiles × 128 × 32`
    /// f32, row-major; each block handles tiles `block, block + grid, …`.
    pub fn baton_epi_load_roundtrip(p: EpiLoadParams) {
        let EpiLoadParams { d, c, tiles, beta } = p;
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
            epi.drain();
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
}

baton::kernel! {
    #[spec(abi::HANG)]
    /// A deliberate hang, for the hang report: one warp waits, as the consumer,
    /// on `full[0]` of a pipeline nobody produces into. The debug PTX bounds the
    /// wait, prints `baton: wait timed out: pipeline hang-test, consumer waiting
    /// on full[0] for phase parity 0 (block …, thread …)` and traps; the release
    /// PTX would spin forever, so only the debug variant is ever launched
    /// (`baton hang-check`).
    pub fn baton_pipeline_hang(p: HangParams) {
        let HangParams { out } = p;
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
}
