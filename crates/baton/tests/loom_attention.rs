//! Exhaustive model check (loom, `tools/test-loom.sh`) of the attention
//! forward kernel's synchronization configuration
//! (`attention/kernel/src/fwd.rs`), scaled down: one producer thread and two
//! consumer threads, each standing for one warpgroup.
//!
//! # What is modeled, as the kernel has it
//!
//! * `q`: an `InputTilePipeline` of one stage, consumer count 2 (one
//!   arrival per consumer warpgroup); the producer loads it once (simulated
//!   TMA), each consumer waits on it, reads its own row for every S, writes
//!   its O over that row at the end and then releases it; the producer
//!   drains it.
//! * `k` and `v`: `InputTilePipeline`s of 2 stages each, consumer count 2;
//!   the producer loads block `j`'s K, then its V, for `BLOCKS` blocks (3:
//!   each ring wraps, so stage reuse and the phase flip are covered).
//! * The order between the two consumers: `OrderedBarrier<1, 2>`, one turn
//!   kind, initialized with one arrival per turn (the kernel's 128: every
//!   thread of a warpgroup; one thread stands for the warpgroup here).
//! * Each consumer's loop (FA3's intra-warpgroup overlap): acquire K_0; turn
//!   { issue S_0 }; retire S (`wait_group<0>`); release K_0; then per block
//!   `j ≥ 1`: acquire K_j and V_{j−1}; turn { issue S_j, issue P·V_{j−1} };
//!   retire S_j (`wait_group<1>`), release K_j; retire P·V (`wait_group<0>`),
//!   release V_{j−1}; last: acquire V; turn { issue P·V }; retire; release;
//!   write O over its Q row; release Q.
//!
//! `wgmma` is asynchronous: an MMA reads its shared-memory operands after
//! its issue, until a `wait_group` retires it. The model performs the reads
//! of an MMA's operands at its *retire* point, and checks their values
//! (block `j`'s K and V, the consumer's Q row). Issuing inside the turn
//! touches one "tensor core" cell that counts issues in the order the
//! ordered barrier must impose (consumer 0, 1, 0, 1, …).
//!
//! A read of a stage the producer refills concurrently, or two consumers
//! issuing at once, is a loom causality violation; a wrong value or order
//! fails an assertion; a hang ends in loom's branch limit or deadlock.
//!
//! The controls at the end must be rejected: a consumer that releases its K
//! stage before the S that reads it retired, and a consumer that skips its
//! wait for the turn.
#![cfg(loom)]

use baton::arch::cpu::tma::{self, TensorMap};
use baton::ordered_barrier::{OrderedBarrier, OrderedBarriers};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::{InputTilePipeline, InputTileStorage, Tile, TilePayload};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// K/V blocks per consumer (each ring of 2 stages wraps once).
const BLOCKS: u32 = 3;
/// K and V stages (the kernel uses 2 or 3; the model 2).
const STAGES: usize = 2;
/// Consumer warpgroups (the kernel's `CONSUMER_WARPGROUPS`).
const CONSUMERS: u32 = 2;

/// One K or V block: one 16-byte row.
struct KvPayload;
impl TilePayload for KvPayload {
    type Stage = Tile<u8, 1, 16>;
    const TMA_BYTES: u32 = Tile::<u8, 1, 16>::BYTES;
}

/// Q: one row per consumer warpgroup (separate tiles, as the kernel's
/// `QStage::rows`).
#[repr(C)]
#[derive(Default)]
struct QStage {
    rows: [Tile<u8, 1, 16>; 2],
}
struct QPayload;
impl TilePayload for QPayload {
    type Stage = QStage;
    const TMA_BYTES: u32 = 2 * Tile::<u8, 1, 16>::BYTES;
}

/// A cell only ordered accesses may touch (loom checks it).
struct Slot(UnsafeCell<u64>);
// SAFETY: accesses are ordered by the ordered barrier; loom reports any
// access that is not.
unsafe impl Sync for Slot {}
impl Slot {
    fn read(&self) -> u64 {
        // SAFETY: loom's cell checks the exclusivity dynamically.
        self.0.with(|p| unsafe { *p })
    }
    fn write(&self, v: u64) {
        // SAFETY: as `read`.
        self.0.with_mut(|p| unsafe { *p = v });
    }
}

struct Smem {
    q: InputTileStorage<QPayload, 1>,
    k: InputTileStorage<KvPayload, STAGES>,
    v: InputTileStorage<KvPayload, STAGES>,
    order: OrderedBarriers<1, 2>,
    /// The tensor cores: issues so far (the ordered barrier serializes them).
    tensor_core: Slot,
}

/// Byte of K block `j`, V block `j`, Q row `g`.
fn k_byte(j: u32) -> u8 {
    0x10 + j as u8
}
fn v_byte(j: u32) -> u8 {
    0x40 + j as u8
}
fn q_byte(g: u32) -> u8 {
    0x70 + g as u8
}

/// A 2-D map over `rows` rows of 16 bytes, one-row boxes.
fn map(src: &[u8], rows: u64, box_rows: u32) -> TensorMap {
    // SAFETY: the buffers outlive the model iteration that uses the maps.
    unsafe {
        TensorMap::new(TensorMapDesc::matrix_2d(
            ElemType::U8,
            src.as_ptr() as u64,
            rows,
            16,
            16,
            box_rows,
            16,
            Swizzle::None,
        ))
    }
    .unwrap()
}

/// How a consumer misbehaves (the controls).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    /// Releases each K stage right after issuing S, before `wait_group`
    /// retired the S that reads it.
    ReleaseKBeforeRetire,
    /// Consumer 1 does not wait for its first turn.
    SkipTurn,
}

/// Consumer warpgroup `g`.
fn consumer(smem: &Smem, g: u32, fault: Fault) {
    let q = InputTilePipeline::<QPayload, 1>::new(SharedRef::from_ref(&smem.q), c"attn_q");
    let kp = InputTilePipeline::<KvPayload, STAGES>::new(SharedRef::from_ref(&smem.k), c"attn_k");
    let vp = InputTilePipeline::<KvPayload, STAGES>::new(SharedRef::from_ref(&smem.v), c"attn_v");
    let mut order = OrderedBarrier::<1, 2>::new(SharedRef::from_ref(&smem.order), g, c"order");
    let mut turns = 0u64;
    // Inside the turn: the issue is the `turns`-th of this consumer, so the
    // (2·turns + g)-th on the tensor cores.
    let mut issue = |order: &mut OrderedBarrier<'_, 1, 2>| {
        if !(fault == Fault::SkipTurn && g == 1 && turns == 0) {
            order.wait();
        }
        let n = smem.tensor_core.read();
        assert_eq!(n, 2 * turns + g as u64, "consumer {g}: issued out of turn");
        smem.tensor_core.write(n + 1);
        turns += 1;
        order.arrive();
    };

    let mut qc = q.consumer();
    let q_stage = qc.acquire_stage();
    let q_row = smem_field!(q_stage.tiles(), QStage, rows).at(g as usize);
    // The operand reads of a retiring S_j (Q row and K stage) and P·V (V).
    let retire_s = |k: SharedRef<'_, Tile<u8, 1, 16>>, j: u32| {
        // SAFETY: the stages are held (acquired, not yet released) in the
        // protocol; a fault's early release is what loom must catch.
        let (qv, kv) = unsafe {
            (
                q_row.get().read(Swizzle::None, 0, 3),
                k.get().read(Swizzle::None, 0, 3),
            )
        };
        assert_eq!((qv, kv), (q_byte(g), k_byte(j)), "consumer {g}: S_{j} read the wrong Q or K");
    };
    let retire_pv = |v: SharedRef<'_, Tile<u8, 1, 16>>, j: u32| {
        // SAFETY: as `retire_s`.
        let vv = unsafe { v.get().read(Swizzle::None, 0, 3) };
        assert_eq!(vv, v_byte(j), "consumer {g}: P·V_{j} read the wrong V");
    };

    let mut kc = kp.consumer();
    let mut vc = vp.consumer();
    let k = kc.acquire_stage();
    issue(&mut order); // S_0
    let kt = k.tiles();
    if fault == Fault::ReleaseKBeforeRetire {
        k.defer_release().release_if(true);
        retire_s(kt, 0);
    } else {
        retire_s(kt, 0); // wait_group<0>
        k.defer_release().release_if(true);
    }
    for j in 1..BLOCKS {
        let k = kc.acquire_stage();
        let v = vc.acquire_stage(); // V_{j-1}
        issue(&mut order); // S_j, P·V_{j-1}
        let (kt, vt) = (k.tiles(), v.tiles());
        if fault == Fault::ReleaseKBeforeRetire {
            k.defer_release().release_if(true);
            retire_s(kt, j);
        } else {
            retire_s(kt, j); // wait_group<1>
            k.defer_release().release_if(true);
        }
        retire_pv(vt, j - 1); // wait_group<0>
        v.defer_release().release_if(true);
    }
    let v = vc.acquire_stage();
    issue(&mut order); // the last P·V
    retire_pv(v.tiles(), BLOCKS - 1);
    v.defer_release().release_if(true);
    // Epilogue: O over this consumer's Q row (its last read retired above),
    // then Q is free.
    // SAFETY: this consumer's own row of the held Q stage.
    unsafe { q_row.get().write(Swizzle::None, 0, 3, 0xEE) };
    q_stage.defer_release().release_if(true);
}

fn explore(preemption_bound: usize, fault: Fault) -> usize {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    let iterations = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        let k_src: Vec<u8> = (0..BLOCKS).flat_map(|j| [k_byte(j); 16]).collect();
        let v_src: Vec<u8> = (0..BLOCKS).flat_map(|j| [v_byte(j); 16]).collect();
        let q_src: Vec<u8> = (0..2).flat_map(|g| [q_byte(g); 16]).collect();
        let (k_map, v_map, q_map) = (
            map(&k_src, BLOCKS as u64, 1),
            map(&v_src, BLOCKS as u64, 1),
            map(&q_src, 2, 1),
        );
        let smem = Arc::new(Smem {
            q: InputTileStorage::new(),
            k: InputTileStorage::new(),
            v: InputTileStorage::new(),
            order: OrderedBarriers::new(),
            tensor_core: Slot(UnsafeCell::new(0)),
        });
        // Setup (one thread, then the block barrier: the spawns order it).
        let q = InputTilePipeline::<QPayload, 1>::new(SharedRef::from_ref(&smem.q), c"attn_q");
        let kp =
            InputTilePipeline::<KvPayload, STAGES>::new(SharedRef::from_ref(&smem.k), c"attn_k");
        let vp =
            InputTilePipeline::<KvPayload, STAGES>::new(SharedRef::from_ref(&smem.v), c"attn_v");
        OrderedBarrier::<1, 2>::new(SharedRef::from_ref(&smem.order), 0, c"order").init(1);
        kp.init(CONSUMERS);
        vp.init(CONSUMERS);
        q.init(CONSUMERS);

        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|g| {
                let smem = smem.clone();
                loom::thread::spawn(move || consumer(&smem, g, fault))
            })
            .collect();

        // The producer: Q once, then K_j, V_j.
        let mut qp = q.producer();
        let stage = qp.acquire_stage();
        stage.arrive_expect_tx();
        let rows = smem_field!(stage.tiles(), QStage, rows);
        for g in 0..2 {
            // SAFETY: the producer holds the stage; its full barrier expects
            // both rows.
            unsafe { tma::load_2d(&q_map, rows.at(g), stage.barrier(), 0, g as i32) };
        }
        stage.release();
        let mut kprod = kp.producer();
        let mut vprod = vp.producer();
        for j in 0..BLOCKS {
            for (prod, map) in [(&mut kprod, &k_map), (&mut vprod, &v_map)] {
                let stage = prod.acquire_stage();
                stage.arrive_expect_tx();
                // SAFETY: the producer holds the stage.
                unsafe { tma::load_2d(map, stage.tiles(), stage.barrier(), 0, j as i32) };
                stage.release();
            }
        }
        kprod.drain();
        vprod.drain();
        qp.drain();
        for c in consumers {
            c.join().unwrap();
        }
        assert_eq!(
            smem.tensor_core.read(),
            2 * (BLOCKS as u64 + 1),
            "an issue turn was lost"
        );
        // Both consumers wrote their O rows before releasing Q.
        for g in 0..2 {
            // SAFETY: every thread joined.
            let o = unsafe { smem.q.stages[0].rows[g].read(Swizzle::None, 0, 3) };
            assert_eq!(o, 0xEE, "consumer {g}'s O row");
        }
    });
    iterations.load(Relaxed)
}

/// The kernel's configuration, 3 blocks through 2-stage K and V rings.
#[test]
fn attention_pipelines_and_ping_pong() {
    let t = std::time::Instant::now();
    let n = explore(1, Fault::None);
    println!("attention model: {n} executions in {:.1?}", t.elapsed());
    assert!(n > 10, "loom explored only {n} executions");
}

fn must_fail(fault: Fault) -> String {
    let payload = match catch_unwind(AssertUnwindSafe(|| explore(1, fault))) {
        Ok(n) => panic!("loom accepted {fault:?} ({n} executions explored)"),
        Err(p) => p,
    };
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Wrong: K released before the S reading it retired — the producer's
/// refill of that stage (block 2 into stage 0) races with the read.
#[test]
fn releasing_k_before_its_wgmma_retired_is_caught() {
    let msg = must_fail(Fault::ReleaseKBeforeRetire);
    assert!(
        msg.contains("Causality violation") || msg.contains("read the wrong"),
        "loom failed for another reason: {msg}"
    );
}

/// Wrong: consumer 1 issues its first wgmmas without waiting for its turn,
/// overlapping consumer 0's.
#[test]
fn skipping_the_turn_is_caught() {
    let msg = must_fail(Fault::SkipTurn);
    assert!(
        msg.contains("Causality violation")
            || msg.contains("out of turn")
            || msg.contains("branches")
            || msg.contains("deadlock"),
        "loom failed for another reason: {msg}"
    );
}
