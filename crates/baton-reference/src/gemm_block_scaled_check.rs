//! f64 checks of the sm_100a block-scaled GEMMs (MXFP8, NVFP4): random
//! operands, the f64 reference GEMM of the dequantized inputs, and the check
//! of ours against it.

use crate::Result;
use crate::gemm_check::{Comparison, POISON_BF16};
use crate::random::XorShift;
use baton_runtime::block_scaled::{BlockScaledError, Quantize, QuantizedMatrix};
use baton_runtime::gemm::block_scaled::{
    BlockScaledGemmFormat, BlockScaledGemmPlan, DeviceQuantized,
};
use baton_runtime::gemm::{bf16_to_f32, f32_to_bf16};
use baton_runtime::{Gpu, Kernels};

/// `D = A · Bᵀ` in `f64` over the dequantized operands (A: M × K, B: N × K,
/// both K-major), D row-major M × N. Error: [`BlockScaledError::KMismatch`].
///
/// ```
/// use baton::block_scale::Mxfp8;
/// use baton_runtime::block_scaled::QuantizedMatrix;
/// use baton_reference::gemm_block_scaled_check::reference_gemm;
/// let a = QuantizedMatrix::<Mxfp8>::quantize(&[2.0; 32], 1, 32).unwrap();
/// let b = QuantizedMatrix::<Mxfp8>::quantize(&[0.5; 64], 2, 32).unwrap();
/// assert_eq!(reference_gemm(&a, &b).unwrap(), [32.0, 32.0]);
/// ```
pub fn reference_gemm<F: Quantize>(
    a: &QuantizedMatrix<F>,
    b: &QuantizedMatrix<F>,
) -> Result<Vec<f64>, BlockScaledError> {
    if a.k() != b.k() {
        return Err(BlockScaledError::KMismatch {
            a_k: a.k(),
            b_k: b.k(),
        });
    }
    let (da, db) = (a.dequantize(), b.dequantize());
    let k = a.k();
    let mut d = vec![0f64; a.rows() * b.rows()];
    for m in 0..a.rows() {
        for n in 0..b.rows() {
            d[m * b.rows() + n] = (0..k).map(|i| da[m * k + i] * db[n * k + i]).sum();
        }
    }
    Ok(d)
}

/// `n` random values over a wide dynamic range: a uniform in `[-1, 1)`
/// times `range · 2^e`, `e` uniform in `[-6, 6)` (NVFP4's scales reach
/// them for `range` up to 80).
pub fn random_values(n: usize, range: f32, rng: &mut XorShift) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let s = rng.next_u64();
            let u = (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            let e = ((s >> 8) % 12) as i32 - 6;
            u * range * 2f32.powi(e)
        })
        .collect()
}

/// A random `rows × k` operand of format `F`, quantized ([`random_values`]
/// with range 4). Errors: [`BlockScaledError`] from the quantizer (K not a
/// multiple of the format's block).
pub fn random_operand<F: BlockScaledGemmFormat>(
    rows: usize,
    k: usize,
    rng: &mut XorShift,
) -> Result<QuantizedMatrix<F>> {
    Ok(QuantizedMatrix::quantize(
        &random_values(rows * k, 4.0, rng),
        rows,
        k,
    )?)
}

/// The small and ragged shapes the f64 checks run (M = 1, unaligned M/N,
/// K not a multiple of the 128/256-element stage, several K tiles); K a
/// multiple of 32 (both formats' rows whole 16-byte units).
pub const RAGGED_SHAPES: [(usize, usize, usize); 4] = [
    (128, 128, 512),
    (200, 264, 160),
    (1, 8, 32),
    (520, 264, 1056),
];

/// Runs ours (`alpha·A·Bᵀ + beta·C`) on fresh random operands of format `F`
/// and compares it with the f64 reference of the dequantized inputs
/// ([`reference_gemm`]); D is NaN-poisoned first.
pub fn check_vs_f64<F: BlockScaledGemmFormat>(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
) -> Result<Comparison> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let qa = random_operand::<F>(m, k, &mut rng)?;
    let qb = random_operand::<F>(n, k, &mut rng)?;
    let c: Vec<u16> = random_values(m * n, 1.0, &mut rng)
        .into_iter()
        .map(f32_to_bf16)
        .collect();
    let stream = gpu.stream();
    let (a, b) = (
        DeviceQuantized::upload(gpu, &qa)?,
        DeviceQuantized::upload(gpu, &qb)?,
    );
    let c_d = stream.clone_htod(&c)?;
    let mut d_d = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    BlockScaledGemmPlan::new(gpu, kernels, &a, &b, Some(&c_d), &mut d_d)?.run(gpu, alpha, beta)?;
    gpu.synchronize()?;
    let d = stream.clone_dtoh(&d_d)?;
    let ab = reference_gemm(&qa, &qb)?;
    let reference: Vec<f64> = ab
        .iter()
        .zip(&c)
        .map(|(&x, &cv)| alpha as f64 * x + beta as f64 * bf16_to_f32(cv) as f64)
        .collect();
    Ok(Comparison::new(&d, &reference))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton::block_scale::{Mxfp8, Nvfp4};
    use baton::numeric::SmallFloat;

    #[test]
    fn reference_gemm_refuses_different_k() {
        let a = QuantizedMatrix::<Mxfp8>::quantize(&[0.0; 64], 1, 64).unwrap();
        let b = QuantizedMatrix::<Mxfp8>::quantize(&[0.0; 32], 1, 32).unwrap();
        assert_eq!(
            reference_gemm(&a, &b).unwrap_err(),
            BlockScaledError::KMismatch { a_k: 64, b_k: 32 }
        );
    }

    #[test]
    fn reference_gemm_matches_a_direct_sum() {
        let (m, n, k) = (5, 4, 64);
        let qa = QuantizedMatrix::<Nvfp4>::quantize(
            &random_values(m * k, 2.0, &mut XorShift::new(3)),
            m,
            k,
        )
        .unwrap();
        let qb = QuantizedMatrix::<Nvfp4>::quantize(
            &random_values(n * k, 2.0, &mut XorShift::new(4)),
            n,
            k,
        )
        .unwrap();
        let d = reference_gemm(&qa, &qb).unwrap();
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for c in 0..k {
                    let (ea, sa) = qa.parts(i, c);
                    let (eb, sb) = qb.parts(j, c);
                    s += ea.to_f64() * sa.to_f64() * eb.to_f64() * sb.to_f64();
                }
                assert_eq!(d[i * n + j], s);
            }
        }
    }

    #[test]
    fn random_operands_quantize_in_both_formats() {
        let mut rng = XorShift::new(3);
        let a = random_operand::<Nvfp4>(3, 64, &mut rng).unwrap();
        assert_eq!(a.data().len(), 3 * 32);
        assert!(random_operand::<Mxfp8>(3, 48, &mut rng).is_err());
    }
}
