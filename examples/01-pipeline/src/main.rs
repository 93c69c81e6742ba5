//! Example 01 on the GPU: launches `example_pipeline` (release and debug
//! builds of the PTX) on fresh random input and checks every output word
//! against `3·x + 1`. Without a CUDA GPU it prints `SKIPPED: …` and exits 0.
//!
//! Exit codes: 0 pass (or skipped), 1 failure.

use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::{Error, Gpu};
use pipeline_kernel::{PIPELINE, PipelineParams};
use std::process::ExitCode;

/// The kernel crate's PTX, built by `build.rs` (named after its lib name).
static PTX: &str = baton_runtime::include_ptx!("pipeline_kernel", "sm90a");
/// The same kernel with debug assertions: bounded waits that report a hang.
static PTX_DEBUG: &str = baton_runtime::include_ptx!("pipeline_kernel", "sm90a_debug");

fn main() -> ExitCode {
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) if e.is_no_gpu() => {
            println!("SKIPPED: no CUDA GPU ({e})");
            return ExitCode::SUCCESS;
        }
        Err(e @ Error::WrongArch { .. }) => {
            println!("SKIPPED: needs an sm_90a GPU ({e})");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("FAIL: the GPU is present but unusable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let seed = seed_from_time();
    let mut failed = false;
    for (ptx, variant) in [(PTX, "release"), (PTX_DEBUG, "debug")] {
        // A ragged size: the last chunk is partial.
        for n in [1_000_003u32, 64 * 1000 + 17] {
            match run(&gpu, ptx, n, seed ^ u64::from(n)) {
                Ok(0) => println!("PASS 01-pipeline {variant} n={n} seed={seed:#x}"),
                Ok(bad) => {
                    println!("FAIL 01-pipeline {variant} n={n} seed={seed:#x}: {bad} wrong words");
                    failed = true;
                }
                Err(e) => {
                    println!("FAIL 01-pipeline {variant} n={n}: {e}");
                    failed = true;
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One launch on `n` random words; returns the number of wrong output words.
fn run(gpu: &Gpu, ptx: &str, n: u32, seed: u64) -> Result<usize, Error> {
    let module = gpu.load_ptx(ptx, "pipeline_kernel")?;
    // Checks the host's spec against the module's (threads, shared memory, params size).
    let kernel = module.kernel(&PIPELINE)?;
    let mut rng = seed;
    let input: Vec<u32> = (0..n).map(|_| splitmix64(&mut rng) as u32).collect();
    let stream = gpu.stream();
    let d_input = stream.clone_htod(&input)?;
    // Poisoned output: a word the kernel never writes stays 0xFFFF_FFFF.
    let mut d_out = stream.clone_htod(&vec![u32::MAX; n as usize])?;
    let params = PipelineParams {
        input: d_input.device_ptr(stream).0 as *const u32,
        out: d_out.device_ptr_mut(stream).0 as *mut u32,
        n,
    };
    // Fewer blocks than chunks: every block makes several laps of the ring.
    let grid = 2 * gpu.sm_count();
    // SAFETY: `input` and `out` hold n words and live until the copy back
    // below, which synchronizes the stream.
    unsafe { kernel.launch(stream, grid, &params)? };
    let out = stream.clone_dtoh(&d_out)?;
    gpu.synchronize()?;
    let mut wrong = 0;
    for (i, (&x, &y)) in input.iter().zip(&out).enumerate() {
        let expected = (u64::from(x) * 3 + 1) as u32;
        if y != expected {
            if wrong < 5 {
                println!("  out[{i}] = {y:#x}, expected {expected:#x} (in {x:#x})");
            }
            wrong += 1;
        }
    }
    Ok(wrong)
}

fn seed_from_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5EED)
}

/// SplitMix64.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
