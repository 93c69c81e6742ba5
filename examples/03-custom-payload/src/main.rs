//! Example 03 on the GPU: fresh random K and V (ragged row counts) through
//! `example_kv_dot` (release and debug PTX); every output word is checked
//! against `Σ_c K[r][c]·V[r][c] mod 2³²` computed here, and a poisoned word
//! past the output must stay untouched. Without a CUDA GPU it prints
//! `SKIPPED: …` and exits 0.
//!
//! Exit codes: 0 pass (or skipped), 1 failure.

use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::{Error, Gpu, tensor_map};
use kv_kernel::payload::{DIM, ROWS};
use kv_kernel::{KV_DOT, KvParams};
use std::process::ExitCode;

static PTX: &str = baton_runtime::include_ptx!("kv_kernel", "sm90a");
static PTX_DEBUG: &str = baton_runtime::include_ptx!("kv_kernel", "sm90a_debug");

/// Output poison.
const POISON: u32 = 0xDEAD_BEEF;

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
    let mut rng = seed_from_time();
    println!("seed {rng:#x}");
    let mut failed = false;
    for (ptx, variant) in [(PTX, "release"), (PTX_DEBUG, "debug")] {
        let ragged = (1000 + splitmix64(&mut rng) % 100_000) as usize;
        for rows in [1, 1 << 20, ragged] {
            match run(&gpu, ptx, rows, &mut rng) {
                Ok(0) => println!("PASS 03-custom-payload {variant} rows={rows}"),
                Ok(bad) => {
                    println!("FAIL 03-custom-payload {variant} rows={rows}: {bad} wrong words");
                    failed = true;
                }
                Err(e) => {
                    println!("FAIL 03-custom-payload {variant} rows={rows}: {e}");
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

/// K or V (`rows × 32` u32 at `base`) as the kernel expects it: box 32 × 32,
/// 128-byte swizzle.
fn desc(base: u64, rows: usize) -> TensorMapDesc {
    TensorMapDesc::matrix_2d(
        ElemType::U32,
        base,
        rows as u64,
        DIM as u64,
        DIM as u64 * 4,
        ROWS as u32,
        DIM as u32,
        Swizzle::B128,
    )
}

/// One launch; returns the number of wrong words (guard included).
fn run(gpu: &Gpu, ptx: &str, rows: usize, rng: &mut u64) -> Result<usize, Error> {
    let module = gpu.load_ptx(ptx, "kv_kernel")?;
    let kernel = module.kernel(&KV_DOT)?;
    let k: Vec<u32> = (0..rows * DIM).map(|_| splitmix64(rng) as u32).collect();
    let v: Vec<u32> = (0..rows * DIM).map(|_| splitmix64(rng) as u32).collect();
    let stream = gpu.stream();
    let d_k = stream.clone_htod(&k)?;
    let d_v = stream.clone_htod(&v)?;
    let mut d_out = stream.clone_htod(&vec![POISON; rows + 1])?;
    let maps = tensor_map::upload(
        gpu,
        &[
            tensor_map::encode(&desc(d_k.device_ptr(stream).0, rows))?,
            tensor_map::encode(&desc(d_v.device_ptr(stream).0, rows))?,
        ],
    )?;
    let params = KvParams {
        k_map: maps.ptr(0) as *const _,
        v_map: maps.ptr(1) as *const _,
        out: d_out.device_ptr_mut(stream).0 as *mut u32,
        rows: rows as u32,
    };
    let grid = (rows.div_ceil(ROWS) as u32).min(2 * gpu.sm_count());
    // SAFETY: the maps describe `d_k` and `d_v` (rows × 32), `out` holds
    // rows + 1 words, and everything lives until the copy back synchronizes.
    unsafe { kernel.launch(stream, grid, &params)? };
    let out = stream.clone_dtoh(&d_out)?;
    gpu.synchronize()?;
    let mut wrong = 0;
    for r in 0..rows {
        let expected = (0..DIM)
            .map(|c| u64::from(k[r * DIM + c]) * u64::from(v[r * DIM + c]))
            .fold(0u64, u64::wrapping_add) as u32;
        if out[r] != expected {
            if wrong < 5 {
                println!("  out[{r}] = {:#x}, expected {expected:#x}", out[r]);
            }
            wrong += 1;
        }
    }
    if out[rows] != POISON {
        println!("  the word past the output was written");
        wrong += 1;
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
