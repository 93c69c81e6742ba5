//! The blockwise FP8 GEMM timed by the DeepGEMM anchor's method
//! (`../shared/anchors/deepgemm/run.py`, issue #19), so that baton,
//! cuBLASLt blockwise and DeepGEMM can be set side by side in one table:
//!
//! * inputs: normal samples whose magnitude varies by `2^e`, `e` uniform in
//!   −4 … 4, per 1×128 block of A and per 128×128 block of B, quantized as
//!   DeepGEMM's tests do (per-token / per-block: scale = amax / 448, amax at
//!   least 1e-4, then round to e4m3);
//! * timing: 10 warm-up calls, then 50 single calls, each after a 256 MiB
//!   memset that flushes L2, each between its own pair of events, all
//!   queued without synchronization (the memset hides the host's launch
//!   overhead, as the anchor's GPU spin does); the median of the 50, as
//!   Python's `statistics.median`;
//! * input sets rotated: enough to cover 256 MiB, at least 2, at most 8.
//!
//! Before timing, ours is compared with cuBLASLt blockwise on the first set.

use crate::Result;
use crate::gemm_check::Comparison;
use crate::gemm_fp8_check::POISON_BF16;
use crate::gemm_fp8_ref::{LtFp8Plan, LtScaling, transposed_f64};
use crate::random::XorShift;
use crate::timing::QueuedTimer;
use baton_runtime::gemm::fp8::{Fp8GemmPlan, SCALE_BLOCK, f32_to_e4m3, scale_lens};
use baton_runtime::{Gpu, Kernels};
use cudarc::driver::CudaSlice;

use crate::gemm_fp8_ref::Fp8Operands;

/// Bytes the flush memset writes before each timed call (the anchor's 256 MB).
pub const FLUSH_BYTES: usize = 256 << 20;
/// Timed calls per kernel and shape (the anchor's `--reps` default).
pub const REPS: usize = 50;
/// Untimed calls first (the anchor's `--warmup` default).
pub const WARMUP: usize = 10;

/// A standard normal sample (Box–Muller on two uniforms of `rng`).
fn normal(rng: &mut XorShift) -> f32 {
    let u1 = ((rng.next_u32() >> 8) as f32 + 1.0) / (1u32 << 24) as f32;
    let u2 = (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
    (-2.0 * u1.ln()).sqrt() * (core::f32::consts::TAU * u2).cos()
}

/// `2^e`, `e` uniform in −4 … 4 (the anchor's `exp2(randint(-4, 5))`).
fn block_magnitude(rng: &mut XorShift) -> f32 {
    2f32.powi((rng.next_u32() % 9) as i32 - 4)
}

/// The anchor's per-block scale of a block whose largest |x| is `amax`.
fn scale_of(amax: f32) -> f32 {
    amax.max(1e-4) / 448.0
}

/// Fills `block` (a 1×128 block of A or the rows of a 128×128 block of B)
/// with normal samples times one [`block_magnitude`] draw and returns its
/// [`scale_of`].
fn draw_block(rng: &mut XorShift, block: &mut [f32]) -> f32 {
    let e = block_magnitude(rng);
    block.iter_mut().for_each(|x| *x = normal(rng) * e);
    scale_of(block.iter().fold(0f32, |m, x| m.max(x.abs())))
}

/// Quantized operands on the host, drawn as the anchor draws them (see
/// the module doc): A (M×K e4m3) and its scales `[K/128, M]`, B (N×K)
/// and its scales `[⌈N/128⌉, K/128]`, as [`Fp8Operands`] holds them.
///
/// The rows of A and the 128-row blocks of B are drawn in chunks on all
/// of the machine's threads (a 64×7168×16384 set is 117 M samples of B),
/// each chunk from its own generator seeded from `rng` in chunk order: the
/// same `rng` state gives the same operands on any thread count.
///
/// ```
/// use baton_reference::gemm_fp8_anchor::anchor_host_operands;
/// use baton_reference::random::XorShift;
/// // 2 rows of A, N = 130: B's second block row holds 2 rows.
/// let ops = anchor_host_operands((2, 130, 128), &mut XorShift::new(5));
/// assert_eq!((ops.a_scales.len(), ops.b_scales.len()), (2, 2));
/// assert!(ops.b_scales.iter().all(|s| *s > 0.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnchorHostOperands {
    /// A, row-major M×K e4m3.
    pub a: Vec<u8>,
    /// A's scales, `[K/128, M]`.
    pub a_scales: Vec<f32>,
    /// B, row-major N×K e4m3.
    pub b: Vec<u8>,
    /// B's scales, `[⌈N/128⌉, K/128]`.
    pub b_scales: Vec<f32>,
}

/// Rows of A or 128-row blocks of B per generator chunk.
const CHUNK: usize = 4;

/// Fills `data` and `scales` (one unit of `data_unit` and `scales_unit`
/// elements per row of A or block row of B; `data`'s last unit may be
/// shorter) on all threads: chunk `c` of [`CHUNK`] units from a generator
/// seeded by the `c`-th draw of `rng`; `fill(rng, first_unit, data,
/// scales)` fills one chunk.
fn par_chunks<T: Send, S: Send>(
    rng: &mut XorShift,
    (data, data_unit): (&mut [T], usize),
    (scales, scales_unit): (&mut [S], usize),
    fill: impl Fn(&mut XorShift, usize, &mut [T], &mut [S]) + Sync,
) {
    let mut work: Vec<_> = data
        .chunks_mut(CHUNK * data_unit)
        .zip(scales.chunks_mut(CHUNK * scales_unit))
        .enumerate()
        .map(|(c, (d, s))| (rng.next_u64(), c * CHUNK, d, s))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = work.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for group in work.chunks_mut(per) {
            let fill = &fill;
            scope.spawn(move || {
                for (seed, first, d, s) in group.iter_mut() {
                    fill(&mut XorShift::new(*seed), *first, d, s);
                }
            });
        }
    });
}

/// Draws [`AnchorHostOperands`] for `(m, n, k)`; `k` must be a multiple of
/// 128.
///
/// ```
/// use baton_reference::gemm_fp8_anchor::anchor_host_operands;
/// use baton_reference::random::XorShift;
/// let ops = anchor_host_operands((3, 200, 256), &mut XorShift::new(1));
/// assert_eq!((ops.a.len(), ops.a_scales.len(), ops.b.len(), ops.b_scales.len()), (768, 6, 51200, 4));
/// assert_eq!(ops, anchor_host_operands((3, 200, 256), &mut XorShift::new(1)));
/// ```
pub fn anchor_host_operands(
    (m, n, k): (usize, usize, usize),
    rng: &mut XorShift,
) -> AnchorHostOperands {
    let (kb, nb) = (k / SCALE_BLOCK, n.div_ceil(SCALE_BLOCK));
    let (sa_len, sb_len) = scale_lens(m, n, k);
    debug_assert_eq!((sa_len, sb_len), (kb * m, nb * kb));
    // A: per row, per 128 of K; drawn row-major with its scales as
    // [M, K/128], transposed to [K/128, M] after.
    let mut a = vec![0u8; m * k];
    let mut sa_rows = vec![0f32; m * kb];
    par_chunks(rng, (&mut a, k), (&mut sa_rows, kb), |rng, _, a, sa| {
        let mut block = [0f32; SCALE_BLOCK];
        for (row, srow) in a.chunks_mut(k).zip(sa.chunks_mut(kb)) {
            for (b, s_out) in srow.iter_mut().enumerate() {
                let s = draw_block(rng, &mut block);
                for (j, x) in block.iter().enumerate() {
                    row[b * SCALE_BLOCK + j] = f32_to_e4m3(x / s);
                }
                *s_out = s;
            }
        }
    });
    let mut sa = vec![0f32; kb * m];
    for i in 0..m {
        for b in 0..kb {
            sa[b * m + i] = sa_rows[i * kb + b];
        }
    }
    // B: per 128×128 block (rows past N do not exist and take no part).
    let mut b = vec![0u8; n * k];
    let mut sb = vec![0f32; nb * kb];
    par_chunks(
        rng,
        (&mut b, SCALE_BLOCK * k),
        (&mut sb, kb),
        |rng, bn0, b, sb| {
            let mut tile = vec![0f32; SCALE_BLOCK * SCALE_BLOCK];
            for (i, (rows_data, srow)) in b
                .chunks_mut(SCALE_BLOCK * k)
                .zip(sb.chunks_mut(kb))
                .enumerate()
            {
                let rows = (n - (bn0 + i) * SCALE_BLOCK).min(SCALE_BLOCK);
                debug_assert_eq!(rows_data.len(), rows * k);
                for (bk, s_out) in srow.iter_mut().enumerate() {
                    let t = &mut tile[..rows * SCALE_BLOCK];
                    let s = draw_block(rng, t);
                    for r in 0..rows {
                        for j in 0..SCALE_BLOCK {
                            rows_data[r * k + bk * SCALE_BLOCK + j] =
                                f32_to_e4m3(t[r * SCALE_BLOCK + j] / s);
                        }
                    }
                    *s_out = s;
                }
            }
        },
    );
    AnchorHostOperands {
        a,
        a_scales: sa,
        b,
        b_scales: sb,
    }
}

/// [`anchor_host_operands`] uploaded to the GPU's stream.
pub fn anchor_operands(
    gpu: &Gpu,
    mnk: (usize, usize, usize),
    rng: &mut XorShift,
) -> Result<Fp8Operands> {
    let h = anchor_host_operands(mnk, rng);
    let stream = gpu.stream();
    Ok(Fp8Operands {
        a: stream.clone_htod(&h.a)?,
        b: stream.clone_htod(&h.b)?,
        a_scales: stream.clone_htod(&h.a_scales)?,
        b_scales: stream.clone_htod(&h.b_scales)?,
    })
}

/// The median as Python's `statistics.median` takes it (the mean of the two
/// middle values of an even count); NaN when empty.
pub fn median_mean_of_middle(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let h = v.len() / 2;
    if v.len() % 2 == 1 {
        v[h]
    } else {
        (v[h - 1] + v[h]) / 2.0
    }
}

/// One shape timed by the anchor's method.
#[derive(Clone, Debug)]
pub struct FlushedRow {
    /// M, N, K.
    pub shape: (usize, usize, usize),
    /// Our kernel: the library's plan's (`Fp8GemmPlan::new`: the cost
    /// model's kernel and split count), or the forced one.
    pub kernel: &'static str,
    /// Workers per tile (split-K; 1: whole tiles).
    pub splits: u32,
    /// Input sets rotated.
    pub sets: usize,
    /// Median ms of ours.
    pub ours_ms: f64,
    /// Median ms of cuBLASLt blockwise.
    pub blockwise_ms: f64,
    /// Ours vs cuBLASLt blockwise on the first input set.
    pub check: Comparison,
}

impl FlushedRow {
    /// TFLOP/s (2·M·N·K per call) of a time in ms.
    pub fn tflops(&self, ms: f64) -> f64 {
        let (m, n, k) = self.shape;
        2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12
    }
}

/// Ours and cuBLASLt blockwise plans for every input set (tensor maps
/// encoded once, outside timing), writing `d_ours[i]` / `d_lt[i]`; ours
/// is the library's plan (`Fp8GemmPlan::new`: kernel and split-K by the
/// cost model) unless `forced` names a kernel (whole tiles, or `splits`
/// workers per unit).
#[allow(clippy::type_complexity)]
fn plans<'a>(
    gpu: &Gpu,
    kernels: &'a Kernels,
    (forced, splits): (Option<&'static str>, Option<u32>),
    ops: &'a [Fp8Operands],
    d_ours: &'a mut [CudaSlice<u16>],
    d_lt: &'a mut [CudaSlice<u16>],
    mnk: (usize, usize, usize),
) -> Result<(Vec<Fp8GemmPlan<'a>>, Vec<LtFp8Plan<'a>>)> {
    let mut ours = Vec::with_capacity(ops.len());
    let mut lt = Vec::with_capacity(ops.len());
    for ((o, d), dl) in ops.iter().zip(d_ours.iter_mut()).zip(d_lt.iter_mut()) {
        let mut plan = match forced {
            Some(kernel) => Fp8GemmPlan::with_kernel(
                gpu,
                kernels,
                kernel,
                &o.a,
                &o.b,
                &o.a_scales,
                &o.b_scales,
                d,
                mnk,
            )?,
            None => Fp8GemmPlan::new(gpu, kernels, &o.a, &o.b, &o.a_scales, &o.b_scales, d, mnk)?,
        };
        if let Some(s) = splits {
            plan.set_split_k(gpu, s)?;
        }
        ours.push(plan);
        lt.push(LtFp8Plan::new(
            gpu,
            LtScaling::Blockwise,
            &o.a,
            &o.b,
            &o.a_scales,
            &o.b_scales,
            dl,
            mnk,
        )?);
    }
    Ok((ours, lt))
}

/// Times ours (the library's plan) and cuBLASLt blockwise on `(m, n, k)`
/// by the anchor's method (module doc).
pub fn bench_shape_flushed(
    gpu: &Gpu,
    kernels: &Kernels,
    mnk: (usize, usize, usize),
) -> Result<FlushedRow> {
    bench_shape_flushed_with(gpu, kernels, mnk, None)
}

/// [`bench_shape_flushed`] with ours forced to `forced` (one of
/// `gemm::fp8::VARIANTS`, whole tiles) when it is `Some`.
pub fn bench_shape_flushed_with(
    gpu: &Gpu,
    kernels: &Kernels,
    mnk: (usize, usize, usize),
    forced: Option<&'static str>,
) -> Result<FlushedRow> {
    bench_shape_flushed_split(gpu, kernels, mnk, forced, None)
}

/// [`bench_shape_flushed_with`] with `splits` workers per unit
/// (`Fp8GemmPlan::set_split_k`) when it is `Some`.
pub fn bench_shape_flushed_split(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    forced: Option<&'static str>,
    splits: Option<u32>,
) -> Result<FlushedRow> {
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let set_bytes = m * k + n * k + 2 * m * n;
    let sets = FLUSH_BYTES.div_ceil(set_bytes).clamp(2, 8);
    let stream = gpu.stream();
    let ops: Vec<Fp8Operands> = (0..sets)
        .map(|_| anchor_operands(gpu, (m, n, k), &mut rng))
        .collect::<Result<_>>()?;
    let mut d_ours: Vec<_> = (0..sets)
        .map(|_| stream.clone_htod(&vec![POISON_BF16; m * n]))
        .collect::<std::result::Result<_, _>>()?;
    let mut d_lt: Vec<_> = (0..sets)
        .map(|_| stream.clone_htod(&vec![POISON_BF16; m * n]))
        .collect::<std::result::Result<_, _>>()?;
    let mut flush = stream.alloc_zeros::<u8>(FLUSH_BYTES)?;
    {
        let (ours, lt) = plans(
            gpu,
            kernels,
            (forced, splits),
            &ops,
            &mut d_ours,
            &mut d_lt,
            (m, n, k),
        )?;
        ours[0].run(gpu)?;
        lt[0].run(gpu)?;
        gpu.synchronize()?;
    }
    let check = Comparison::new(
        &stream.clone_dtoh(&d_ours[0])?,
        &transposed_f64(&stream.clone_dtoh(&d_lt[0])?, m, n),
    );
    let (ours, lt) = plans(
        gpu,
        kernels,
        (forced, splits),
        &ops,
        &mut d_ours,
        &mut d_lt,
        (m, n, k),
    )?;
    // One implementation at a time, as the anchor times each; the memset
    // before each call keeps the GPU busy while the call is enqueued.
    let mut timer = QueuedTimer::<2>::new();
    for slot in 0..2 {
        for r in 0..WARMUP + REPS {
            stream.memset_zeros(&mut flush)?;
            let i = r % sets;
            if slot == 0 {
                timer.time(gpu, 0, || ours[i].run(gpu))?;
            } else {
                timer.time(gpu, 1, || lt[i].run(gpu))?;
            }
        }
    }
    let [t_ours, t_lt] = timer.finish(gpu, WARMUP)?;
    let (ours_ms, blockwise_ms) = (median_mean_of_middle(t_ours), median_mean_of_middle(t_lt));
    let (kernel, splits) = (ours[0].kernel_name(), ours[0].split_k().unwrap_or(1));
    Ok(FlushedRow {
        shape: (m, n, k),
        kernel,
        splits,
        sets,
        ours_ms,
        blockwise_ms,
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 1×128 block of A and 128×128 block of B is quantized so its
    /// largest magnitude is e4m3's 448 (scale = amax / 448), every scale
    /// is positive and finite, the ragged last block row of B (N = 200)
    /// included; the same seed gives the same operands.
    #[test]
    fn anchor_operands_quantize_every_block_to_448() {
        use baton_runtime::gemm::fp8::e4m3_to_f32;
        let (m, n, k) = (37, 200, 384);
        let ops = anchor_host_operands((m, n, k), &mut XorShift::new(11));
        assert_eq!(ops, anchor_host_operands((m, n, k), &mut XorShift::new(11)));
        assert_ne!(ops, anchor_host_operands((m, n, k), &mut XorShift::new(12)));
        let (kb, nb) = (k / 128, n.div_ceil(128));
        assert_eq!((ops.a_scales.len(), ops.b_scales.len()), (kb * m, nb * kb));
        assert!(
            ops.a_scales
                .iter()
                .chain(&ops.b_scales)
                .all(|s| s.is_finite() && *s > 0.0)
        );
        let amax = |xs: &mut dyn Iterator<Item = u8>| {
            xs.map(|q| e4m3_to_f32(q).abs()).fold(0f32, f32::max)
        };
        for i in 0..m {
            for b in 0..kb {
                let row = &ops.a[i * k + b * 128..i * k + b * 128 + 128];
                assert_eq!(amax(&mut row.iter().copied()), 448.0, "A row {i} block {b}");
            }
        }
        for bn in 0..nb {
            for bk in 0..kb {
                let rows = (n - bn * 128).min(128);
                let mut it = (0..rows).flat_map(|r| {
                    let start = (bn * 128 + r) * k + bk * 128;
                    ops.b[start..start + 128].iter().copied()
                });
                assert_eq!(amax(&mut it), 448.0, "B block ({bn}, {bk})");
            }
        }
        // Dequantized, each block's magnitude follows its 2^e draw: amax /
        // e of 128 (A) or 16384 (B) normals lies in 1.5 .. 6.5, so the
        // scales span the draws' 2^-4 .. 2^4 (times 448 / amax).
        let (lo, hi) = ops
            .a_scales
            .iter()
            .chain(&ops.b_scales)
            .fold((f32::MAX, 0f32), |(lo, hi), s| (lo.min(*s), hi.max(*s)));
        assert!(lo * 448.0 < 1.0 && hi * 448.0 > 16.0, "scales {lo}..{hi}");
    }

    #[test]
    fn median_is_pythons() {
        assert_eq!(median_mean_of_middle(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_mean_of_middle(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median_mean_of_middle(Vec::new()).is_nan());
    }

    #[test]
    fn normals_have_unit_variance_and_magnitudes_span_2_pow_4() {
        let mut rng = XorShift::new(7);
        let xs: Vec<f32> = (0..200_000).map(|_| normal(&mut rng)).collect();
        let mean = xs.iter().sum::<f32>() / xs.len() as f32;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / xs.len() as f32;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
        let mut seen = [false; 9];
        for _ in 0..1000 {
            let e = block_magnitude(&mut rng).log2().round() as i32;
            seen[(e + 4) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s), "every exponent -4..=4 drawn");
        assert_eq!(scale_of(448.0), 1.0);
        assert_eq!(scale_of(0.0), 1e-4 / 448.0);
    }
}
