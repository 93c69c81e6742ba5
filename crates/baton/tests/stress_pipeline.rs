//! Stress: sequence numbers through `ProducerConsumerPipeline` on real
//! threads, for every stage count 1..=8, with one consumer warp and with
//! several consumer warps that each read every item (broadcast).
//!
//! The payload slots are `AtomicU64`s accessed with `Relaxed` ordering, so
//! only the pipeline's barriers order a consumer's read after the producer's
//! write and a refill after every consumer's read: a wrong phase, a missing
//! arrival or a too-weak barrier ordering shows up as a stale or overwritten
//! value (the consumer checks every value against the sequence number it
//! expects), and a lost arrival as a hung wait (the CPU backend's bounded
//! wait panics with the site).
//!
//! The default run moves 2^20 items (> 10^6 handoffs) in total, split over
//! the stage counts and both shapes, in well under a minute in a debug
//! build on two cores. `cargo test --release --test stress_pipeline --
//! --ignored` runs a variant with 2^20 items for *each* stage count and
//! shape.
#![cfg(not(loom))]

use baton::arch::cpu::{CpuBlock, WARP_SIZE, elect_one};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Words per slot: the consumer checks them all, so a torn or partly stale
/// slot is caught too.
const WORDS: usize = 4;

struct Smem<const S: usize> {
    bars: PipelineBarriers<S>,
    slots: [[AtomicU64; WORDS]; S],
    /// Items each consumer warp saw (final count).
    seen: [AtomicU64; 8],
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Producer warp (all 32 lanes arrive: producer count 32), one consumer
    /// warp (consumer count 32), scoped API.
    OneConsumer,
    /// Elected producer lane (producer count 1) and `n` consumer warps that
    /// each read every item (consumer count 32 × n), linear API.
    Broadcast(u32),
}

fn value(item: u64, word: usize) -> u64 {
    // distinct per item and word, never 0 (the initial slot value)
    (item + 1) * 8 + word as u64
}

/// Runs `items` items through a `STAGES`-stage ring; returns nothing but
/// panics on any lost, duplicated, reordered or stale item.
fn run<const STAGES: usize>(shape: Shape, items: u64) {
    let consumer_warps = match shape {
        Shape::OneConsumer => 1,
        Shape::Broadcast(n) => n,
    };
    assert!(consumer_warps as usize <= 8);
    let block = CpuBlock::new(Smem::<STAGES> {
        bars: PipelineBarriers::new(),
        slots: std::array::from_fn(|_| Default::default()),
        seen: Default::default(),
    });
    block.run_warps(1 + consumer_warps, |warp, smem| {
        let s = smem.get();
        let mut pipe =
            ProducerConsumerPipeline::new(baton::smem_field!(smem, Smem<STAGES>, bars), c"stress");
        if warp.index() == 0 {
            let producer_count = match shape {
                Shape::OneConsumer => WARP_SIZE,
                Shape::Broadcast(_) => 1,
            };
            elect_one(|| pipe.init_barriers(producer_count, WARP_SIZE * consumer_warps));
        }
        warp.sync_block();
        if warp.index() == 0 {
            for item in 0..items {
                let fill = |stage: u32| {
                    for (w, word) in s.slots[stage as usize].iter().enumerate() {
                        word.store(value(item, w), Relaxed);
                    }
                };
                match shape {
                    Shape::OneConsumer => {
                        let stage = pipe.produce();
                        fill(stage.index());
                    }
                    Shape::Broadcast(_) => elect_one(|| {
                        let stage = pipe.acquire_producer();
                        fill(stage.index());
                        stage.release();
                    }),
                }
            }
            // the slots may be reused only once every consumer released them
            pipe.drain();
            for slot in &s.slots {
                for word in slot {
                    word.store(0, Relaxed);
                }
            }
        } else {
            let mut seen = 0;
            for item in 0..items {
                let check = |stage: u32| {
                    assert_eq!(stage as u64, item % STAGES as u64, "stage order");
                    for (w, word) in s.slots[stage as usize].iter().enumerate() {
                        let got = word.load(Relaxed);
                        assert_eq!(
                            got,
                            value(item, w),
                            "{STAGES} stages, {shape:?}, consumer warp {}: item {item} word {w} \
                             lost, duplicated, reordered or stale",
                            warp.index()
                        );
                    }
                };
                match shape {
                    Shape::OneConsumer => {
                        let stage = pipe.consume();
                        check(stage.index());
                    }
                    Shape::Broadcast(_) => {
                        let stage = pipe.acquire_consumer();
                        check(stage.index());
                        stage.release();
                    }
                }
                seen += 1;
            }
            s.seen[warp.index() as usize - 1].store(seen, Relaxed);
        }
    });
    let s = block.smem().get();
    for w in 0..consumer_warps as usize {
        assert_eq!(s.seen[w].load(Relaxed), items, "consumer warp {w} count");
    }
}

fn all_stage_counts(shape: Shape, items: u64) {
    run::<1>(shape, items);
    run::<2>(shape, items);
    run::<3>(shape, items);
    run::<4>(shape, items);
    run::<5>(shape, items);
    run::<6>(shape, items);
    run::<7>(shape, items);
    run::<8>(shape, items);
}

/// 2^20 items in total over the default tests: 8 stage counts × 2 shapes ×
/// 2^16 items.
const ITEMS_PER_RUN: u64 = 1 << 16;

#[test]
fn one_consumer_all_stage_counts() {
    all_stage_counts(Shape::OneConsumer, ITEMS_PER_RUN);
}

#[test]
fn three_consumer_warps_broadcast_all_stage_counts() {
    all_stage_counts(Shape::Broadcast(3), ITEMS_PER_RUN);
}

#[test]
#[ignore = "2^20 items per stage count and shape: run with --release -- --ignored"]
fn long_all_stage_counts() {
    all_stage_counts(Shape::OneConsumer, 1 << 20);
    all_stage_counts(Shape::Broadcast(3), 1 << 20);
    all_stage_counts(Shape::Broadcast(7), 1 << 18);
}
