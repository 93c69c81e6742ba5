//! Model-checks the tile pipeline with the simulated TMA under loom:
//! `RUSTFLAGS="--cfg loom" cargo test -p baton --test loom_tile_pipeline --release`.
//!
//! The simulated TMA copies bytes into tiles through loom's `UnsafeCell`
//! and completes them with an acquire-release RMW on the mbarrier's atomic
//! word, so loom checks that every consumer read of a tile is ordered after
//! the copy that wrote it and every refill after the consumers' release
//! (causality violations fail the model). Three loads through 1 and 2
//! stages, the last tile half out of bounds (zero fill), stores clipped.
#![cfg(loom)]

use baton::arch::cpu::elect_one;
use baton::arch::cpu::tma::{self, TensorMap};
use baton::smem::SharedRef;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::*;
use loom::sync::Arc;

/// Two 16-byte rows per stage.
struct P;
impl TilePayload for P {
    type Stage = Tile<u8, 2, 16>;
    const TMA_BYTES: u32 = Tile::<u8, 2, 16>::BYTES;
}

const ROWS: usize = 5; // tiles: rows 0-1, 2-3, 4 (+ one zero-filled row)
const LOADS: u32 = 3;

fn map(base: u64) -> TensorMap {
    // SAFETY: the buffers outlive the model iteration that uses the maps.
    unsafe {
        TensorMap::new(TensorMapDesc::matrix_2d(
            ElemType::U8,
            base,
            ROWS as u64,
            16,
            16,
            2,
            16,
            Swizzle::None,
        ))
    }
    .unwrap()
}

fn model<const STAGES: usize>() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    let iterations = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let src: Vec<u128> = (0..ROWS as u128)
            .map(|r| u128::from_le_bytes(core::array::from_fn(|c| (r * 16 + c as u128 + 1) as u8)))
            .collect();
        let mut dst = vec![0u128; ROWS];
        let (load_map, store_map) = (map(src.as_ptr() as u64), map(dst.as_mut_ptr() as u64));
        let storage = Arc::new(InputTileStorage::<P, STAGES>::new());
        let pipe =
            InputTilePipeline::<P, STAGES>::new(SharedRef::from_ref(&*storage), c"loom-tiles");
        pipe.init(1);

        let producer_storage = storage.clone();
        let producer = loom::thread::spawn(move || {
            let pipe = InputTilePipeline::<P, STAGES>::new(
                SharedRef::from_ref(&*producer_storage),
                c"loom-tiles",
            );
            elect_one(|| {
                let mut producer = pipe.producer();
                for t in 0..LOADS {
                    let s = producer.acquire();
                    s.arrive_expect_tx();
                    // SAFETY: the producer holds the stage.
                    unsafe { tma::load_2d(&load_map, s.tiles(), s.barrier(), 0, 2 * t as i32) };
                }
                producer.drain();
            });
        });

        let mut consumer = pipe.consumer();
        for t in 0..LOADS as usize {
            let s = consumer.acquire();
            let view = s.view(Swizzle::None, |s| s);
            for r in 0..2 {
                let row = 2 * t + r;
                let want: u8 = if row < ROWS {
                    (row * 16 + 3 + 1) as u8
                } else {
                    0
                };
                assert_eq!(view.get(r, 3), want);
            }
            // SAFETY: the stage is held until the (synchronous) store returns.
            unsafe { tma::store_2d(&store_map, s.tiles(), 0, 2 * t as i32) };
        }
        producer.join().unwrap();
        assert_eq!(dst, src, "bit-exact copy, out-of-bounds row clipped");
    });
    // loom explored more than the one sequential schedule
    let explored = iterations.load(std::sync::atomic::Ordering::Relaxed);
    assert!(explored > 10, "loom explored only {explored} schedules");
}

#[test]
fn tile_pipeline_one_stage() {
    model::<1>();
}

#[test]
fn tile_pipeline_two_stages() {
    model::<2>();
}

/// Control: a consumer that reads a tile without waiting on `full` races
/// with the simulated TMA copy, and loom must say so.
#[test]
#[should_panic(expected = "Causality violation")]
fn reading_without_acquire_is_a_race_loom_detects() {
    loom::model(|| {
        let src = [0x0101_0101_0101_0101_0101_0101_0101_0101u128; ROWS];
        let load_map = map(src.as_ptr() as u64);
        let storage = Arc::new(InputTileStorage::<P, 1>::new());
        let pipe = InputTilePipeline::<P, 1>::new(SharedRef::from_ref(&*storage), c"loom-race");
        pipe.init(1);
        let producer_storage = storage.clone();
        let producer = loom::thread::spawn(move || {
            let pipe = InputTilePipeline::<P, 1>::new(
                SharedRef::from_ref(&*producer_storage),
                c"loom-race",
            );
            let mut producer = pipe.producer();
            let s = producer.acquire();
            s.arrive_expect_tx();
            // SAFETY: the producer holds the stage.
            unsafe { tma::load_2d(&load_map, s.tiles(), s.barrier(), 0, 0) };
            drop(s);
            std::mem::forget(producer);
        });
        // Wrong: no consumer wait before reading the stage.
        // SAFETY: deliberately violated; loom reports the race.
        let _ = unsafe { storage.stages[0].read(Swizzle::None, 0, 0) };
        producer.join().unwrap();
    });
}
