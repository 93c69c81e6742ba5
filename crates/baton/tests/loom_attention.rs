//! Exhaustive model check (loom, `tools/test-loom.sh`) of the attention
//! forward kernel's synchronization configuration
//! (`attention/kernel/src/fwd.rs`, persistent form), scaled down: one
//! producer thread and two consumer threads (three: the three-warpgroup
//! d = 64 kernel, `correct::<QS, 3>`), each standing for one warpgroup,
//! over a list of work tiles (K/V blocks per tile).
//!
//! # What is modeled, as the kernel has it
//!
//! * `q`: an `InputTilePipeline` of `QS` stages (const generic; the
//!   kernels' `SQ`, `HeadDimConfig::q_stages`: 2 at d = 64 and 256, 3 at
//!   d = 128, 4 for the causal d = 64 kernel's cross-tile form; all are
//!   checked), producer count 1 (the producer's
//!   `arrive_expect_tx`, the TMA completes the bytes), consumer count 1
//!   (the owning warpgroup's arrival; the kernel's 128: every thread of
//!   the warpgroup that wrote O into the stage arrives, after a named
//!   barrier behind thread 0's store wait; one thread stands for the
//!   warpgroup here). The producer fills the stages round
//!   the ring: tile `t`'s warpgroup-0 rows into stage `2t mod QS`, its
//!   warpgroup-1 rows into `(2t + 1) mod QS`. Each consumer takes every
//!   other stage: consumer 1 `skip`s one stage at the start, both `skip`
//!   one after each tile (with 3 stages consumer 0 goes 0, 2, 1, …,
//!   consumer 1 goes 1, 0, 2, …). Per tile each consumer waits on its
//!   stage's full barrier, reads it for every S, writes its O over it once
//!   its last MMA retired and then arrives on its empty barrier; the
//!   producer waits on that before refilling the stage, and drains the
//!   ring at the end.
//! * `k` and `v`: `InputTilePipeline`s of 2 stages each, consumer count 2
//!   (one arrival per consumer warpgroup). Per tile the producer fills K_0,
//!   then both Q stages, then V_0, K_1, V_1, ….
//! * The order between the two consumers: `OrderedBarrier<1, 2>`, one turn
//!   kind, initialized with one arrival per turn (the kernel's 128: every
//!   thread of a warpgroup; one thread stands for the warpgroup here).
//! * Each consumer's loop per tile (FA3's intra-warpgroup overlap): acquire
//!   its Q stage; acquire K_0; turn { issue S_0 }; retire S (`wait_group<0>`);
//!   release K_0; then per block `j ≥ 1`: acquire K_j and V_{j−1}; turn {
//!   issue S_j, issue P·V_{j−1} }; retire S_j (`wait_group<1>`), release K_j;
//!   retire P·V (`wait_group<0>`), release V_{j−1}; last: acquire V; turn {
//!   issue P·V }; retire; release; write O over its Q stage; release it;
//!   skip the other's.
//!
//! * The cross-tile form (`CROSS_TILE`, the causal d = 64 kernel; 4 Q
//!   stages, two per consumer): the producer loads the first tile's Q rows
//!   before its K_0 and every later tile's a tile ahead, behind the tile
//!   before's K_1 and V_1 (behind its V_0 if it has one block); a consumer
//!   issues the next tile's S_0 in the turn of its last P·V (one turn fewer
//!   per tile boundary), retires the P·V, writes O over the tile's Q stage
//!   while S_0 runs, retires S_0, frees K_0, and only then (after the
//!   kernel's softmax 0, when the O stores have read the rows) frees the
//!   old Q stage. With one Q stage per consumer that deadlocks (a control).
//!
//! `wgmma` is asynchronous: an MMA reads its shared-memory operands after
//! its issue, until a `wait_group` retires it. The model performs the reads
//! of an MMA's operands at its *retire* point, and checks their values
//! (the tile's block `j`'s K and V, the consumer's Q rows). Issuing inside
//! the turn touches one "tensor core" cell that counts issues in the order
//! the ordered barrier must impose (consumer 0, 1, 0, 1, …).
//!
//! A read of a stage the producer refills concurrently, or two consumers
//! issuing at once, is a loom causality violation; a wrong value or order
//! fails an assertion; a hang ends in loom's branch limit or deadlock.
//!
//! # Sizes (what CI's time allows)
//!
//! The correct protocol is checked in three runs (measured 2026-11-24 on
//! this 2-core machine, `cargo test --release` with `--cfg loom`, the
//! three in parallel with the controls: 97–113 s wall for the file):
//!
//! * persistent, two work tiles of one K/V block each, preemption bound 0,
//!   with `QS` = 2 (30,387 executions, 6–15 s) and `QS` = 3 (158,979
//!   executions, 30–77 s): the Q ring wraps in both (2 stages: tile 1
//!   refills stages 0 and 1; 3 stages: tile 1's warpgroup-1 rows refill
//!   stage 0 while warpgroup 0 may still hold stage 2), so the producer's
//!   empty wait and the consumers' full waits run at the flipped parity,
//!   and the ordered barrier passes four turns per consumer across the
//!   tile boundary. Bound 0 still switches threads at every blocking wait
//!   and explores the weak-memory values of every load; only preemptions
//!   of a runnable thread are bounded away.
//! * one tile of one K/V block at preemption bound 1 (as the other models),
//!   `QS` = 3: 330,090 executions, 97–113 s.
//!
//! Two tiles at bound 1, or one tile of two blocks at bound 1, did not
//! finish in 2 minutes. `BATON_LOOM_TILES=2,1 BATON_LOOM_BOUND=1` runs
//! larger models by hand (every test of the file takes them).
//!
//! The controls at the end must be rejected (each with 3 Q stages, at
//! bound 1): a consumer that releases its K stage before the S that reads
//! it retired (one tile of three blocks: the producer refills stage 0 with
//! block 2), a consumer that skips its wait for the turn, and consumers
//! that free their Q stage before writing O over it (two tiles: tile 1's
//! warpgroup-1 rows refill stage 0). Each role runs on a spawned loom
//! thread with a 1 MiB stack (`ROLE_STACK_WORDS`), so that a caught
//! violation's panic report fits; every control is rejected within the
//! first executions (~1–3 ms).
#![cfg(loom)]

use baton::arch::cpu::tma::{self, TensorMap};
use baton::ordered_barrier::{OrderedBarrier, OrderedBarriers};
use baton::smem::SharedRef;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::{InputProducer, InputTilePipeline, InputTileStorage, Tile, TilePayload};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// `BATON_LOOM_TILES` (e.g. `2,1`) replaces a model's work tiles (K/V
/// blocks per tile) and `BATON_LOOM_BOUND` its preemption bound, for
/// measuring larger models by hand.
fn tiles_or_env(tiles: &[u32]) -> Vec<u32> {
    std::env::var("BATON_LOOM_TILES")
        .map(|v| v.split(',').map(|b| b.parse().unwrap()).collect())
        .unwrap_or_else(|_| tiles.to_vec())
}
/// K and V stages (the kernel uses 2 or 3; the model 2, and 1 in the
/// cross-tile model, whose producer runs a tile ahead: with 1, 329,343
/// executions in 35 s; with 2, 6,724,381 executions in 699 s on this
/// 2-core machine, 2026-11-27, run by hand, too long for CI).
const STAGES: usize = 2;
/// Stack of each role's loom thread, in words (the `generator` crate's
/// unit; loom's default is 4096 words, 32 KiB). A caught violation panics
/// inside a role and the panic hook symbolizes a backtrace on that stack
/// (under `RUST_BACKTRACE=1`), which overflows 32 KiB; the process then
/// hangs instead of reporting. 1 MiB holds it.
const ROLE_STACK_WORDS: usize = 1 << 17;

/// One K or V block: one 16-byte row.
struct KvPayload;
impl TilePayload for KvPayload {
    type Stage = Tile<u8, 1, 16>;
    const TMA_BYTES: u32 = Tile::<u8, 1, 16>::BYTES;
}

/// One warpgroup's Q rows (a stage of the `QS`-stage Q ring).
struct QPayload;
impl TilePayload for QPayload {
    type Stage = Tile<u8, 1, 16>;
    const TMA_BYTES: u32 = Tile::<u8, 1, 16>::BYTES;
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

struct Smem<const QS: usize, const G: usize, const KS: usize> {
    q: InputTileStorage<QPayload, QS>,
    k: InputTileStorage<KvPayload, KS>,
    v: InputTileStorage<KvPayload, KS>,
    order: OrderedBarriers<1, G>,
    /// The tensor cores: issues so far (the ordered barrier serializes them).
    tensor_core: Slot,
}

/// Source row of tile `t`'s K/V block `j` (the tiles' blocks back to back).
fn kv_row(tiles: &[u32], t: usize, j: u32) -> u32 {
    tiles[..t].iter().sum::<u32>() + j
}
/// Byte of K row `r`, V row `r`, Q rows of tile `t` warpgroup `g` (of 3
/// at most), O.
fn k_byte(r: u32) -> u8 {
    0x10 + r as u8
}
fn v_byte(r: u32) -> u8 {
    0x40 + r as u8
}
fn q_byte(t: usize, g: u32) -> u8 {
    0x70 + 3 * t as u8 + g as u8
}
fn o_byte(t: usize, g: u32) -> u8 {
    0xC0 + 3 * t as u8 + g as u8
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
    /// The last consumer does not wait for its first turn.
    SkipTurn,
    /// Each consumer frees its Q stage before writing its O over it.
    ReleaseQBeforeO,
}

/// Consumer warpgroup `g` of `G` with a `QS`-stage Q ring; `cross`: the
/// kernels' `CROSS_TILE` form (the next tile's S_0 issued in the turn of
/// this tile's last P·V, this tile's O written while it runs).
fn consumer<const QS: usize, const G: usize, const KS: usize>(
    smem: &Smem<QS, G, KS>,
    g: u32,
    fault: Fault,
    cross: bool,
    tiles: &[u32],
) {
    let q = InputTilePipeline::<QPayload, QS>::new(SharedRef::from_ref(&smem.q), c"attn_q");
    let kp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.k), c"attn_k");
    let vp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.v), c"attn_v");
    let mut order = OrderedBarrier::<1, G>::new(SharedRef::from_ref(&smem.order), g, c"order");
    let mut turns = 0u64;
    // Inside the turn: the issue is the `turns`-th of this consumer, so the
    // (G·turns + g)-th on the tensor cores.
    let mut issue = |order: &mut OrderedBarrier<'_, 1, G>| {
        if !(fault == Fault::SkipTurn && g == G as u32 - 1 && turns == 0) {
            order.wait();
        }
        let n = smem.tensor_core.read();
        assert_eq!(
            n,
            G as u64 * turns + g as u64,
            "consumer {g}: issued out of turn"
        );
        smem.tensor_core.write(n + 1);
        turns += 1;
        order.arrive();
    };
    let read = |t: SharedRef<'_, Tile<u8, 1, 16>>| {
        // SAFETY: the stages are held (acquired, not yet released) in the
        // protocol; a fault's early release is what loom must catch.
        unsafe { t.get().read(Swizzle::None, 0, 3) }
    };
    // The operand reads of a retiring S_j of tile `t` (its Q rows, the K
    // stage) and P·V_j (the V stage).
    let retire_s = |q_rows, t: usize, k, j: u32| {
        assert_eq!(
            (read(q_rows), read(k)),
            (q_byte(t, g), k_byte(kv_row(tiles, t, j))),
            "consumer {g}: tile {t} S_{j} read the wrong Q or K"
        );
    };
    let retire_pv = |v, t: usize, j: u32| {
        assert_eq!(
            read(v),
            v_byte(kv_row(tiles, t, j)),
            "consumer {g}: tile {t} P·V_{j} read the wrong V"
        );
    };

    let mut qc = q.consumer();
    qc.skip(g);
    let mut kc = kp.consumer();
    let mut vc = vp.consumer();
    if tiles.is_empty() {
        return;
    }
    // Tile `t`'s head on its own: S_0 in its own turn, retired, K_0 freed.
    macro_rules! head {
        ($q_rows:expr, $t:expr) => {{
            let k = kc.acquire_stage();
            issue(&mut order); // S_0
            let kt = k.tiles();
            if fault == Fault::ReleaseKBeforeRetire {
                k.defer_release().release_if(true);
                retire_s($q_rows, $t, kt, 0);
            } else {
                retire_s($q_rows, $t, kt, 0); // wait_group<0>
                k.defer_release().release_if(true);
            }
        }};
    }
    let mut q_stage = qc.acquire_stage();
    head!(q_stage.tiles(), 0);
    for (t, &blocks) in tiles.iter().enumerate() {
        let q_rows = q_stage.tiles();
        for j in 1..blocks {
            let k = kc.acquire_stage();
            let v = vc.acquire_stage(); // V_{j-1}
            issue(&mut order); // S_j, P·V_{j-1}
            let (kt, vt) = (k.tiles(), v.tiles());
            if fault == Fault::ReleaseKBeforeRetire {
                k.defer_release().release_if(true);
                retire_s(q_rows, t, kt, j);
            } else {
                retire_s(q_rows, t, kt, j); // wait_group<1>
                k.defer_release().release_if(true);
            }
            retire_pv(vt, t, j - 1); // wait_group<0>
            v.defer_release().release_if(true);
        }
        let more = t + 1 < tiles.len();
        let v = vc.acquire_stage();
        // This tile's Q rows stay held (O goes out through them) while the
        // ring steps on to the next tile's.
        let q_done = q_stage.defer_release();
        qc.skip(G as u32 - 1);
        // Epilogue: O over this consumer's Q rows (its last read retired;
        // the TMA store's read is synchronous here), then the stage is free
        // for a later tile's rows.
        let epilogue = |q_done: baton::pipeline::PendingRelease<'_>| {
            if fault == Fault::ReleaseQBeforeO {
                q_done.release_if(true);
                // SAFETY: none: the stage was freed (the fault loom must catch).
                unsafe { q_rows.get().write(Swizzle::None, 0, 3, o_byte(t, g)) };
            } else {
                // SAFETY: this consumer holds its Q stage.
                unsafe { q_rows.get().write(Swizzle::None, 0, 3, o_byte(t, g)) };
                q_done.release_if(true);
            }
        };
        if cross && more {
            // The next tile's Q rows and K_0; one turn { the last P·V,
            // S_0' }; P·V retires first (wait_group<1>), O is written
            // while S_0' runs, S_0' retires (wait_group<0>) and K_0' is
            // freed; the old Q stage goes back after softmax 0'.
            q_stage = qc.acquire_stage();
            let k = kc.acquire_stage();
            issue(&mut order);
            retire_pv(v.tiles(), t, blocks - 1);
            v.defer_release().release_if(true);
            // SAFETY: this consumer holds its Q stage (`q_done`).
            unsafe { q_rows.get().write(Swizzle::None, 0, 3, o_byte(t, g)) };
            let kt = k.tiles();
            retire_s(q_stage.tiles(), t + 1, kt, 0);
            k.defer_release().release_if(true);
            q_done.release_if(true);
            continue;
        }
        issue(&mut order); // the last P·V
        retire_pv(v.tiles(), t, blocks - 1);
        v.defer_release().release_if(true);
        epilogue(q_done);
        if !more {
            break;
        }
        q_stage = qc.acquire_stage();
        head!(q_stage.tiles(), t + 1);
    }
}

/// The producer's load of `row` of `map` into the next stage of `prod`.
fn load<P: TilePayload<Stage = Tile<u8, 1, 16>>, const N: usize>(
    prod: &mut InputProducer<'_, P, N>,
    map: &TensorMap,
    row: u32,
) {
    let stage = prod.acquire_stage();
    stage.arrive_expect_tx();
    // SAFETY: the producer holds the stage; one box completes its bytes.
    unsafe { tma::load_2d(map, stage.tiles(), stage.barrier(), 0, row as i32) };
    stage.release();
}

/// The producer warp, per tile: K_0, the `G` warpgroups' Q rows (the next
/// `G` stages of the `QS`-stage ring), V_0, then K_j, V_j; then it drains
/// the three rings. `cross` (the kernels' `CROSS_TILE`): the first tile's
/// Q rows before its K_0, and every later tile's Q rows a tile ahead, behind
/// the tile before's V_1 (its V_0 if it has one block).
fn producer<const QS: usize, const G: usize, const KS: usize>(
    smem: &Smem<QS, G, KS>,
    cross: bool,
    tiles: &[u32],
    k_src: &[u8],
    v_src: &[u8],
    q_src: &[u8],
) {
    let kv_rows: u32 = tiles.iter().sum();
    let (k_map, v_map, q_map) = (
        map(k_src, kv_rows as u64, 1),
        map(v_src, kv_rows as u64, 1),
        map(q_src, 3 * tiles.len() as u64, 1),
    );
    let q = InputTilePipeline::<QPayload, QS>::new(SharedRef::from_ref(&smem.q), c"attn_q");
    let kp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.k), c"attn_k");
    let vp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.v), c"attn_v");
    let mut qprod = q.producer();
    let mut kprod = kp.producer();
    let mut vprod = vp.producer();
    let load_q = |qprod: &mut InputProducer<'_, QPayload, QS>, t: usize| {
        for g in 0..G as u32 {
            load(qprod, &q_map, 3 * t as u32 + g);
        }
    };
    if cross && !tiles.is_empty() {
        load_q(&mut qprod, 0);
    }
    for (t, &blocks) in tiles.iter().enumerate() {
        load(&mut kprod, &k_map, kv_row(tiles, t, 0));
        if !cross {
            load_q(&mut qprod, t);
        }
        load(&mut vprod, &v_map, kv_row(tiles, t, 0));
        let next_q = cross && t + 1 < tiles.len();
        if next_q && blocks == 1 {
            load_q(&mut qprod, t + 1);
        }
        for j in 1..blocks {
            load(&mut kprod, &k_map, kv_row(tiles, t, j));
            load(&mut vprod, &v_map, kv_row(tiles, t, j));
            if next_q && j == 1 {
                load_q(&mut qprod, t + 1);
            }
        }
    }
    kprod.drain();
    vprod.drain();
    qprod.drain();
}

/// Explores the model with a `QS`-stage Q ring and `G` consumers.
fn explore<const QS: usize, const G: usize, const KS: usize>(
    preemption_bound: usize,
    fault: Fault,
    cross: bool,
    tiles: &[u32],
) -> usize {
    let tiles = tiles_or_env(tiles);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound =
        Some(std::env::var("BATON_LOOM_BOUND").map_or(preemption_bound, |b| b.parse().unwrap()));
    let iterations = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        let tiles = tiles.clone();
        let kv_rows: u32 = tiles.iter().sum();
        let k_src: Vec<u8> = (0..kv_rows).flat_map(|r| [k_byte(r); 16]).collect();
        let v_src: Vec<u8> = (0..kv_rows).flat_map(|r| [v_byte(r); 16]).collect();
        let q_src: Vec<u8> = (0..tiles.len())
            .flat_map(|t| (0..3).flat_map(move |g| [q_byte(t, g); 16]))
            .collect();
        let smem = Arc::new(Smem {
            q: InputTileStorage::new(),
            k: InputTileStorage::new(),
            v: InputTileStorage::new(),
            order: OrderedBarriers::new(),
            tensor_core: Slot(UnsafeCell::new(0)),
        });
        // Setup (one thread; the spawns order it before the other roles).
        let q = InputTilePipeline::<QPayload, QS>::new(SharedRef::from_ref(&smem.q), c"attn_q");
        let kp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.k), c"attn_k");
        let vp = InputTilePipeline::<KvPayload, KS>::new(SharedRef::from_ref(&smem.v), c"attn_v");
        OrderedBarrier::<1, G>::new(SharedRef::from_ref(&smem.order), 0, c"order").init(1);
        kp.init(G as u32);
        vp.init(G as u32);
        q.init(1);

        // Every role runs on a spawned loom thread with a large stack: a
        // caught violation panics inside a role, and the panic hook's
        // backtrace (symbolized on the role's coroutine stack) overflows
        // loom's default 32 KiB stack; the model's main thread only spawns
        // and joins.
        let role = |f: Box<dyn FnOnce() + Send>| {
            loom::thread::Builder::new()
                .stack_size(ROLE_STACK_WORDS)
                .spawn(f)
                .unwrap()
        };
        let mut roles: Vec<_> = (0..G as u32)
            .map(|g| {
                let (smem, tiles) = (smem.clone(), tiles.clone());
                role(Box::new(move || consumer(&smem, g, fault, cross, &tiles)))
            })
            .collect();
        let (producer_smem, producer_tiles) = (smem.clone(), tiles.clone());
        roles.push(role(Box::new(move || {
            producer(
                &producer_smem,
                cross,
                &producer_tiles,
                &k_src,
                &v_src,
                &q_src,
            )
        })));
        for r in roles {
            r.join().unwrap();
        }
        // blocks + 1 turns per tile (S_0, S_j with P·V_{j−1}, the last
        // P·V); across tiles (`cross`) one turn fewer per tile boundary.
        let turns: u32 = tiles.iter().map(|b| b + 1).sum::<u32>()
            - if cross { tiles.len() as u32 - 1 } else { 0 };
        assert_eq!(
            smem.tensor_core.read(),
            G as u64 * turns as u64,
            "an issue turn was lost"
        );
        // Each consumer wrote its O rows of the last tile before releasing.
        for g in 0..G {
            // SAFETY: every thread joined.
            let stage = (G * (tiles.len() - 1) + g) % QS;
            let o = unsafe { smem.q.stages[stage].read(Swizzle::None, 0, 3) };
            assert_eq!(
                o,
                o_byte(tiles.len() - 1, g as u32),
                "consumer {g}'s O rows"
            );
        }
    });
    iterations.load(Relaxed)
}

/// Runs the correct model with a `QS`-stage Q ring and `G` consumers over
/// `tiles` at preemption bound `bound`; prints executions and time.
fn correct<const QS: usize, const G: usize, const KS: usize>(
    bound: usize,
    cross: bool,
    tiles: &[u32],
) {
    let t = std::time::Instant::now();
    let n = explore::<QS, G, KS>(bound, Fault::None, cross, tiles);
    println!(
        "attention model, {G} consumers, {QS} Q stages, {KS} K/V stages, cross-tile {cross}, tiles {tiles:?}, bound {bound}: {n} executions in {:.1?}",
        t.elapsed()
    );
    assert!(n > 10, "loom explored only {n} executions");
}

/// The kernel's configuration at preemption bound 1: one work tile of one
/// K/V block (two turns per consumer: S_0, then the last P·V), 3 Q stages
/// (one tile uses stages 0 and 1 only, as with 2). ~330k executions.
#[test]
fn attention_one_tile_bound_1() {
    correct::<3, 2, STAGES>(1, false, &[1]);
}

/// Persistent, the d = 64 and d = 256 kernels' 2-stage Q ring: two work
/// tiles of one K/V block, so that both Q stages are refilled (the phase
/// flip), at preemption bound 0. ~30k executions.
#[test]
fn attention_q2_two_tiles() {
    correct::<2, 2, STAGES>(0, false, &[1, 1]);
}

/// Persistent, the d = 128 kernel's 3-stage Q ring: two work tiles of one
/// K/V block (tile 1's warpgroup-1 rows wrap to stage 0), at preemption
/// bound 0. ~160k executions.
#[test]
fn attention_q3_two_tiles() {
    correct::<3, 2, STAGES>(0, false, &[1, 1]);
}

/// Persistent, the `CROSS_TILE` kernel's form (causal d = 64: 4 Q stages,
/// two per warpgroup, the next tile's rows loaded a tile ahead): two work
/// tiles of one K/V block, each consumer holding tile 0's Q stage (its O)
/// while tile 1's S_0 reads the next, at preemption bound 0, with one K and
/// one V stage (`STAGES`' note).
#[test]
fn attention_cross_tile_q4_two_tiles() {
    correct::<4, 2, 1>(0, true, &[1, 1]);
}

/// Wrong: the cross-tile form with one Q stage per warpgroup (`fwd::run`'s
/// const assert forbids it): a consumer holding tile 0's stage waits for
/// tile 1's rows in that same stage, which the producer can refill only
/// once the consumer frees it: loom finds the deadlock.
#[test]
fn cross_tile_with_one_q_stage_per_warpgroup_deadlocks() {
    let t = std::time::Instant::now();
    let payload = match catch_unwind(AssertUnwindSafe(|| {
        explore::<2, 2, STAGES>(0, Fault::None, true, &[1, 1])
    })) {
        Ok(n) => panic!("loom accepted cross-tile with 2 Q stages ({n} executions explored)"),
        Err(p) => p,
    };
    println!("cross-tile with 2 Q stages rejected in {:.1?}", t.elapsed());
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.contains("deadlock") || msg.contains("branches"),
        "loom failed for another reason: {msg}"
    );
}

fn must_fail<const G: usize>(fault: Fault, tiles: &[u32]) -> String {
    let t = std::time::Instant::now();
    let payload = match catch_unwind(AssertUnwindSafe(|| {
        explore::<3, G, STAGES>(1, fault, false, tiles)
    })) {
        Ok(n) => panic!("loom accepted {fault:?} ({n} executions explored)"),
        Err(p) => p,
    };
    println!("{fault:?} rejected in {:.1?}", t.elapsed());
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Wrong: K released before the S reading it retired. One tile of three
/// blocks, so that the producer refills a K stage (block 2 into stage 0)
/// while a consumer's S_0 may still read it. 3 Q stages (the d = 128
/// kernel's; the fault is in the K ring).
#[test]
fn releasing_k_before_its_wgmma_retired_is_caught() {
    let msg = must_fail::<2>(Fault::ReleaseKBeforeRetire, &[3]);
    assert!(
        msg.contains("Causality violation") || msg.contains("read the wrong"),
        "loom failed for another reason: {msg}"
    );
}

/// What loom reports when a consumer takes the tensor cores out of turn: a
/// causality violation on the wgmma model, the turn check, a diverged
/// execution or the deadlock the skipped turn leaves behind.
fn assert_out_of_turn(msg: &str) {
    assert!(
        msg.contains("Causality violation")
            || msg.contains("out of turn")
            || msg.contains("branches")
            || msg.contains("deadlock"),
        "loom failed for another reason: {msg}"
    );
}

/// Wrong: consumer 1 issues its first wgmmas without waiting for its turn,
/// overlapping consumer 0's. 3 Q stages.
#[test]
fn skipping_the_turn_is_caught() {
    let msg = must_fail::<2>(Fault::SkipTurn, &[1]);
    assert_out_of_turn(&msg);
}

/// Wrong: a consumer frees its Q stage before writing its O rows over it.
/// Two tiles with 3 Q stages: tile 1's warpgroup-1 rows refill stage 0
/// while consumer 0 may still write tile 0's O there.
#[test]
fn releasing_q_before_writing_o_is_caught() {
    let msg = must_fail::<2>(Fault::ReleaseQBeforeO, &[1, 1]);
    assert!(
        msg.contains("Causality violation") || msg.contains("O rows"),
        "loom failed for another reason: {msg}"
    );
}

/// The three-warpgroup d = 64 kernel (`D64_W3`): three consumers in turn on
/// `OrderedBarrier<1, 3>` (0, 1, 2, 0, 1, 2: two turns each), a 3-stage Q
/// ring (one stage per warpgroup, each taking every third), K/V consumer
/// count 3; one work tile of one K/V block at preemption bound 0: 122,586
/// executions, 42 s (Session 11, this 2-core machine). Two tiles (the Q
/// ring refilled at the flipped parity) did not finish in 10 minutes:
/// `BATON_LOOM_TILES=1,1` runs it by hand.
#[test]
fn attention_three_consumers_one_tile() {
    correct::<3, 3, STAGES>(0, false, &[1]);
}

/// Wrong, with three consumers: the last one issues its first wgmmas
/// without waiting for its turn (after consumer 1's), overlapping
/// consumer 0's or 1's.
#[test]
fn skipping_the_turn_is_caught_with_three_consumers() {
    let msg = must_fail::<3>(Fault::SkipTurn, &[1]);
    assert_out_of_turn(&msg);
}
