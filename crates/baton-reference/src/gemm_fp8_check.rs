//! f64 checks and timing of the blockwise FP8 GEMM: random e4m3 operands and
//! scales, the f64 reference of the dequantized product, the check of ours
//! against it.

use crate::Result;
use crate::gemm_check::Comparison;
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use baton_runtime::gemm::fp8::{Fp8GemmPlan, SCALE_BLOCK, e4m3_to_f32, f32_to_e4m3, scale_lens};
use baton_runtime::{Gpu, Kernels};

/// `n` random e4m3 values: uniform reals in [-`range`, `range`) rounded to
/// e4m3 (never NaN).
pub fn random_e4m3(n: usize, range: f32, rng: &mut XorShift) -> Vec<u8> {
    (0..n)
        .map(|_| {
            let u = (rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0;
            f32_to_e4m3(u * range)
        })
        .collect()
}

/// `n` random positive scales, `2^e · (1 + f)` with `e` in [-4, 3] and `f`
/// in [0, 1): spread over three decades, never all equal.
pub fn random_scales(n: usize, rng: &mut XorShift) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let r = rng.next_u32();
            let e = (r % 8) as i32 - 4;
            let f = (r >> 8) as f32 / (1u32 << 24) as f32;
            2f32.powi(e) * (1.0 + f)
        })
        .collect()
}

/// f64 reference of the dequantized product:
/// `D[i][j] = Σ_k A[i][k]·Sa[k/128][i] · B[j][k]·Sb[j/128][k/128]`.
#[allow(clippy::too_many_arguments)]
pub fn reference_f64(
    a: &[u8],
    b: &[u8],
    a_scales: &[f32],
    b_scales: &[f32],
    m: usize,
    n: usize,
    k: usize,
) -> Vec<f64> {
    let kb = k / SCALE_BLOCK;
    let af: Vec<f64> = (0..m * k)
        .map(|idx| {
            let (i, kk) = (idx / k, idx % k);
            e4m3_to_f32(a[idx]) as f64 * a_scales[(kk / SCALE_BLOCK) * m + i] as f64
        })
        .collect();
    let bf: Vec<f64> = (0..n * k)
        .map(|idx| {
            let (j, kk) = (idx / k, idx % k);
            e4m3_to_f32(b[idx]) as f64 * b_scales[(j / SCALE_BLOCK) * kb + kk / SCALE_BLOCK] as f64
        })
        .collect();
    let mut out = vec![0f64; m * n];
    for i in 0..m {
        let ar = &af[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &bf[j * k..(j + 1) * k];
            out[i * n + j] = ar.iter().zip(br).map(|(x, y)| x * y).sum();
        }
    }
    out
}

/// Output poison: a bf16 quiet NaN.
pub const POISON_BF16: u16 = 0x7FC1;

/// Runs ours on fresh random inputs and scales (poisoned D) and compares
/// with the f64 reference of the dequantized inputs.
pub fn check_vs_f64(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &str,
    mnk: (usize, usize, usize),
) -> Result<Comparison> {
    check_vs_f64_with(gpu, kernels, kernel, mnk, None)
}

/// [`check_vs_f64`] with stream-K set to `stream_k`
/// ([`Fp8GemmPlan::set_stream_k`]).
pub fn check_vs_f64_with(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &str,
    mnk: (usize, usize, usize),
    stream_k: Option<u32>,
) -> Result<Comparison> {
    check_vs_f64_tuned(gpu, kernels, kernel, mnk, |plan| {
        plan.set_stream_k(gpu, stream_k)
    })
}

/// [`check_vs_f64`] with split-K: `splits` workers per unit
/// ([`Fp8GemmPlan::set_split_k`]).
pub fn check_vs_f64_split_k(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &str,
    mnk: (usize, usize, usize),
    splits: u32,
) -> Result<Comparison> {
    check_vs_f64_tuned(gpu, kernels, kernel, mnk, |plan| {
        plan.set_split_k(gpu, splits)
    })
}

fn check_vs_f64_tuned(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &str,
    (m, n, k): (usize, usize, usize),
    tune: impl FnOnce(&mut Fp8GemmPlan<'_>) -> baton_runtime::Result<()>,
) -> Result<Comparison> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = random_e4m3(m * k, 448.0, &mut rng);
    let b = random_e4m3(n * k, 448.0, &mut rng);
    let (sa_len, sb_len) = scale_lens(m, n, k);
    // Scales sized so that products stay well inside bf16/f32 range.
    let sa: Vec<f32> = random_scales(sa_len, &mut rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    let sb: Vec<f32> = random_scales(sb_len, &mut rng)
        .into_iter()
        .map(|s| s / 448.0)
        .collect();
    let stream = gpu.stream();
    let (a_d, b_d) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let (sa_d, sb_d) = (stream.clone_htod(&sa)?, stream.clone_htod(&sb)?);
    let mut d_d = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let mut plan = Fp8GemmPlan::with_kernel(
        gpu,
        kernels,
        kernel,
        &a_d,
        &b_d,
        &sa_d,
        &sb_d,
        &mut d_d,
        (m, n, k),
    )?;
    tune(&mut plan)?;
    plan.run(gpu)?;
    drop(plan);
    gpu.synchronize()?;
    let d = stream.clone_dtoh(&d_d)?;
    Ok(Comparison::new(
        &d,
        &reference_f64(&a, &b, &sa, &sb, m, n, k),
    ))
}

/// Median time (ms) of `reps` event-timed launches of ours at `(m, n, k)` on
/// random inputs (after 3 warm-up launches), and the grid it used.
pub fn time_ours(
    gpu: &Gpu,
    kernels: &Kernels,
    kernel: &str,
    (m, n, k): (usize, usize, usize),
    reps: usize,
) -> Result<f64> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let (sa_len, sb_len) = scale_lens(m, n, k);
    let stream = gpu.stream();
    let a = stream.clone_htod(&random_e4m3(m * k, 448.0, &mut rng))?;
    let b = stream.clone_htod(&random_e4m3(n * k, 448.0, &mut rng))?;
    let sa = stream.clone_htod(&random_scales(sa_len, &mut rng))?;
    let sb = stream.clone_htod(&random_scales(sb_len, &mut rng))?;
    let mut d = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let plan = Fp8GemmPlan::with_kernel(gpu, kernels, kernel, &a, &b, &sa, &sb, &mut d, (m, n, k))?;
    let mut timer = QueuedTimer::<1>::new();
    for _ in 0..reps + 3 {
        timer.time(gpu, 0, || plan.run(gpu))?;
    }
    let [times] = timer.finish(gpu, 3)?;
    Ok(median(times))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_dequantizes_with_the_right_blocks() {
        // M = 2, N = 130 (two n-blocks), K = 256 (two k-blocks); all ones.
        let (m, n, k) = (2, 130, 256);
        let a = vec![0x38u8; m * k];
        let b = vec![0x38u8; n * k];
        let sa = vec![1.0, 2.0, 3.0, 4.0]; // [kb][i]
        let sb = vec![1.0, 10.0, 100.0, 1000.0]; // [nb][kb]
        let d = reference_f64(&a, &b, &sa, &sb, m, n, k);
        // row 0, col 0: 128·1·1 + 128·3·10
        assert_eq!(d[0], 128.0 + 128.0 * 30.0);
        // row 1, col 129: 128·2·100 + 128·4·1000
        assert_eq!(d[n + 129], 128.0 * 200.0 + 128.0 * 4000.0);
    }
}
