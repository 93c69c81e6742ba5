//! The two roles and the block program that dispatches them.
//!
//! | role | warps | waits on | then | signals |
//! |---|---|---|---|---|
//! | producer | 0 | `empty[s]` (a free slot) | each lane copies 2 words of the chunk into slot `s` | `full[s]`: 32 arrivals (the whole warp) |
//! | consumer | 1, 2 | `full[s]` (a filled slot) | each lane reads its word, writes `3·x + 1` to `out` | `empty[s]`: 32 arrivals per warp, 64 in all |

use crate::slot::{load_word, store_word};
use crate::warp::Warp;
use crate::{CHUNK, CONSUMER_WARPS, PipelineParams, PipelineSmem, STAGES, Slot};
use baton::pipeline::ProducerConsumerPipeline;
use baton::smem::SharedRef;
use baton::smem_field;

/// Arrivals that fill a stage: every lane of the producer warp.
pub const PRODUCER_ARRIVALS: u32 = 32;
/// Arrivals that free a stage: every lane of every consumer warp.
pub const CONSUMER_ARRIVALS: u32 = 32 * CONSUMER_WARPS;

/// One block: warp 0 initializes the barriers, everyone syncs, then warp 0
/// produces and the others consume chunks `block, block + grid, …`.
#[inline(always)]
pub fn block<W: Warp>(
    w: &W,
    smem: SharedRef<'_, PipelineSmem>,
    p: &PipelineParams,
    block: u32,
    grid: u32,
) {
    let mut pipe = ProducerConsumerPipeline::new(smem_field!(smem, PipelineSmem, bars), c"ex01");
    if w.index() == 0 {
        w.elect(|| pipe.init_barriers(PRODUCER_ARRIVALS, CONSUMER_ARRIVALS));
    }
    // Nobody touches a barrier before it is initialized.
    w.sync_block();
    let slots = smem_field!(smem, PipelineSmem, slots);
    if w.index() == 0 {
        producer(w, &mut pipe, slots, p, block, grid);
    } else {
        consumer(w, &mut pipe, slots, p, w.index() - 1, block, grid);
    }
}

/// The producer warp: copies chunk `c` of `input` (zeros past `n`) into a
/// free slot, for `c = block, block + grid, …`.
#[inline(always)]
pub fn producer<W: Warp>(
    w: &W,
    pipe: &mut ProducerConsumerPipeline<'_, STAGES>,
    slots: SharedRef<'_, [Slot; STAGES]>,
    p: &PipelineParams,
    block: u32,
    grid: u32,
) {
    let chunks = p.n.div_ceil(CHUNK);
    let mut c = block;
    while c < chunks {
        let stage = pipe.acquire_producer(); // waits on empty[s]
        let slot = slots.at(stage.index() as usize);
        w.for_each_lane(|lane| {
            let mut j = lane;
            while j < CHUNK {
                let i = c * CHUNK + j;
                // SAFETY: i < n: `input` holds n words.
                let v = if i < p.n {
                    unsafe { *p.input.add(i as usize) }
                } else {
                    0
                };
                // SAFETY: j < CHUNK; the producer holds this stage.
                unsafe { store_word(slot, j, v) };
                j += 32;
            }
        });
        stage.release(); // arrive on full[s]: 32 arrivals complete the phase
        c += grid;
    }
    // Wait until the consumers released every stage before leaving.
    pipe.drain();
}

/// Consumer warp `k` (`0..CONSUMER_WARPS`): for every chunk, lane `l` turns
/// word `32·k + l` of the slot into `out[i] = 3·x + 1`.
#[inline(always)]
pub fn consumer<W: Warp>(
    w: &W,
    pipe: &mut ProducerConsumerPipeline<'_, STAGES>,
    slots: SharedRef<'_, [Slot; STAGES]>,
    p: &PipelineParams,
    k: u32,
    block: u32,
    grid: u32,
) {
    let chunks = p.n.div_ceil(CHUNK);
    let mut c = block;
    while c < chunks {
        let stage = pipe.consume(); // waits on full[s]
        let slot = slots.at(stage.index() as usize);
        w.for_each_lane(|lane| {
            let j = 32 * k + lane;
            let i = c * CHUNK + j;
            // SAFETY: j < CHUNK; the stage is full until the guard drops.
            let x = unsafe { load_word(slot, j) };
            if i < p.n {
                // SAFETY: i < n: `out` holds n words; one writer per word.
                unsafe { *p.out.add(i as usize) = x.wrapping_mul(3).wrapping_add(1) };
            }
        });
        drop(stage); // arrive on empty[s], step
        c += grid;
    }
}
