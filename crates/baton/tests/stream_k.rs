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
