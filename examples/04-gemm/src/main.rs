//! Example 04 on the GPU: `D = alpha·A·Bᵀ` on fresh random bf16 inputs at
//! ragged shapes (M, N, K not multiples of the tile), release and debug
//! PTX; every element of D is checked against an f64 reference (NaN never
//! passes), and a NaN-poisoned guard past D must stay untouched. Without a
//! CUDA GPU it prints `SKIPPED: …` and exits 0.
//!
//! Exit codes: 0 pass (or skipped), 1 failure.

use baton::numeric::{Bf16, SmallFloat};
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::{Error, Gpu, tensor_map};
use gemm_kernel::{BM, BN, GEMM, GemmParams};
use std::process::ExitCode;

static PTX: &str = baton_runtime::include_ptx!("gemm_kernel", "sm90a");
static PTX_DEBUG: &str = baton_runtime::include_ptx!("gemm_kernel", "sm90a_debug");

/// bf16 NaN: the poison of D and of its guard.
const POISON: u16 = 0x7FC0;
/// Guard elements after D.
const GUARD: usize = 1024;

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
        // Ragged in every dimension (N and K multiples of 8: 16-byte rows for TMA).
        let ragged = (
            (300 + splitmix64(&mut rng) % 700) as usize,
            8 * (40 + splitmix64(&mut rng) % 100) as usize,
            8 * (20 + splitmix64(&mut rng) % 100) as usize,
        );
        for (m, n, k) in [ragged, (1000, 2056, 520)] {
            match run(&gpu, ptx, (m, n, k), &mut rng) {
                Ok(0) => println!("PASS 04-gemm {variant} {m}x{n}x{k}"),
                Ok(bad) => {
                    println!("FAIL 04-gemm {variant} {m}x{n}x{k}: {bad} elements out of tolerance");
                    failed = true;
                }
                Err(e) => {
                    println!("FAIL 04-gemm {variant} {m}x{n}x{k}: {e}");
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

/// A row-major `rows × cols` bf16 matrix at `base`, moved in `box_rows ×
/// box_cols` boxes.
fn desc(
    base: u64,
    rows: usize,
    cols: usize,
    box_rows: u32,
    box_cols: u32,
    swizzle: Swizzle,
) -> TensorMapDesc {
    let (r, c) = (rows as u64, cols as u64);
    TensorMapDesc::matrix_2d(
        ElemType::BF16,
        base,
        r,
        c,
        c * 2,
        box_rows,
        box_cols,
        swizzle,
    )
}

/// One GEMM; returns the number of elements of D (and guard) out of tolerance.
fn run(
    gpu: &Gpu,
    ptx: &str,
    (m, n, k): (usize, usize, usize),
    rng: &mut u64,
) -> Result<usize, Error> {
    let module = gpu.load_ptx(ptx, "gemm_kernel")?;
    let kernel = module.kernel(&GEMM)?;
    // Inputs in [-1, 1), rounded to bf16: the reference sees the exact values.
    let mut random_bf16 = |len: usize| -> Vec<u16> {
        let unit = |x: u64| (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        (0..len)
            .map(|_| Bf16::from_f32(unit(splitmix64(rng))).to_bits())
            .collect()
    };
    let (a, b) = (random_bf16(m * k), random_bf16(n * k));
    let alpha = 0.5f32;
    let stream = gpu.stream();
    let d_a = stream.clone_htod(&a)?;
    let d_b = stream.clone_htod(&b)?;
    let mut d_d = stream.clone_htod(&vec![POISON; m * n + GUARD])?;
    let maps = tensor_map::upload(
        gpu,
        &[
            tensor_map::encode(&desc(d_a.device_ptr(stream).0, m, k, BM, 64, Swizzle::B128))?,
            tensor_map::encode(&desc(d_b.device_ptr(stream).0, n, k, BN, 64, Swizzle::B128))?,
            tensor_map::encode(&desc(
                d_d.device_ptr_mut(stream).0,
                m,
                n,
                64,
                32,
                Swizzle::B64,
            ))?,
        ],
    )?;
    let params = GemmParams {
        tma_a: maps.ptr(0) as *const _,
        tma_b: maps.ptr(1) as *const _,
        tma_d: maps.ptr(2) as *const _,
        m: m as u32,
        n: n as u32,
        k: k as u32,
        alpha,
    };
    let tiles = (m.div_ceil(BM as usize) * n.div_ceil(BN as usize)) as u32;
    // Persistent: at most one CTA per SM, each walking several tiles.
    let grid = tiles.min(gpu.sm_count());
    // SAFETY: the maps describe d_a, d_b, d_d (inside the buffers) as the
    // kernel's contract says; everything lives until the copy back below.
    unsafe { kernel.launch(stream, grid, &params)? };
    let d = stream.clone_dtoh(&d_d)?;
    gpu.synchronize()?;
    Ok(count_wrong(&a, &b, &d, (m, n, k), alpha))
}

/// Elements of D farther from the f64 reference than bf16 rounding plus
/// fp32 accumulation allow (NaN counts as wrong), plus guard elements
/// written.
fn count_wrong(
    a: &[u16],
    b: &[u16],
    d: &[u16],
    (m, n, k): (usize, usize, usize),
    alpha: f32,
) -> usize {
    let f = |x: u16| Bf16::from_bits(x).to_f64();
    let (a, b): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|&x| f(x)).collect(),
        b.iter().map(|&x| f(x)).collect(),
    );
    let threads = std::thread::available_parallelism().map_or(4, |t| t.get());
    let rows_per = m.div_ceil(threads);
    let wrong: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..m)
            .step_by(rows_per)
            .map(|r0| {
                let (a, b) = (&a, &b);
                s.spawn(move || {
                    let mut wrong = 0;
                    for i in r0..(r0 + rows_per).min(m) {
                        for j in 0..n {
                            let (ar, br) = (&a[i * k..][..k], &b[j * k..][..k]);
                            let exact: f64 = ar.iter().zip(br).map(|(x, y)| x * y).sum::<f64>() * f64::from(alpha);
                            let magnitude: f64 = ar.iter().zip(br).map(|(x, y)| (x * y).abs()).sum::<f64>() * f64::from(alpha);
                            // bf16 output: half an ulp (2^-8 relative); fp32 sums: K·2^-22 of Σ|ab|.
                            let tol = exact.abs() * 2f64.powi(-8) + k as f64 * 2f64.powi(-22) * magnitude + 1e-30;
                            let got = Bf16::from_bits(d[i * n + j]).to_f64();
                            // False for NaN: a NaN never passes.
                            let within = (got - exact).abs() <= tol;
                            if !within {
                                if wrong < 3 {
                                    println!("  D[{i}][{j}] = {got}, expected {exact} (tolerance {tol:.3e})");
                                }
                                wrong += 1;
                            }
                        }
                    }
                    wrong
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("reference thread"))
            .sum()
    });
    let clobbered = d[m * n..].iter().filter(|&&g| g != POISON).count();
    if clobbered > 0 {
        println!("  {clobbered} guard elements past D were written");
    }
    wrong + clobbered
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The checker itself: D as the GPU computes it (fp32 sums, bf16
    /// rounding) passes; a wrong element, a NaN and a written guard fail.
    #[test]
    fn checker_accepts_fp32_sums_and_rejects_errors() {
        let (m, n, k) = (37, 24, 136);
        let mut rng = seed_from_time();
        let mut random = |len: usize| -> Vec<u16> {
            let unit = |x: u64| (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
            (0..len)
                .map(|_| Bf16::from_f32(unit(splitmix64(&mut rng))).to_bits())
                .collect()
        };
        let (a, b) = (random(m * k), random(n * k));
        let f = |x: u16| Bf16::from_bits(x).to_f32();
        let mut d = vec![POISON; m * n + GUARD];
        for i in 0..m {
            for j in 0..n {
                let sum: f32 = (0..k).map(|l| f(a[i * k + l]) * f(b[j * k + l])).sum();
                d[i * n + j] = Bf16::from_f32(0.5 * sum).to_bits();
            }
        }
        assert_eq!(count_wrong(&a, &b, &d, (m, n, k), 0.5), 0);
        let mut wrong = d.clone();
        wrong[5 * n + 7] = Bf16::from_f32(f(wrong[5 * n + 7]) + 0.25).to_bits();
        assert_eq!(count_wrong(&a, &b, &wrong, (m, n, k), 0.5), 1);
        let mut nan = d.clone();
        nan[0] = POISON;
        assert_eq!(count_wrong(&a, &b, &nan, (m, n, k), 0.5), 1);
        let mut guard = d;
        guard[m * n + 3] = 0;
        assert_eq!(count_wrong(&a, &b, &guard, (m, n, k), 0.5), 1);
    }
}
