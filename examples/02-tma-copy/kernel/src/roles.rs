//! The load and store roles and the block program that dispatches them.
//!
//! | role | warp | waits on | then | signals |
//! |---|---|---|---|---|
//! | loader (lane 0) | 0 | `empty[s]` | TMA load of tile `t` into stage `s` | `arrive_expect_tx(TMA_BYTES)` on `full[s]`; the copy engine completes the bytes |
//! | storer | 1 | `full[s]` | lane 0: TMA store of stage `s`, wait until it was read | `empty[s]`: every lane arrives (32) |

use crate::warp::Warp;
use crate::{CopySmem, STAGES, TILE, TilePayload64, TmaCopyParams};
use baton::arch::current::fence_proxy_async_shared;
use baton::arch::current::tma::{
    load_2d, prefetch_tensormap, store_2d, store_commit_group, store_wait_group,
    store_wait_group_read,
};
use baton::smem::SharedRef;
use baton::tile_pipeline::InputTilePipeline;

/// Arrivals that free a stage: every lane of the storer warp.
pub const STORER_ARRIVALS: u32 = 32;

type Pipe<'a> = InputTilePipeline<'a, TilePayload64, STAGES>;

/// Element coordinates (column, row) of tile `t`.
#[inline(always)]
fn coords(t: u32, tiles_n: u32) -> (i32, i32) {
    (((t % tiles_n) * TILE) as i32, ((t / tiles_n) * TILE) as i32)
}

/// One block: barriers initialized by one thread, a block barrier, then
/// warp 0 loads and warp 1 stores tiles `block, block + grid, …`.
#[inline(always)]
pub fn block<W: Warp>(
    w: &W,
    smem: SharedRef<'_, CopySmem>,
    p: &TmaCopyParams,
    block: u32,
    grid: u32,
) {
    let pipe = Pipe::new(smem, c"ex02");
    if w.index() == 0 {
        w.lane0(|| pipe.init(STORER_ARRIVALS));
    }
    w.sync_block();
    match w.index() {
        0 => w.lane0(|| loader(pipe, p, block, grid)),
        1 => storer(w, pipe, p, block, grid),
        _ => {}
    }
}

/// The loader (one thread): a TMA load per tile.
#[inline(always)]
pub fn loader(pipe: Pipe<'_>, p: &TmaCopyParams, block: u32, grid: u32) {
    // SAFETY: the host passes a live tensor map in global memory.
    unsafe { prefetch_tensormap(p.load_map) };
    let mut producer = pipe.producer();
    let mut t = block;
    while t < p.tiles_m * p.tiles_n {
        let (c0, c1) = coords(t, p.tiles_n);
        let tiles = producer.acquire(); // waits on empty[s]
        tiles.arrive_expect_tx(); // TMA_BYTES, from the payload type
        // SAFETY: this thread holds the stage; the map's box (64 × 64 bf16)
        // is the tile and TMA_BYTES its byte count.
        unsafe { load_2d(p.load_map, tiles.tiles(), tiles.barrier(), c0, c1) };
        t += grid;
    }
    // Wait until the storer released every stage.
    producer.drain();
}

/// The storer warp: lane 0 TMA-stores each stage; every lane releases it.
#[inline(always)]
pub fn storer<W: Warp>(w: &W, pipe: Pipe<'_>, p: &TmaCopyParams, block: u32, grid: u32) {
    let mut consumer = pipe.consumer();
    let mut t = block;
    while t < p.tiles_m * p.tiles_n {
        let (c0, c1) = coords(t, p.tiles_n);
        let tiles = consumer.acquire(); // waits on full[s]
        w.lane0(|| {
            // Order the stage's shared memory before the async proxy reads it.
            fence_proxy_async_shared();
            // SAFETY: the warp holds the stage until lane 0 arrives below,
            // after the store has read it.
            unsafe { store_2d(p.store_map, tiles.tiles(), c0, c1) };
            store_commit_group();
            store_wait_group_read::<0>();
        });
        // Each lane arrives on empty[s]; lane 0 only after its store read
        // the tile, so the stage cannot be refilled under the store.
        drop(tiles);
        t += grid;
    }
    // The stores' global writes are complete before the kernel ends.
    w.lane0(store_wait_group::<0>);
}
