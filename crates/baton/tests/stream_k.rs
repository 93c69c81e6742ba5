//! The stream-K schedule and fixup protocol together, on threads standing
//! for the workers of a persistent grid: every worker walks its segments
//! ([`StreamKSchedule::segments`]), "computes" a segment as the sum of a
//! per-(unit, K block) value, and contributors/finalizers hand partials
//! through a workspace slot and [`FixupFlags`] exactly as a kernel does.
//! Each unit's output must be written once, by its finalizer, and equal
//! the sum over all its K blocks — over several launches (epochs) reusing
//! the same workspace without clearing it.

use baton::protocol::stream_k::FixupFlags;
use baton::protocol::tile_scheduler::StreamKSchedule;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

fn value(unit: u32, kb: u32) -> u64 {
    // Distinct per (unit, kb) so a missing or doubled K block shows.
    (unit as u64 + 1) * 1_000_003 + (kb as u64 + 1) * (kb as u64 + 7)
}

fn run(units: u32, k_blocks: u32, workers: u32, min_segment: u32, epochs: u32) {
    let s = StreamKSchedule::new(units, k_blocks, workers, min_segment);
    let flag_cells: Vec<AtomicU32> = (0..workers).map(|_| AtomicU32::new(0)).collect();
    // One slot per worker: written before its flag's release store, read
    // after the finalizer's acquire load (Relaxed here on purpose: the
    // flag must be what orders them).
    let slots: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    for epoch in 1..=epochs {
        let out: Vec<AtomicU64> = (0..units).map(|_| AtomicU64::new(u64::MAX)).collect();
        let flags = FixupFlags::new(&flag_cells);
        std::thread::scope(|scope| {
            for w in 0..workers {
                let (out, slots, s) = (&out, &slots, &s);
                scope.spawn(move || {
                    for g in s.segments(w) {
                        let mut acc: u64 = (g.k_begin..g.k_end).map(|kb| value(g.unit, kb)).sum();
                        if g.is_contributor() {
                            slots[w as usize].store(acc, Ordering::Relaxed);
                            flags.publish(w, epoch);
                            continue;
                        }
                        let (first, last) = s.contributors(g.unit);
                        for c in first..=last {
                            flags.wait(c, epoch);
                            acc += slots[c as usize].load(Ordering::Relaxed);
                        }
                        let prev = out[g.unit as usize].swap(acc, Ordering::Relaxed);
                        assert_eq!(prev, u64::MAX, "unit {} written twice", g.unit);
                    }
                });
            }
        });
        for u in 0..units {
            let expected: u64 = (0..k_blocks).map(|kb| value(u, kb)).sum();
            assert_eq!(
                out[u as usize].load(Ordering::Relaxed),
                expected,
                "unit {u} of {units}×{k_blocks} on {workers} workers, epoch {epoch}"
            );
        }
    }
}

#[test]
fn fixup_sums_every_unit_once_across_epochs() {
    for (units, k_blocks, workers, min_segment) in [
        (10, 8, 4, 1),
        (1024, 128, 66, 8),
        (7, 3, 5, 1),
        (3, 64, 8, 4),
        (4096, 64, 132, 8),
        (13, 1, 6, 1),
    ] {
        run(units, k_blocks, workers, min_segment, 3);
    }
}

/// The distributed split-K fixup (`baton::protocol::stream_k`, module
/// docs) on threads: every worker of a split unit publishes its whole
/// partial (fp32, `subtiles` values standing for sub-tiles), then reduces
/// its [`split_share`] of each warpgroup's sub-tiles in worker order. The
/// output must be written once per sub-tile and have the bits of the
/// finalizer's sum (worker 0's partial plus the others in order), across
/// epochs reusing the workspace — the determinism the kernels rely on.
fn run_split(units: u32, k_blocks: u32, splits: u32, subtiles: u32, epochs: u32) {
    use baton::protocol::stream_k::split_share;
    let workers = units * splits;
    let s = StreamKSchedule::with_extra_waves(units, k_blocks, workers, 1, 0);
    assert_eq!(s.sk_splits(), splits);
    let wgs = 2u32;
    let per_slot = (wgs * subtiles) as usize;
    let flag_cells: Vec<AtomicU32> = (0..workers).map(|_| AtomicU32::new(0)).collect();
    let slots: Vec<AtomicU32> = (0..workers as usize * per_slot)
        .map(|_| AtomicU32::new(0))
        .collect();
    // fp32 "accumulator" of (unit, K block, element): order-sensitive sums.
    let fvalue = |unit: u32, kb: u32, e: u32| -> f32 {
        let x = (value(unit, kb) % 1000) as f32 * 1.0e-3 + e as f32;
        if kb.is_multiple_of(3) { x * 1.0e6 } else { -x }
    };
    let partial = |g: &baton::protocol::tile_scheduler::Segment, e: u32| -> f32 {
        let mut acc = 0.0f32;
        for kb in g.k_begin..g.k_end {
            acc += fvalue(g.unit, kb, e);
        }
        acc
    };
    for epoch in 1..=epochs {
        let out: Vec<AtomicU32> = (0..units as usize * per_slot)
            .map(|_| AtomicU32::new(u32::MAX))
            .collect();
        let written: Vec<AtomicU32> = (0..units as usize * per_slot)
            .map(|_| AtomicU32::new(0))
            .collect();
        let flags = FixupFlags::new(&flag_cells);
        std::thread::scope(|scope| {
            for w in 0..workers {
                let (out, written, slots, s) = (&out, &written, &slots, &s);
                scope.spawn(move || {
                    for g in s.segments(w) {
                        let (first, splits) = s.split_workers(g.unit).expect("split unit");
                        let p = w - first;
                        let own: Vec<f32> = (0..per_slot as u32).map(|e| partial(&g, e)).collect();
                        for (e, v) in own.iter().enumerate() {
                            slots[w as usize * per_slot + e].store(v.to_bits(), Ordering::Relaxed);
                        }
                        flags.publish(w, epoch);
                        let mut waited = false;
                        for wg in 0..wgs {
                            let (b, e) = split_share(p, splits, subtiles, wg);
                            if b == e {
                                continue;
                            }
                            if !waited {
                                flags.wait_unit(first, splits, p, epoch);
                                waited = true;
                            }
                            for j in b..e {
                                let el = (wg * subtiles + j) as usize;
                                let read = |c: u32| {
                                    f32::from_bits(
                                        slots[(first + c) as usize * per_slot + el]
                                            .load(Ordering::Relaxed),
                                    )
                                };
                                let mut sum = if p == 0 { own[el] } else { read(0) };
                                for c in 1..splits {
                                    sum += read(c);
                                }
                                let o = g.unit as usize * per_slot + el;
                                out[o].store(sum.to_bits(), Ordering::Relaxed);
                                assert_eq!(written[o].fetch_add(1, Ordering::Relaxed), 0);
                            }
                        }
                    }
                });
            }
        });
        // The finalizer's sum: worker 0's partial, then the others in order.
        for u in 0..units {
            let (first, splits) = s.split_workers(u).unwrap();
            for el in 0..per_slot as u32 {
                let seg = |c: u32| s.segments(first + c).last().unwrap();
                let mut want = partial(&seg(0), el);
                for c in 1..splits {
                    want += partial(&seg(c), el);
                }
                let o = u as usize * per_slot + el as usize;
                assert_eq!(written[o].load(Ordering::Relaxed), 1);
                assert_eq!(
                    out[o].load(Ordering::Relaxed),
                    want.to_bits(),
                    "unit {u} element {el}, {splits} splits, epoch {epoch}"
                );
            }
        }
    }
}

#[test]
fn distributed_split_k_fixup_is_the_finalizers_sum() {
    for (units, k_blocks, splits, subtiles) in [
        (2, 512, 8, 4),
        (4, 64, 8, 8),
        (3, 10, 3, 7),
        (1, 16, 16, 2),
        (5, 7, 2, 5),
        (2, 33, 5, 6),
    ] {
        run_split(units, k_blocks, splits, subtiles, 3);
    }
}
