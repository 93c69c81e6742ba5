//! `TmemOutputPipeline` on the CPU backend: one MMA thread fills TMEM
//! column ranges (a stand-in tensor memory of 128 lanes × 512 columns) and
//! commits once per stage; the four epilogue warps (128 arrivals) check
//! every lane of their quarter before and after yielding, so a stage
//! overwritten while still read, a wrong column range or a missed wait shows
//! as a wrong value. Whole-tile and per-K forms, 1, 2 and 4 stages; linear
//! stages that are forgotten panic.
#![cfg(not(loom))]

use baton::arch::cpu::{CpuBlock, CpuCluster, elect_one};
use baton::arch::tcgen05;
use baton::arch::tmem_addr::{TMEM_COLUMNS, TMEM_LANES, TmemAddr};
use baton::pipeline::PipelineBarriers;
use baton::smem::SharedRef;
use baton::tile_pipeline::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Stand-in tensor memory: one word per (lane, column).
struct Tmem(Vec<AtomicU32>);

impl Tmem {
    fn new() -> Self {
        Self(
            (0..TMEM_LANES * TMEM_COLUMNS)
                .map(|_| AtomicU32::new(u32::MAX))
                .collect(),
        )
    }
    fn cell(&self, lane: u32, col: u32) -> &AtomicU32 {
        assert!(
            lane < TMEM_LANES && col < TMEM_COLUMNS,
            "TMEM ({lane}, {col}) out of range"
        );
        &self.0[(lane * TMEM_COLUMNS + col) as usize]
    }
    /// What an "MMA" writes for tile `t` at (lane, column offset `c`).
    fn value(t: u32, lane: u32, c: u32) -> u32 {
        t * 1_000_000 + lane * 1000 + c
    }
    /// The MMA: every lane of `cols` columns from `at`.
    fn fill(&self, at: TmemAddr, cols: u32, t: u32) {
        for lane in 0..TMEM_LANES {
            for c in 0..cols {
                self.cell(lane, at.column() + c)
                    .store(Self::value(t, lane, c), Relaxed);
            }
        }
    }
    /// One epilogue warp's check of its lane quarter.
    fn check(&self, at: TmemAddr, cols: u32, t: u32) {
        assert_eq!(at.lane() % 32, 0);
        for lane in at.lane()..at.lane() + 32 {
            for c in (0..cols).step_by(7) {
                let got = self.cell(lane, at.column() + c).load(Relaxed);
                assert_eq!(
                    got,
                    Self::value(t, lane, c),
                    "tile {t} lane {lane} col +{c}"
                );
            }
        }
    }
}

const BASE: u32 = 32; // an allocation that does not start at column 0

fn whole_tiles<const STAGES: usize, const COLS: u32>(tiles: u32) {
    let tmem = Tmem::new();
    let block = CpuBlock::new(PipelineBarriers::<STAGES>::new());
    let checked = AtomicU32::new(0);
    block.run_warps(5, |warp, bars| {
        let pipe = TmemOutputPipeline::<STAGES, COLS>::new(bars, TmemAddr(BASE), c"tmem-acc");
        if warp.index() == 0 {
            elect_one(|| pipe.init());
        }
        warp.sync_block();
        if warp.index() == 0 {
            elect_one(|| {
                let mut mma = pipe.producer();
                for t in 0..tiles {
                    if t % 2 == 1 {
                        while !mma.try_acquire() {
                            std::thread::yield_now();
                        }
                    }
                    let s = mma.acquire_stage();
                    assert_eq!(s.index(), t % STAGES as u32);
                    assert_eq!(s.tmem(), TmemAddr(BASE + COLS * (t % STAGES as u32)));
                    tmem.fill(s.tmem(), COLS, t);
                    if t % 3 == 0 {
                        // SAFETY: full[s] counts this one commit.
                        s.commit(|bar| unsafe { tcgen05::mma::commit(bar) });
                    } else {
                        s.barrier().arrive();
                        s.release_without_signal();
                    }
                }
                mma.drain();
                assert_eq!(mma.index(), tiles % STAGES as u32);
            });
        } else {
            let mut epi = pipe.consumer();
            for t in 0..tiles {
                let check = |at: TmemAddr| {
                    tmem.check(at, COLS, t);
                    std::thread::yield_now(); // let a broken MMA overwrite it
                    tmem.check(at, COLS, t);
                    checked.fetch_add(1, Relaxed);
                };
                match t % 3 {
                    0 => check(epi.acquire().warp_tmem(warp.index())),
                    1 => {
                        let s = epi.acquire_stage();
                        assert_eq!(s.tmem(), pipe.stage_tmem(t % STAGES as u32));
                        check(s.warp_tmem(warp.index()));
                        s.release();
                    }
                    _ => {
                        let ready = epi.try_acquire();
                        let s = epi.acquire_if_needed(ready);
                        check(s.warp_tmem(warp.index()));
                    }
                }
            }
            assert_eq!(epi.index(), tiles % STAGES as u32);
            assert!(!epi.try_acquire(), "nothing more was committed");
        }
    });
    assert_eq!(checked.load(Relaxed), tiles * 4);
}

#[test]
fn tmem_stages_hand_accumulators_to_the_epilogue() {
    whole_tiles::<1, 256>(40);
    whole_tiles::<2, 128>(200);
    whole_tiles::<2, 240>(60); // 2 × 240 + 32 = 512: the last column used
    whole_tiles::<4, 64>(200);
}

#[test]
fn per_k_partials_in_tmem() {
    const COLS: u32 = 16;
    let tmem = Tmem::new();
    let (tiles, k_blocks) = (7u32, 5u32);
    let block = CpuBlock::new(PipelineBarriers::<2>::new());
    block.run_warps(5, |warp, bars| {
        let pipe = TmemOutputPipeline::<2, COLS>::new(bars, TmemAddr(0), c"tmem-per-k");
        if warp.index() == 0 {
            elect_one(|| pipe.init());
        }
        warp.sync_block();
        if warp.index() == 0 {
            elect_one(|| {
                let mut mma = pipe.producer();
                for t in 0..tiles {
                    for k in 0..k_blocks {
                        let s = mma.acquire_k(k);
                        assert_eq!(s.k(), k);
                        tmem.fill(s.tmem(), COLS, t * 10 + k);
                        s.commit(|bar| bar.arrive());
                    }
                }
                mma.drain();
            });
        } else {
            let mut epi = pipe.consumer();
            for t in 0..tiles {
                let mut seen = 0;
                if t % 2 == 1 {
                    for k in 0..k_blocks {
                        let s = epi.acquire_k(k, k_blocks);
                        assert_eq!((s.k(), s.k_blocks()), (k, k_blocks));
                        assert_eq!(s.is_last_k(), k + 1 == k_blocks);
                        tmem.check(s.warp_tmem(warp.index()), COLS, t * 10 + k);
                        seen += 1;
                        s.release();
                    }
                } else {
                    let mut tile = epi.tile(k_blocks);
                    while let Some(ctx) = tile.next_k() {
                        tmem.check(ctx.warp_tmem(warp.index()), COLS, t * 10 + ctx.k());
                        seen += 1;
                    }
                    assert_eq!(tile.remaining(), 0);
                }
                assert_eq!(seen, k_blocks);
            }
        }
    });
}

/// A CTA pair (`cta_group::2`): the leader's MMA thread commits each stage
/// to `full[s]` of both CTAs (`commit_pair_multicast`, mask 0b11); each
/// CTA's four epilogue warps read their own TMEM stand-in and arrive on the
/// leader's `empty[s]` (remote from the peer): 256 arrivals free a stage.
#[test]
fn cta_pair_epilogues_release_the_leaders_stage() {
    const COLS: u32 = 128;
    let tiles = 60u32;
    let tmem = [Tmem::new(), Tmem::new()];
    let leader = 0;
    let cluster = CpuCluster::new([PipelineBarriers::<2>::new(), PipelineBarriers::<2>::new()]);
    let checked = AtomicU32::new(0);
    cluster.run_warps(5, |warp, bars| {
        let rank = warp.cta_rank();
        let pipe = TmemOutputPipeline::<2, COLS>::pair(bars, TmemAddr(0), leader, c"pair-acc");
        assert_eq!(pipe.cta_group(), 2);
        if warp.index() == 0 {
            elect_one(|| pipe.init()); // empty: 256 arrivals
        }
        warp.sync_cluster();
        if warp.index() == 0 {
            if rank == leader {
                elect_one(|| {
                    let mut mma = pipe.producer();
                    for t in 0..tiles {
                        let s = mma.acquire_stage();
                        // The pair MMA writes both CTAs' TMEM.
                        for m in &tmem {
                            m.fill(s.tmem(), COLS, t);
                        }
                        // SAFETY: full[s] of each CTA counts this one commit.
                        s.commit(|bar| unsafe { tcgen05::mma::commit_pair_multicast(bar, 0b11) });
                    }
                    mma.drain();
                });
            }
        } else {
            let mut epi = pipe.consumer();
            for t in 0..tiles {
                let s = epi.acquire();
                tmem[rank as usize].check(s.warp_tmem(warp.index()), COLS, t);
                std::thread::yield_now();
                tmem[rank as usize].check(s.warp_tmem(warp.index()), COLS, t);
                checked.fetch_add(1, Relaxed);
            }
        }
        // No CTA exits while its peer may still arrive on its barriers.
        warp.sync_cluster();
    });
    assert_eq!(checked.load(Relaxed), tiles * 8);
}

#[test]
fn init_counts_come_from_the_cta_group() {
    // A commit (1 arrival) completes full; 127 epilogue arrivals do not
    // complete empty, the 128th does.
    let bars = PipelineBarriers::<1>::new();
    let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"n");
    pipe.init();
    let mut mma = pipe.producer();
    mma.acquire_stage().commit(|bar| bar.arrive());
    let mut epi = pipe.consumer();
    let s = epi.acquire_stage();
    let empty = baton::pipeline::ProducerConsumerPipeline::new(pipe.barriers(), c"n").empty(0);
    empty.arrive_count(127);
    assert!(!mma.try_acquire(), "127 of 128 arrivals");
    s.release();
    assert!(mma.try_acquire(), "128 arrivals free the stage");
}

#[test]
#[should_panic(expected = "TmemMmaStage (stage 0, phase 1) dropped without release()")]
fn tmem_mma_stage_dropped_panics() {
    let bars = PipelineBarriers::<1>::new();
    let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"d");
    pipe.init();
    let mut mma = pipe.producer();
    drop(mma.acquire_stage());
}

#[test]
#[should_panic(expected = "TmemEpilogueStage (stage 0, phase 0) dropped without release()")]
fn tmem_epilogue_stage_dropped_panics() {
    let bars = PipelineBarriers::<1>::new();
    let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"d");
    pipe.init();
    pipe.producer().acquire_stage().commit(|bar| bar.arrive());
    let mut epi = pipe.consumer();
    drop(epi.acquire_stage());
}

#[test]
#[should_panic(expected = "TmemPerKStage (stage 0, phase 0) dropped without release()")]
fn tmem_per_k_stage_dropped_panics() {
    let bars = PipelineBarriers::<1>::new();
    let pipe = TmemOutputPipeline::<1, 64>::new(SharedRef::from_ref(&bars), TmemAddr(0), c"d");
    pipe.init();
    pipe.producer().acquire_k(0).commit(|bar| bar.arrive());
    let mut epi = pipe.consumer();
    drop(epi.acquire_k(0, 1));
}
