//! Device tile copy through `baton::tile_pipeline` (issue #5): TMA loads
//! into an `InputTilePipeline`, TMA stores of each stage back out to `D`.
//!
//! Both kernels copy a row-major bf16 matrix (`u16` bits) in 64 × 64 tiles
//! with the 128-byte swizzle (a 64-element bf16 row is exactly the swizzle
//! span). Block: 256 threads — warp 0 of warpgroup 0 is the TMA producer
//! (one elected thread), warpgroup 1 (threads 128..256) the consumers.
//!
//! Host side: `baton_runtime::tile_copy` (plan, launch, bit-exact check),
//! tested by `crates/baton-selftest/tests/gpu_tile_copy.rs` (H100,
//! 2026-11-23: both kernels copy random 256×256 … 4096×4096 matrices,
//! ragged edges included, bit-exactly, release and debug PTX) and timed
//! against a device memcpy by `baton bench tile-copy` (BENCHMARKS.md).
//!
//! Host contract (tensor maps in global memory, encoded by
//! `baton_runtime::tensor_map::encode` from a validated
//! `baton::tensor_map::TensorMapDesc`):
//!
//! | kernel | `load_map` box | `store_map` box | launch |
//! |---|---|---|---|
//! | `baton_tile_copy_bf16` | 64 × 64, B128 | 64 × 64, B128 | any grid, 256 threads, `size_of::<CopySmem>()` dynamic smem |
//! | `baton_tile_copy_bf16_multicast` | 32 × 64, B128 | 32 × 64, B128 | cluster (2, 1, 1), even grid, 256 threads, `size_of::<McSmem>()` |

use baton::arch::ptx::tma::{
    load_2d, load_2d_multicast, prefetch_tensormap, store_2d, store_commit_group, store_wait_group,
    store_wait_group_read,
};
use baton::arch::ptx::{
    block_idx_x, cluster_cta_rank, cluster_sync, dynamic_smem, elect_one, fence_proxy_async_shared,
    grid_dim_x, named_barrier_sync, sync_threads, thread_idx_x, warp_idx,
};
use baton::tile_pipeline::{
    InputTilePipeline, consumer_arrivals_multicast, consumer_arrivals_per_thread,
};
use baton_kernels_abi::tile_copy as abi;
pub use baton_kernels_abi::tile_copy::{
    CopyPayload, CopySmem, HalvesPayload, McSmem, STAGES, TILE, TileCopyParams,
};
/// First thread of the consumer warpgroup.
const CONSUMER_BASE: u32 = 128;
/// Named barrier over the consumer warpgroup.
const CONSUMER_BAR: u32 = 1;

/// Tile `t` of a `tiles_m × tiles_n` grid as (column, row) element coordinates.
#[inline(always)]
fn coords(t: u32, tiles_n: u32) -> (i32, i32) {
    (((t % tiles_n) * TILE) as i32, ((t / tiles_n) * TILE) as i32)
}

baton::kernel! {
    #[spec(abi::COPY)]
    /// Copies `tiles_m × tiles_n` tiles of 64 × 64 bf16 from `load_map`'s tensor
    /// to `store_map`'s (edges: TMA zero-fills the loads and clips the stores).
    /// Block `b` handles tiles `b, b + grid, …`.
    ///
    /// # Safety
    /// Launch contract in the module docs.
    pub fn baton_tile_copy_bf16(p: TileCopyParams) {
        let TileCopyParams { load_map, store_map, tiles_m, tiles_n } = p;
        // SAFETY: the host launches with size_of::<CopySmem>() dynamic smem.
        let smem = unsafe { dynamic_smem::<CopySmem>() };
        let pipe = InputTilePipeline::<CopyPayload, STAGES>::new(smem, c"tile-copy");
        if thread_idx_x() == 0 {
            pipe.init(consumer_arrivals_per_thread(1));
        }
        sync_threads();
        let total = tiles_m * tiles_n;
        if warp_idx() == 0 {
            if elect_one() {
                // SAFETY: the host passes live tensor maps in global memory.
                unsafe { prefetch_tensormap(load_map) };
                let mut producer = pipe.producer();
                let mut t = block_idx_x();
                while t < total {
                    let (c0, c1) = coords(t, tiles_n);
                    let tiles = producer.acquire();
                    tiles.arrive_expect_tx();
                    // SAFETY: the producer holds the stage; the box (64 × 64
                    // bf16 = EXPECT_BYTES) fits the tile.
                    unsafe { load_2d(load_map, tiles.tiles(), tiles.barrier(), c0, c1) };
                    t += grid_dim_x();
                }
                producer.drain();
            }
        } else if thread_idx_x() >= CONSUMER_BASE {
            let leader = thread_idx_x() == CONSUMER_BASE;
            let mut consumer = pipe.consumer();
            let mut t = block_idx_x();
            while t < total {
                let (c0, c1) = coords(t, tiles_n);
                let tiles = consumer.acquire();
                if leader {
                    fence_proxy_async_shared();
                    // SAFETY: the warpgroup holds the stage until the store read it.
                    unsafe { store_2d(store_map, tiles.tiles(), c0, c1) };
                    store_commit_group();
                    store_wait_group_read::<0>();
                }
                // Nobody releases the stage before the store has read it.
                named_barrier_sync(CONSUMER_BAR, 128);
                drop(tiles); // 128 arrivals on empty[s]
                t += grid_dim_x();
            }
            if leader {
                store_wait_group::<0>();
            }
        }
    }
}

baton::kernel! {
    #[spec(abi::COPY_MULTICAST)]
    /// Multicast tile copy on clusters of 2 CTAs: both CTAs of a cluster work on
    /// the same tile; CTA `r` TMA-loads half `r` with `.multicast::cluster`
    /// (mask `0b11`) so the full tile lands in both CTAs, then TMA-stores the
    /// half the *peer* loaded — `D` is complete only if multicast delivered.
    /// Consumers release each stage to both CTAs (empty count
    /// `consumer_arrivals_multicast(1, 2, 1)` = 2, one signalling thread per
    /// warpgroup).
    ///
    /// # Safety
    /// Launch contract in the module docs.
    pub fn baton_tile_copy_bf16_multicast(p: TileCopyParams) {
        let TileCopyParams { load_map, store_map, tiles_m, tiles_n } = p;
        const MASK: u16 = 0b11;
        // SAFETY: the host launches with size_of::<McSmem>() dynamic smem.
        let smem = unsafe { dynamic_smem::<McSmem>() };
        let pipe = InputTilePipeline::<HalvesPayload, STAGES>::new(smem, c"tile-copy-mc");
        if thread_idx_x() == 0 {
            pipe.init(consumer_arrivals_multicast(1, 2, 1));
        }
        // Peers multicast into our stages and arrive on our barriers: the whole
        // cluster must see them initialized.
        cluster_sync();
        let rank = cluster_cta_rank();
        let (cluster, clusters) = (block_idx_x() / 2, grid_dim_x() / 2);
        let total = tiles_m * tiles_n;
        if warp_idx() == 0 {
            if elect_one() {
                // SAFETY: live tensor map.
                unsafe { prefetch_tensormap(load_map) };
                let mut producer = pipe.producer();
                let mut t = cluster;
                while t < total {
                    let (c0, c1) = coords(t, tiles_n);
                    let tiles = producer.acquire();
                    tiles.arrive_expect_tx(); // both halves land here
                    // SAFETY: both CTAs of the cluster hold this stage free (our
                    // empty barrier counts both CTAs' releases).
                    unsafe {
                        load_2d_multicast(
                            load_map,
                            tiles.tiles().at((rank & 1) as usize),
                            tiles.barrier(),
                            c0,
                            c1 + (rank * 32) as i32,
                            MASK,
                        )
                    };
                    t += clusters;
                }
                producer.drain();
            }
        } else if thread_idx_x() >= CONSUMER_BASE {
            let leader = thread_idx_x() == CONSUMER_BASE;
            let peer = (rank ^ 1) & 1;
            let mut consumer = pipe.consumer();
            let mut t = cluster;
            while t < total {
                let (c0, c1) = coords(t, tiles_n);
                let tiles = consumer.acquire_stage();
                if leader {
                    fence_proxy_async_shared();
                    // SAFETY: the stage is held until the store read it.
                    unsafe {
                        store_2d(
                            store_map,
                            tiles.tiles().at(peer as usize),
                            c0,
                            c1 + (peer * 32) as i32,
                        )
                    };
                    store_commit_group();
                    store_wait_group_read::<0>();
                }
                // Only the leader arrives: every thread of the warpgroup must
                // have passed its wait before the stage can be refilled, or a
                // slow one would miss the phase (see `acquire_multicast`).
                named_barrier_sync(CONSUMER_BAR, 128);
                // Leader: one arrive on empty[s] of both CTAs, with CTA-scope
                // release — the stage was only read (the store's smem reads are
                // done: `store_wait_group_read`), so nothing is published to the
                // peer. The cluster-scope release of `acquire_multicast`'s drop
                // waits for everything the thread has in flight (the TMA store's
                // global writes too): measured on H100, 0.69 of a device memcpy's
                // bandwidth against the plain kernel's 0.92–0.98.
                tiles.defer_release().release_multicast_if(MASK, leader);
                t += clusters;
            }
            if leader {
                store_wait_group::<0>();
            }
        }
        // Keep both CTAs alive until the peer stopped touching our barriers.
        cluster_sync();
    }
}
