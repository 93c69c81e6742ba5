//! Exhaustive model check (loom, `tools/test-loom.sh`; see
//! `loom_pipeline.rs` for why loom and how its bounds are chosen) of the
//! distributed split-K fixup (`baton::protocol::stream_k`, module docs):
//! the `splits` workers of one unit each write their whole partial to
//! their slot and publish their flag (release), then each worker with a
//! non-empty [`split_share`] waits (acquire) for the other workers' flags
//! and sums its share of the unit's partials in worker order.
//!
//! One loom thread per worker (worker 0 is the model's main thread); a
//! partial is one `loom::cell::UnsafeCell<f32>` per sub-tile, so a read of
//! a slot that is not ordered after its worker's writes is a loom
//! *causality violation*. Every output sub-tile must be written exactly
//! once, with the bits of the sequential worker-order sum. The flags start
//! at the previous launch's epoch (a stale flag must not pass a wait).
//! A broken variant (a worker that reads without waiting) must fail.
#![cfg(loom)]

use baton::protocol::stream_k::{FixupFlags, split_share};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::AtomicU32;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const MAX_SPLITS: usize = 3;
const MAX_SUBTILES: usize = 4;
const EPOCH: u32 = 2;

struct Workspace {
    flags: [AtomicU32; MAX_SPLITS],
    slots: [[UnsafeCell<f32>; MAX_SUBTILES]; MAX_SPLITS],
    out: [UnsafeCell<Option<f32>>; MAX_SUBTILES],
}

/// Worker `w`'s partial of sub-tile `j`: values whose sum depends on the
/// order (so a reordered sum shows in the bits).
fn partial(w: usize, j: usize) -> f32 {
    [1.0e8f32, 3.0, -1.0e8, 0.125][w % 4] * (1.0 + j as f32 / 3.0)
}

fn worker(ws: &Workspace, p: u32, splits: u32, subtiles: u32, wg: u32, wait: bool) {
    let own: Vec<f32> = (0..subtiles as usize)
        .map(|j| partial(p as usize, j))
        .collect();
    // Publish: the whole partial, then the flag (release).
    for (j, &v) in own.iter().enumerate() {
        ws.slots[p as usize][j].with_mut(|s| unsafe { *s = v });
    }
    let flags = FixupFlags::new(&ws.flags[..splits as usize]);
    flags.publish(p, EPOCH);
    let (b, e) = split_share(p, splits, subtiles, wg);
    if b == e {
        return;
    }
    if wait {
        flags.wait_unit(0, splits, p, EPOCH);
    }
    for j in b as usize..e as usize {
        let read = |c: usize| ws.slots[c][j].with(|s| unsafe { *s });
        // Worker 0's partial from its registers, the others' from their
        // slots (this worker's own read back).
        let mut sum = if p == 0 { own[j] } else { read(0) };
        for c in 1..splits as usize {
            sum += read(c);
        }
        ws.out[j].with_mut(|o| {
            // SAFETY: loom checks the exclusivity.
            let o = unsafe { &mut *o };
            assert!(o.is_none(), "sub-tile {j} written twice");
            *o = Some(sum);
        });
    }
}

fn model(splits: u32, subtiles: u32, wg: u32, wait: bool, preemption_bound: usize) -> usize {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    let iterations = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = iterations.clone();
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        let ws = Arc::new(Workspace {
            // The previous launch's epoch: stale flags.
            flags: std::array::from_fn(|_| AtomicU32::new(EPOCH - 1)),
            slots: std::array::from_fn(|_| std::array::from_fn(|_| UnsafeCell::new(f32::NAN))),
            out: std::array::from_fn(|_| UnsafeCell::new(None)),
        });
        let joins: Vec<_> = (1..splits)
            .map(|p| {
                let ws = ws.clone();
                loom::thread::spawn(move || worker(&ws, p, splits, subtiles, wg, wait))
            })
            .collect();
        worker(&ws, 0, splits, subtiles, wg, wait);
        for j in joins {
            j.join().unwrap();
        }
        for j in 0..subtiles as usize {
            let mut want = partial(0, j);
            for c in 1..splits as usize {
                want += partial(c, j);
            }
            let got = ws.out[j].with(|o| unsafe { *o });
            assert_eq!(
                got.map(f32::to_bits),
                Some(want.to_bits()),
                "sub-tile {j} of {subtiles}, {splits} workers"
            );
        }
    });
    iterations.load(Relaxed)
}

/// Two workers, two sub-tiles: one each.
#[test]
fn two_workers_one_subtile_each() {
    let n = model(2, 2, 0, true, 3);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Two workers, three sub-tiles (shares of 1 and 2), warpgroup 1's
/// rotation.
#[test]
fn two_workers_uneven_shares() {
    let n = model(2, 3, 1, true, 3);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Three workers, two sub-tiles: one worker has an empty share (publishes
/// and leaves without waiting).
#[test]
fn three_workers_one_idle() {
    let n = model(3, 2, 0, true, 2);
    assert!(n > 5, "loom explored only {n} executions");
}

/// Three workers, three sub-tiles: every worker waits for two flags.
#[test]
fn three_workers_all_busy() {
    let n = model(3, 3, 1, true, 1);
    assert!(n > 5, "loom explored only {n} executions");
}

/// The model catches a worker that reads the others' slots without
/// waiting for their flags.
#[test]
#[should_panic]
fn reading_without_the_wait_fails() {
    model(2, 2, 0, false, 3);
}
