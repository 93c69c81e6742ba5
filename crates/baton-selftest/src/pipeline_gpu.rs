//! Host side of the `pipeline` GPU tests and the zero-cost benchmark
//! (kernels in `kernels/src/pipeline.rs` and `kernels/src/zero_cost.rs`).
//!
//! Every run draws a fresh seed, poisons the output first, and checks every
//! word the kernels write.

use crate::error::{Error, Result};
use baton_reference::random::XorShift;
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::kernel_abi::pipeline::{self as abi, EpiLoadParams, HandoffParams};
use baton_runtime::kernel_abi::zero_cost::{self, HandoffBenchParams};
use baton_runtime::{Gpu, Kernels};
use std::time::Instant;

/// Threads per block of the pipeline kernels: 1 producer warp + 4 consumer warps.
pub const THREADS: u32 = abi::THREADS;
/// Consumer threads per block.
pub const CONSUMERS: u32 = abi::CONSUMER_THREADS;
/// Word written before a run; a word still equal to it was never written.
pub const POISON: u32 = 0xDEAD_BEEF;

/// The payload `kernels/src/pipeline.rs` writes (must match the kernel).
pub fn payload(seed: u32, seq: u32, lane: u32) -> u32 {
    (seq ^ seed)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(lane.wrapping_mul(0x85EB_CA6B))
}

/// Result of one sequence-numbered handoff run.
#[derive(Clone, Debug)]
pub struct HandoffRun {
    /// Kernel name.
    pub kernel: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Payloads per block.
    pub items: u32,
    /// Total payloads handed off (blocks × items).
    pub payloads: u64,
    /// Payload words that did not match (summed over consumer threads).
    pub mismatches: u64,
    /// Consumer threads whose checksum disagreed with the host's.
    pub bad_checksums: u32,
    /// Output words never written (still the poison value).
    pub unwritten: u32,
    /// Wall time of the launch, in milliseconds.
    pub ms: f64,
}

impl HandoffRun {
    /// True when every payload arrived intact and every output was written.
    pub fn passed(&self) -> bool {
        self.mismatches == 0 && self.bad_checksums == 0 && self.unwritten == 0
    }
}

/// Runs `baton_pipeline_handoff` or `baton_pipeline_explicit`: `blocks`
/// blocks pass `items` sequence-numbered payloads each.
pub fn run_handoff(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &'static str,
    blocks: u32,
    items: u32,
) -> Result<HandoffRun> {
    // Both handoff kernels share one geometry and parameter struct.
    let f = kernels.kernel(&abi::HANDOFF.renamed(kernel))?;
    let seed = XorShift::new(XorShift::seed_from_time()).next_u32();
    let words = (blocks * CONSUMERS * 2) as usize;
    let stream = gpu.stream();
    let mut out = stream.clone_htod(&vec![POISON; words])?;
    let start = Instant::now();
    {
        let (out, _out_sync) = out.device_ptr_mut(stream);
        let params = HandoffParams {
            out: out as *mut u32,
            items,
            seed,
        };
        // SAFETY: `out` holds 2·128 words per block and lives until the
        // synchronization below.
        unsafe { f.launch(stream, blocks, &params)? };
    }
    gpu.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let host = stream.clone_dtoh(&out)?;
    let expected: Vec<u32> = (0..32)
        .map(|lane| (0..items).fold(0u32, |s, seq| s.wrapping_add(payload(seed, seq, lane))))
        .collect();
    let (mut mismatches, mut bad_checksums, mut unwritten) = (0u64, 0u32, 0u32);
    for (t, pair) in host.chunks(2).enumerate() {
        let (errors, sum) = (pair[0], pair[1]);
        if errors == POISON || sum == POISON {
            unwritten += 1;
            continue;
        }
        mismatches += errors as u64;
        bad_checksums += u32::from(sum != expected[t % 32]);
    }
    Ok(HandoffRun {
        kernel,
        blocks,
        items,
        payloads: blocks as u64 * items as u64,
        mismatches,
        bad_checksums,
        unwritten,
        ms,
    })
}

/// The accumulator stand-in of `baton_epi_load_roundtrip` (must match).
pub fn epi_accum(t: u32, r: u32, c: u32) -> f32 {
    ((t * 7 + r * 3 + c) % 1024) as f32 * 0.25 - 64.0
}

/// Result of the `EpiLoadPipeline` round trip.
#[derive(Clone, Debug)]
pub struct EpiRun {
    /// C tiles (128 × 32 f32 each) passed through the pipeline.
    pub tiles: u32,
    /// Output elements that differ from `accum + beta·C` (or are NaN).
    pub wrong: usize,
    /// Output elements never written.
    pub unwritten: usize,
}

/// Runs `baton_epi_load_roundtrip` on random C tiles.
pub fn run_epi_load(
    gpu: &Gpu,
    kernels: &Kernels,
    blocks: u32,
    tiles: u32,
    beta: f32,
) -> Result<EpiRun> {
    let f = kernels.kernel(&abi::EPI_LOAD)?;
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let n = (tiles * 128 * 32) as usize;
    let c: Vec<f32> = (0..n)
        .map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0)
        .collect();
    let stream = gpu.stream();
    let c_dev = stream.clone_htod(&c)?;
    let poison = f32::from_bits(0x7FC0_DEAD);
    let mut d_dev = stream.clone_htod(&vec![poison; n])?;
    {
        let (d, _d_sync) = d_dev.device_ptr_mut(stream);
        let (c, _c_sync) = c_dev.device_ptr(stream);
        let params = EpiLoadParams {
            d: d as *mut f32,
            c: c as *const f32,
            tiles,
            beta,
        };
        // SAFETY: d and c hold tiles·128·32 f32 and live until the
        // synchronization below.
        unsafe { f.launch(stream, blocks, &params)? };
    }
    gpu.synchronize()?;
    let d = stream.clone_dtoh(&d_dev)?;
    let (mut wrong, mut unwritten) = (0, 0);
    for (i, (&got, &cv)) in d.iter().zip(&c).enumerate() {
        if got.to_bits() == poison.to_bits() {
            unwritten += 1;
            continue;
        }
        let (t, r, col) = (
            (i / (128 * 32)) as u32,
            ((i / 32) % 128) as u32,
            (i % 32) as u32,
        );
        let want = epi_accum(t, r, col) + beta * cv;
        if got.is_nan() || (got - want).abs() > 1e-6 * want.abs().max(1.0) {
            wrong += 1;
        }
    }
    Ok(EpiRun {
        tiles,
        wrong,
        unwritten,
    })
}

/// One zero-cost benchmark measurement.
#[derive(Clone, Debug)]
pub struct ZeroCostRun {
    /// Kernel name.
    pub kernel: &'static str,
    /// Handoffs per microsecond across the GPU (median of the repeats).
    pub handoffs_per_us: f64,
    /// Median wall time per launch, milliseconds.
    pub median_ms: f64,
}

/// Times `baton_bench_handoff_pipeline` and `baton_bench_handoff_handwritten`
/// alternately, `repeats` launches each, and checks their outputs agree with
/// the expected stage-index sums.
pub fn run_zero_cost(
    gpu: &Gpu,
    kernels: &Kernels,
    blocks: u32,
    iters: u32,
    repeats: usize,
) -> Result<[ZeroCostRun; 2]> {
    const NAMES: [&str; 2] = [zero_cost::PIPELINE.name, zero_cost::HANDWRITTEN.name];
    let fs = [
        kernels.kernel(&zero_cost::PIPELINE)?,
        kernels.kernel(&zero_cost::HANDWRITTEN)?,
    ];
    let stream = gpu.stream();
    let words = (blocks * zero_cost::THREADS) as usize;
    let expected: u32 = (0..iters).fold(0u32, |s, i| s.wrapping_add(i % 4));
    let mut times = [Vec::new(), Vec::new()];
    for rep in 0..repeats + 1 {
        for (which, f) in fs.iter().enumerate() {
            let mut out = stream.clone_htod(&vec![POISON; words])?;
            gpu.synchronize()?;
            let start = Instant::now();
            {
                let (out, _out_sync) = out.device_ptr_mut(stream);
                let params = HandoffBenchParams {
                    out: out as *mut u32,
                    iters,
                };
                // SAFETY: `out` holds grid·160 words and lives until the
                // synchronization below.
                unsafe { f.launch(stream, blocks, &params)? };
            }
            gpu.synchronize()?;
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let host = stream.clone_dtoh(&out)?;
            let bad = host
                .chunks(THREADS as usize)
                .flat_map(|b| &b[32..])
                .filter(|&&v| v != expected)
                .count();
            if bad != 0 {
                return Err(Error::Mismatch {
                    check: NAMES[which],
                    wrong: bad,
                    total: host.len() / THREADS as usize * CONSUMERS as usize,
                    unit: "consumer sums",
                    first: None,
                });
            }
            if rep > 0 {
                times[which].push(ms);
            }
        }
    }
    let run = |which: usize| {
        let mut t = times[which].clone();
        t.sort_by(f64::total_cmp);
        let median_ms = t[t.len() / 2];
        ZeroCostRun {
            kernel: NAMES[which],
            handoffs_per_us: (blocks as f64 * iters as f64) / (median_ms * 1e3),
            median_ms,
        }
    };
    Ok([run(0), run(1)])
}
