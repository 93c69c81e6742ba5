//! `baton demo`: a warp-specialized pipeline program on the CPU backend.
//!
//! One producer warp fills a ring of `STAGES` slots with sequence-numbered
//! payloads; `consumers` consumer warps each read every payload and check it.
//! The very same `ProducerConsumerPipeline` code runs on the GPU; here each
//! warp is a host thread and each `mbarrier` an atomic word. The report says
//! how many handoffs went through, how often each side found the ring
//! full/empty (had to block), and whether every payload arrived intact and
//! in order.

use baton::arch::cpu::{CpuBlock, WARP_SIZE};
use baton::pipeline::{PipelineBarriers, ProducerConsumerPipeline};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Stages of the demo ring.
pub const DEMO_STAGES: usize = 4;

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoReport {
    /// Payloads produced.
    pub items: u64,
    /// Consumer warps (each reads every payload).
    pub consumer_warps: u32,
    /// Handoffs completed (items × consumer warps).
    pub handoffs: u64,
    /// Times the producer found its next stage still in use.
    pub producer_blocked: u64,
    /// Times a consumer found its next stage not yet filled (all consumers).
    pub consumer_blocked: u64,
    /// Payloads that arrived wrong, out of order or not at all.
    pub errors: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

struct DemoSmem {
    bars: PipelineBarriers<DEMO_STAGES>,
    slots: [AtomicU64; DEMO_STAGES],
    producer_blocked: AtomicU64,
    consumer_blocked: AtomicU64,
    errors: AtomicU64,
    received: AtomicU64,
}

fn payload(seq: u64) -> u64 {
    seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xB47
}

/// Runs the demo: `items` payloads, `consumer_warps` consumer warps.
///
/// ```
/// let r = baton_cli::demo::run(10_000, 2);
/// assert_eq!(r.errors, 0);
/// assert_eq!(r.handoffs, 20_000);
/// ```
pub fn run(items: u64, consumer_warps: u32) -> DemoReport {
    assert!(consumer_warps >= 1, "at least one consumer warp");
    let block = CpuBlock::new(DemoSmem {
        bars: PipelineBarriers::new(),
        slots: Default::default(),
        producer_blocked: AtomicU64::new(0),
        consumer_blocked: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        received: AtomicU64::new(0),
    });
    let start = Instant::now();
    block.run_warps(1 + consumer_warps, |warp, smem| {
        let s = smem.get();
        let mut pipe =
            ProducerConsumerPipeline::new(baton::smem_field!(smem, DemoSmem, bars), c"demo");
        if warp.index() == 0 {
            // A warp arrives 32 times: one per lane.
            pipe.init_barriers(WARP_SIZE, WARP_SIZE * consumer_warps);
        }
        warp.sync_block();
        if warp.index() == 0 {
            for seq in 0..items {
                let ready = pipe.try_wait_consumer();
                if !ready {
                    s.producer_blocked.fetch_add(1, Relaxed);
                }
                pipe.wait_consumer_if_needed(ready);
                let stage = pipe.acquire_producer();
                s.slots[stage.index() as usize].store(payload(seq), Relaxed);
                stage.release();
            }
            pipe.drain();
        } else {
            let mut errors = 0;
            for seq in 0..items {
                if !pipe.try_wait_producer() {
                    s.consumer_blocked.fetch_add(1, Relaxed);
                }
                let stage = pipe.consume();
                errors += u64::from(s.slots[stage.index() as usize].load(Relaxed) != payload(seq));
            }
            s.errors.fetch_add(errors, Relaxed);
            s.received.fetch_add(items, Relaxed);
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    let s = block.smem().get();
    let handoffs = s.received.load(Relaxed);
    DemoReport {
        items,
        consumer_warps,
        handoffs,
        producer_blocked: s.producer_blocked.load(Relaxed),
        consumer_blocked: s.consumer_blocked.load(Relaxed),
        errors: s.errors.load(Relaxed) + (items * consumer_warps as u64 - handoffs),
        seconds,
    }
}

impl std::fmt::Display for DemoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "baton demo — CPU backend (threads stand for warps, atomics for mbarriers)"
        )?;
        writeln!(
            f,
            "  pipeline          ProducerConsumerPipeline<{DEMO_STAGES}>, 1 producer warp, {} consumer warp(s)",
            self.consumer_warps
        )?;
        writeln!(f, "  payloads          {}", self.items)?;
        writeln!(f, "  handoffs          {}", self.handoffs)?;
        writeln!(
            f,
            "  handoffs/s        {:.0}",
            self.handoffs as f64 / self.seconds.max(1e-9)
        )?;
        writeln!(
            f,
            "  producer blocked  {} ({:.1}% of stages: ring full)",
            self.producer_blocked,
            pct(self.producer_blocked, self.items)
        )?;
        writeln!(
            f,
            "  consumer blocked  {} ({:.1}% of reads: ring empty)",
            self.consumer_blocked,
            pct(
                self.consumer_blocked,
                self.items * self.consumer_warps as u64
            )
        )?;
        writeln!(f, "  wall time         {:.3} s", self.seconds)?;
        write!(
            f,
            "  verdict           {}",
            if self.errors == 0 {
                "PASS: every payload intact and in order".to_string()
            } else {
                format!("FAIL: {} bad payloads", self.errors)
            }
        )
    }
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}
