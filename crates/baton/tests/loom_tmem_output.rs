//! Model-checks `TmemOutputPipeline` under loom:
//! `RUSTFLAGS="--cfg loom" cargo test -p baton --test loom_tmem_output --release`.
//!
//! One MMA thread (one elected lane: one commit per stage) and the
//! epilogue: one thread standing for all 128 lanes over three tiles, or two
//! threads of 64 lanes each (128 arrivals on `empty` from two racing
//! threads) over two tiles. The
//! accumulator stages are loom `UnsafeCell`s, one per TMEM column range, so
//! loom fails the model if an epilogue read is not ordered after the MMA's
//! write through the commit, or a refill not after every epilogue release.
#![cfg(loom)]

use baton::arch::cpu::{elect_one, with_lanes};
use baton::arch::tmem_addr::TmemAddr;
use baton::pipeline::PipelineBarriers;
use baton::smem::SharedRef;
use baton::tile_pipeline::*;
use loom::cell::UnsafeCell;
use loom::sync::Arc;

const COLS: u32 = 64;
const TILES: u32 = 3;

/// Stand-in TMEM: one cell per stage, found from the stage's column.
struct Shared<const STAGES: usize> {
    bars: PipelineBarriers<STAGES>,
    acc: [UnsafeCell<u32>; STAGES],
}

impl<const STAGES: usize> Shared<STAGES> {
    fn cell(&self, at: TmemAddr) -> &UnsafeCell<u32> {
        assert_eq!(at.column() % COLS, 0);
        &self.acc[(at.column() / COLS) as usize]
    }
}

fn pipe<const STAGES: usize>(s: &Shared<STAGES>) -> TmemOutputPipeline<'_, STAGES, COLS> {
    TmemOutputPipeline::new(SharedRef::from_ref(&s.bars), TmemAddr(0), c"loom-tmem")
}

/// One epilogue thread standing for `lanes` lanes.
fn epilogue<const STAGES: usize>(s: &Shared<STAGES>, per_k: bool, lanes: u32, tiles: u32) {
    with_lanes(lanes, || {
        let mut epi = pipe(s).consumer();
        if per_k {
            let mut tile = epi.tile(tiles);
            while let Some(ctx) = tile.next_k() {
                // SAFETY (loom-checked): the epilogue holds the stage.
                let v = s.cell(ctx.tmem()).with(|p| unsafe { *p });
                assert_eq!(v, ctx.k());
            }
        } else {
            for t in 0..tiles {
                let stage = epi.acquire();
                // SAFETY (loom-checked): as above.
                let v = s.cell(stage.tmem()).with(|p| unsafe { *p });
                assert_eq!(v, t);
            }
        }
    })
}

fn model<const STAGES: usize>(per_k: bool, epilogue_threads: u32) {
    let tiles = if epilogue_threads == 1 {
        TILES
    } else {
        TILES - 1
    };
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(if epilogue_threads == 1 { 3 } else { 2 });
    let iterations = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let shared = Arc::new(Shared::<STAGES> {
            bars: PipelineBarriers::new(),
            acc: core::array::from_fn(|_| UnsafeCell::new(u32::MAX)),
        });
        pipe(&shared).init();

        let mma_shared = shared.clone();
        let mma = loom::thread::spawn(move || {
            let s = &*mma_shared;
            elect_one(|| {
                let mut mma = pipe(s).producer();
                for t in 0..tiles {
                    if per_k {
                        let stage = mma.acquire_k(t);
                        // SAFETY (loom-checked): the MMA holds the stage.
                        s.cell(stage.tmem()).with_mut(|p| unsafe { *p = t });
                        stage.commit(|bar| bar.arrive());
                    } else {
                        let stage = mma.acquire_stage();
                        s.cell(stage.tmem()).with_mut(|p| unsafe { *p = t });
                        stage.commit(|bar| bar.arrive());
                    }
                }
                mma.drain();
            });
        });

        let lanes = 128 / epilogue_threads;
        let others: Vec<_> = (1..epilogue_threads)
            .map(|_| {
                let epi_shared = shared.clone();
                loom::thread::spawn(move || epilogue(&epi_shared, per_k, lanes, tiles))
            })
            .collect();
        epilogue(&shared, per_k, lanes, tiles);
        for other in others {
            other.join().unwrap();
        }
        mma.join().unwrap();
    });
    let explored = iterations.load(std::sync::atomic::Ordering::Relaxed);
    assert!(explored > 10, "loom explored only {explored} schedules");
}

#[test]
fn tmem_output_one_stage() {
    model::<1>(false, 1);
}

#[test]
fn tmem_output_two_stages() {
    model::<2>(false, 1);
}

#[test]
fn tmem_output_per_k_two_stages() {
    model::<2>(true, 1);
}

#[test]
fn tmem_output_two_epilogue_threads() {
    model::<1>(false, 2);
}

/// Control: an MMA that refills a stage without waiting for `empty` races
/// with the epilogue's read, and loom must say so.
#[test]
#[should_panic(expected = "Causality violation")]
fn refilling_without_acquire_is_a_race_loom_detects() {
    loom::model(|| {
        let shared = Arc::new(Shared::<1> {
            bars: PipelineBarriers::new(),
            acc: [UnsafeCell::new(0)],
        });
        let pipe = TmemOutputPipeline::<1, COLS>::new(
            SharedRef::from_ref(&shared.bars),
            TmemAddr(0),
            c"loom-race",
        );
        pipe.init();
        let mma_shared = shared.clone();
        let mma = loom::thread::spawn(move || {
            let s = &*mma_shared;
            let pipe =
                TmemOutputPipeline::<1, COLS>::new(SharedRef::from_ref(&s.bars), TmemAddr(0), c"r");
            elect_one(|| {
                let mut mma = pipe.producer();
                let stage = mma.acquire_stage();
                s.cell(stage.tmem()).with_mut(|p| unsafe { *p = 1 });
                stage.commit(|bar| bar.arrive());
                // Broken: writes the next tile without acquire_stage().
                s.cell(TmemAddr(0)).with_mut(|p| unsafe { *p = 2 });
            });
        });
        with_lanes(128, || {
            let mut epi = pipe.consumer();
            let stage = epi.acquire();
            shared.cell(stage.tmem()).with(|p| unsafe { *p });
        });
        mma.join().unwrap();
    });
}
