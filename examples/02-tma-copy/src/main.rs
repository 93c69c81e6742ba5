//! Example 02 on the GPU: copies fresh random bf16 matrices (ragged shapes)
//! with `example_tma_copy` (release and debug PTX) and checks every element
//! bit for bit, plus a poisoned guard after the destination that TMA's
//! clipping must leave alone. Without a CUDA GPU it prints `SKIPPED: …`
//! and exits 0.
//!
//! Exit codes: 0 pass (or skipped), 1 failure.

use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::{Error, Gpu, tensor_map};
use std::process::ExitCode;
use tma_copy_kernel::{TILE, TMA_COPY, TmaCopyParams};

static PTX: &str = baton_runtime::include_ptx!("tma_copy_kernel", "sm90a");
static PTX_DEBUG: &str = baton_runtime::include_ptx!("tma_copy_kernel", "sm90a_debug");

/// Destination poison (a bf16 NaN the inputs never contain).
const POISON: u16 = 0xFFFF;
/// Guard elements after the destination matrix.
const GUARD: usize = 4096;

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
        let ragged = (
            (100 + splitmix64(&mut rng) % 2000) as usize,
            8 * (20 + splitmix64(&mut rng) % 300) as usize,
        );
        for (rows, cols) in [(4096, 4096), (1, 8), ragged] {
            match run(&gpu, ptx, rows, cols, &mut rng) {
                Ok(0) => println!("PASS 02-tma-copy {variant} {rows}x{cols}"),
                Ok(bad) => {
                    println!("FAIL 02-tma-copy {variant} {rows}x{cols}: {bad} wrong elements");
                    failed = true;
                }
                Err(e) => {
                    println!("FAIL 02-tma-copy {variant} {rows}x{cols}: {e}");
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

/// The tensor map of a row-major `rows × cols` bf16 matrix at `base`, as the
/// kernel expects it (box 64 × 64, 128-byte swizzle).
fn desc(base: u64, rows: usize, cols: usize) -> TensorMapDesc {
    TensorMapDesc::matrix_2d(
        ElemType::BF16,
        base,
        rows as u64,
        cols as u64,
        cols as u64 * 2,
        TILE,
        TILE,
        Swizzle::B128,
    )
}

/// One copy; returns the number of wrong elements (guard included).
fn run(gpu: &Gpu, ptx: &str, rows: usize, cols: usize, rng: &mut u64) -> Result<usize, Error> {
    let module = gpu.load_ptx(ptx, "tma_copy_kernel")?;
    let kernel = module.kernel(&TMA_COPY)?;
    let src: Vec<u16> = (0..rows * cols)
        .map(|_| splitmix64(rng) as u16 & 0x7FFF)
        .collect();
    let stream = gpu.stream();
    let d_src = stream.clone_htod(&src)?;
    let mut d_dst = stream.clone_htod(&vec![POISON; rows * cols + GUARD])?;
    let src_ptr = d_src.device_ptr(stream).0;
    let dst_ptr = d_dst.device_ptr_mut(stream).0;
    // Encoded by the driver, then copied to global memory: kernels take
    // `*const TensorMap` into global memory.
    let maps = tensor_map::upload(
        gpu,
        &[
            tensor_map::encode(&desc(src_ptr, rows, cols))?,
            tensor_map::encode(&desc(dst_ptr, rows, cols))?,
        ],
    )?;
    let params = TmaCopyParams {
        load_map: maps.ptr(0) as *const _,
        store_map: maps.ptr(1) as *const _,
        tiles_m: rows.div_ceil(TILE as usize) as u32,
        tiles_n: cols.div_ceil(TILE as usize) as u32,
    };
    let grid = (params.tiles_m * params.tiles_n).min(2 * gpu.sm_count());
    // SAFETY: the maps describe `d_src` and `d_dst` (rows × cols, inside the
    // buffers) and everything lives until the copy back synchronizes.
    unsafe { kernel.launch(stream, grid, &params)? };
    let dst = stream.clone_dtoh(&d_dst)?;
    gpu.synchronize()?;
    let mut wrong = 0;
    for (i, (&s, &d)) in src.iter().zip(&dst).enumerate() {
        if s != d {
            if wrong < 5 {
                println!(
                    "  ({}, {}): {d:#06x}, expected {s:#06x}",
                    i / cols,
                    i % cols
                );
            }
            wrong += 1;
        }
    }
    let clobbered = dst[rows * cols..].iter().filter(|&&g| g != POISON).count();
    if clobbered > 0 {
        println!("  {clobbered} guard elements past the matrix were written");
    }
    Ok(wrong + clobbered)
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
