//! The loader and the row-dot role, and the block program.
//!
//! | role | warp | waits on | then | signals |
//! |---|---|---|---|---|
//! | loader (lane 0) | 0 | `empty[s]` | TMA loads of K and V rows `32·b ..` into stage `s` | `arrive_expect_tx(KvPayload::TMA_BYTES)` on `full[s]` |
//! | dot | 1 | `full[s]` | lane `r`: `out[32·b + r] = Σ_c K[r][c]·V[r][c]` | `empty[s]`: every lane (32) |

use crate::payload::{DIM, KvPayload, KvStage, ROWS};
use crate::tile_io::load;
use crate::warp::Warp;
use crate::{KvParams, KvSmem, STAGES};
use baton::arch::current::tma::{load_2d, prefetch_tensormap};
use baton::smem::SharedRef;
use baton::tile_pipeline::InputTilePipeline;

/// Arrivals that free a stage: every lane of the dot warp.
pub const DOT_ARRIVALS: u32 = 32;

type Pipe<'a> = InputTilePipeline<'a, KvPayload, STAGES>;

/// One block: barriers initialized by one thread, a block barrier, then
/// warp 0 loads and warp 1 computes row blocks `block, block + grid, …`.
#[inline(always)]
pub fn block<W: Warp>(w: &W, smem: SharedRef<'_, KvSmem>, p: &KvParams, block: u32, grid: u32) {
    let pipe = Pipe::new(smem, c"ex03-kv");
    if w.index() == 0 {
        w.lane0(|| pipe.init(DOT_ARRIVALS));
    }
    w.sync_block();
    match w.index() {
        0 => w.lane0(|| loader(pipe, p, block, grid)),
        1 => dot(w, pipe, p, block, grid),
        _ => {}
    }
}

/// The loader (one thread): per row block, K and V into one stage.
#[inline(always)]
pub fn loader(pipe: Pipe<'_>, p: &KvParams, block: u32, grid: u32) {
    // SAFETY: the host passes live tensor maps in global memory.
    unsafe {
        prefetch_tensormap(p.k_map);
        prefetch_tensormap(p.v_map);
    }
    let mut producer = pipe.producer();
    let mut b = block;
    while b < p.rows.div_ceil(ROWS as u32) {
        let row0 = (b * ROWS as u32) as i32;
        let stage = producer.acquire(); // waits on empty[s]
        stage.arrive_expect_tx(); // K's bytes + V's bytes, from the payload
        let (tiles, bar) = (stage.tiles(), stage.barrier());
        // SAFETY: this thread holds the stage; each map's box (32 × 32 u32)
        // is one tile, and both loads complete on the stage's barrier.
        unsafe {
            load_2d(p.k_map, KvStage::k(tiles), bar, 0, row0);
            load_2d(p.v_map, KvStage::v(tiles), bar, 0, row0);
        }
        b += grid;
    }
    producer.drain();
}

/// The dot warp: lane `r` reduces row `r` of the stage's K and V.
#[inline(always)]
pub fn dot<W: Warp>(w: &W, pipe: Pipe<'_>, p: &KvParams, block: u32, grid: u32) {
    let mut consumer = pipe.consumer();
    let mut b = block;
    while b < p.rows.div_ceil(ROWS as u32) {
        let stage = consumer.acquire(); // waits on full[s]
        let (k, v) = (KvStage::k(stage.tiles()), KvStage::v(stage.tiles()));
        w.for_each_lane(|r| {
            let mut acc = 0u32;
            for c in 0..DIM as u32 {
                // SAFETY: r < 32 = ROWS, c < DIM; the stage is held.
                let (kx, vx) = unsafe { (load(k, r, c), load(v, r, c)) };
                acc = acc.wrapping_add(kx.wrapping_mul(vx));
            }
            let row = b * ROWS as u32 + r;
            if row < p.rows {
                // SAFETY: row < rows: `out` holds `rows` words; one writer each.
                unsafe { *p.out.add(row as usize) = acc };
            }
        });
        drop(stage); // every lane arrives on empty[s]
        b += grid;
    }
}
