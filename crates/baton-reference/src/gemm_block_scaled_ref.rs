//! cuBLASLt reference for the sm_100a block-scaled GEMMs
//! ([`baton_runtime::gemm::block_scaled`], issue #8): MXFP8 (e4m3 elements,
//! `CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0`) and NVFP4 (packed e2m1,
//! `CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3`), D bf16, f32 accumulation,
//! through cudarc's cuBLASLt bindings; the checks (against f64 of the
//! dequantized inputs, against cuBLASLt) and the side-by-side benchmark that
//! `baton bench gemm-block-scaled` and the GPU tests run.
//!
//! **Never run on a GPU so far** (no Blackwell GPU here): cuBLASLt runs
//! these formats only on Blackwell, and [`LtBlockScaledPlan::new`] refuses
//! any other GPU with a typed error before calling cuBLASLt.
//!
//! # Operand order
//!
//! cuBLASLt is column-major and runs narrow formats as "TN". Ours is
//! `D (M×N, row-major) = A (M×K) · B (N×K)ᵀ`, both K-major. Row-major D is
//! column-major `Dᵀ (N×M) = B · Aᵀ`, so the plan passes **our B as
//! cuBLASLt's A** (`TRANSA = T`, a K×N column-major matrix, `ld = K`) and
//! **our A as cuBLASLt's B** (`TRANSB = N`, K×M, `ld = K`), D as N×M with
//! `ld = N`: cuBLASLt's D then has our row-major layout, compared element
//! by element without a transpose. The scale pointers swap with the
//! operands (`A_SCALE_POINTER` = our B's scale factors).
//!
//! # Scale-factor layout
//!
//! cuBLASLt's block scales ("1D block scaling factors layout",
//! <https://docs.nvidia.com/cuda/cublas/index.html#d-block-scaling-factors-layout>)
//! are, for an operand with `outer` rows (M or N) and `sf_inner` = K / VEC
//! scale columns, a tensor padded to whole 128 × 4 tiles of 512 bytes, tiles
//! ordered with the K tiles of one 128-row block contiguous, and inside a
//! tile row `r`, column `c` at `16·(r % 32) + 4·(r / 32) + c`
//! ([`cublaslt_sf_offset`]; transcribed from NVIDIA's nvmath-python
//! `_get_block_scale_offset`, which cites that section, and PyTorch/torchao's
//! `to_blocked`). That is exactly [`baton::block_scale::SfLayout`] (the
//! tcgen05 128×4 atom layout [`QuantizedMatrix`](baton_runtime::block_scaled::QuantizedMatrix) produces, zero padding
//! included), so the scale factors go to cuBLASLt as they are, with no
//! re-layout; a unit test below checks the two index functions agree.

use crate::gemm_block_scaled_check::random_operand;
#[cfg(test)]
use crate::gemm_block_scaled_check::random_values;
use crate::gemm_check::{Comparison, POISON_BF16};
use crate::random::XorShift;
use crate::timing::{QueuedTimer, median};
use crate::{Error, Result};
use baton::block_scale::{Mxfp8, Nvfp4, SF_ATOM_BYTES, SF_ATOM_COLS, SF_ATOM_ROWS};
use baton_runtime::block_scaled::BlockScaledError;
use baton_runtime::gemm::block_scaled::{
    BlockScaledGemmFormat, BlockScaledGemmPlan, DeviceQuantized,
};
use baton_runtime::gemm::{GemmError, GemmShapeError, bf16_to_f32};
use baton_runtime::{Gpu, Kernels, Target};
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as ls;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::ffi::c_void;

/// Workspace cuBLASLt may use.
const WORKSPACE_BYTES: usize = 32 << 20;

/// A block-scaled format cuBLASLt runs: its element type and scale mode.
pub trait LtBlockScaledFormat: BlockScaledGemmFormat {
    /// cuBLASLt's element type of A and B.
    const LT_ELEM: ls::cudaDataType;
    /// cuBLASLt's scale mode of A and B.
    const LT_SCALE_MODE: ls::cublasLtMatmulMatrixScale_t;
}

impl LtBlockScaledFormat for Mxfp8 {
    const LT_ELEM: ls::cudaDataType = ls::cudaDataType::CUDA_R_8F_E4M3;
    const LT_SCALE_MODE: ls::cublasLtMatmulMatrixScale_t =
        ls::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
}

impl LtBlockScaledFormat for Nvfp4 {
    const LT_ELEM: ls::cudaDataType = ls::cudaDataType::CUDA_R_4F_E2M1;
    const LT_SCALE_MODE: ls::cublasLtMatmulMatrixScale_t =
        ls::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
}

/// Byte offset of the scale of row `outer` (M or N), scale column `inner`
/// (K elements `inner·VEC..`) in cuBLASLt's block-scale tensor of an
/// operand with `sf_inner` scale columns (K / VEC) — the cuBLAS
/// documentation's formula, written independently of
/// [`baton::block_scale::SfLayout`]: tile `(outer / 128, inner / 4)` at
/// `128 · (4·(inner / 4) + (outer / 128) · sf_inner_padded)` with the inner
/// dimension padded to a multiple of 4, then `16·(outer % 32) +
/// 4·((outer % 128) / 32) + inner % 4` inside the tile.
///
/// ```
/// use baton_reference::gemm_block_scaled_ref::cublaslt_sf_offset;
/// // nvmath-python's documented examples (NVFP4, A of 128 × 128: 8 scale columns).
/// assert_eq!(cublaslt_sf_offset(5, 2, 8), 82);
/// assert_eq!(cublaslt_sf_offset(5, 5, 8), 593);
/// ```
pub const fn cublaslt_sf_offset(outer: usize, inner: usize, sf_inner: usize) -> usize {
    let padded = sf_inner.div_ceil(SF_ATOM_COLS) * SF_ATOM_COLS;
    let tile = (inner / SF_ATOM_COLS) * SF_ATOM_COLS + (outer / SF_ATOM_ROWS) * padded;
    let r = outer % SF_ATOM_ROWS;
    tile * (SF_ATOM_BYTES / SF_ATOM_COLS) + 16 * (r % 32) + 4 * (r / 32) + inner % SF_ATOM_COLS
}

/// Bytes of cuBLASLt's block-scale tensor for `outer` rows × `sf_inner`
/// scale columns: both padded to whole 128 × 4 tiles.
///
/// ```
/// use baton_reference::gemm_block_scaled_ref::cublaslt_sf_bytes;
/// assert_eq!(cublaslt_sf_bytes(200, 6), 2 * 2 * 512);
/// ```
pub const fn cublaslt_sf_bytes(outer: usize, sf_inner: usize) -> usize {
    outer.div_ceil(SF_ATOM_ROWS) * sf_inner.div_ceil(SF_ATOM_COLS) * SF_ATOM_BYTES
}

/// Checks a problem for the cuBLASLt reference of format `F` without a GPU:
/// the GPU's `target` must be sm_100a (cuBLASLt runs these formats only on
/// Blackwell), M, N, K positive, N a multiple of 8 (16-byte rows of bf16 D),
/// K a multiple of `4·VEC` (whole 128 × 4 scale tiles along K: 128 for
/// MXFP8, 64 for NVFP4), D of `M·N` values. Errors: [`GemmError::WrongTarget`],
/// [`Error::LtBlockScaledShape`], [`GemmShapeError::WrongLength`].
///
/// ```
/// use baton::block_scale::Nvfp4;
/// use baton_runtime::Target;
/// use baton_reference::gemm_block_scaled_ref::validate;
/// assert!(validate::<Nvfp4>(Target::Sm100a, (256, 256, 512), 256 * 256).is_ok());
/// assert!(validate::<Nvfp4>(Target::Sm90a, (256, 256, 512), 256 * 256).is_err());
/// ```
pub fn validate<F: LtBlockScaledFormat>(
    target: Target,
    (m, n, k): (usize, usize, usize),
    d_len: usize,
) -> Result<()> {
    if target != Target::Sm100a {
        // cuBLASLt's block-scaled GEMMs need Blackwell.
        return Err(baton_runtime::Error::from(GemmError::WrongTarget {
            kernel: format!("the cuBLASLt {} reference", F::NAME),
            runs_on: Target::Sm100a,
            gpu: target,
        })
        .into());
    }
    let k_multiple = 4 * F::VEC;
    if m == 0 || n == 0 || k == 0 || !n.is_multiple_of(8) || !k.is_multiple_of(k_multiple) {
        return Err(Error::LtBlockScaledShape {
            format: F::NAME,
            mnk: (m, n, k),
            k_multiple,
        });
    }
    if d_len != m * n {
        return Err(baton_runtime::Error::from(GemmShapeError::WrongLength {
            operand: "D",
            expected: m * n,
            got: d_len,
        })
        .into());
    }
    Ok(())
}

/// A cuBLASLt block-scaled matmul bound to its operands: descriptors built
/// and the algorithm chosen once, so [`run`](Self::run) only enqueues
/// `D = A · Bᵀ` (row-major D, see the module documentation).
pub struct LtBlockScaledPlan<'a, F> {
    handle: ls::cublasLtHandle_t,
    desc: ls::cublasLtMatmulDesc_t,
    layouts: [ls::cublasLtMatrixLayout_t; 3],
    algo: ls::cublasLtMatmulAlgo_t,
    workspace: CudaSlice<u8>,
    /// cuBLASLt's A (our B), B (our A), D.
    ptrs: (u64, u64, u64),
    _operands: std::marker::PhantomData<(
        &'a DeviceQuantized<F>,
        &'a DeviceQuantized<F>,
        &'a mut CudaSlice<u16>,
    )>,
}

fn lt_err(call: &'static str) -> impl Fn(lt::CublasError) -> Error {
    move |status| Error::CublasLt { call, status }
}

impl<'a, F: LtBlockScaledFormat> LtBlockScaledPlan<'a, F> {
    /// Validates ([`validate`]; A and B of equal K), builds the descriptors
    /// for `D = A · Bᵀ` (D row-major M×N bf16) with `F`'s scale mode, and
    /// asks cuBLASLt for its best algorithm. Errors: typed refusals (off sm_100a,
    /// shapes: see [`validate`]; [`BlockScaledError::KMismatch`]) and
    /// [`Error::CublasLt`] for cuBLASLt failures (no
    /// algorithm: the message names the format and shape), driver errors.
    pub fn new(
        gpu: &Gpu,
        a: &'a DeviceQuantized<F>,
        b: &'a DeviceQuantized<F>,
        d: &'a mut CudaSlice<u16>,
    ) -> Result<Self> {
        let (m, n, k) = (a.rows(), b.rows(), a.k());
        if b.k() != k {
            return Err(baton_runtime::Error::from(BlockScaledError::KMismatch {
                a_k: k,
                b_k: b.k(),
            })
            .into());
        }
        validate::<F>(gpu.target(), (m, n, k), d.len())?;
        let stream = gpu.stream();
        let (a_ptr, _s0) = a.data().device_ptr(stream);
        let (b_ptr, _s1) = b.data().device_ptr(stream);
        let (sa_ptr, _s2) = a.sf().device_ptr(stream);
        let (sb_ptr, _s3) = b.sf().device_ptr(stream);
        let d_ptr = {
            let (p, _s) = d.device_ptr_mut(stream);
            p
        };
        let workspace = stream.alloc_zeros::<u8>(WORKSPACE_BYTES)?;
        let handle = lt::create_handle().map_err(lt_err("create"))?;
        // From here on, Drop releases whatever was created.
        let mut plan = Self {
            handle,
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 3],
            // SAFETY: plain data, overwritten by the heuristic below.
            algo: unsafe { std::mem::zeroed() },
            workspace,
            ptrs: (b_ptr, a_ptr, d_ptr),
            _operands: std::marker::PhantomData,
        };
        plan.desc = lt::create_matmul_desc(
            ls::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ls::cudaDataType::CUDA_R_32F,
        )
        .map_err(lt_err("matmul desc"))?;
        use ls::cublasLtMatmulDescAttributes_t as A;
        let set = |attr: A, v: *const c_void, size: usize| {
            // SAFETY: `plan.desc` is live; `v` points at `size` bytes.
            unsafe { lt::set_matmul_desc_attribute(plan.desc, attr, v, size) }
                .map_err(lt_err("set matmul attribute"))
        };
        let (t, nop) = (1i32, 0i32);
        set(A::CUBLASLT_MATMUL_DESC_TRANSA, (&t as *const i32).cast(), 4)?;
        set(
            A::CUBLASLT_MATMUL_DESC_TRANSB,
            (&nop as *const i32).cast(),
            4,
        )?;
        // cuBLASLt's A is our B: its scales are our B's.
        let (lt_sa, lt_sb) = (sb_ptr as *const c_void, sa_ptr as *const c_void);
        set(
            A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
            (&lt_sa as *const *const c_void).cast(),
            8,
        )?;
        set(
            A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
            (&lt_sb as *const *const c_void).cast(),
            8,
        )?;
        let mode = F::LT_SCALE_MODE;
        for attr in [
            A::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
            A::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
        ] {
            set(attr, &mode as *const _ as *const c_void, 4)?;
        }
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        plan.layouts[0] =
            lt::create_matrix_layout(F::LT_ELEM, k64, n64, k as i64).map_err(lt_err("layout A"))?;
        plan.layouts[1] =
            lt::create_matrix_layout(F::LT_ELEM, k64, m64, k as i64).map_err(lt_err("layout B"))?;
        plan.layouts[2] =
            lt::create_matrix_layout(ls::cudaDataType::CUDA_R_16BF, n64, m64, n as i64)
                .map_err(lt_err("layout D"))?;
        let pref = lt::create_matmul_pref().map_err(lt_err("preference"))?;
        let ws = WORKSPACE_BYTES;
        // SAFETY: `pref` is live; the attribute is a size_t.
        let heuristic = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                ls::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&ws as *const usize).cast(),
                std::mem::size_of::<usize>(),
            )
            .and_then(|()| {
                lt::get_matmul_algo_heuristic(
                    plan.handle,
                    plan.desc,
                    plan.layouts[0],
                    plan.layouts[1],
                    plan.layouts[2],
                    plan.layouts[2],
                    pref,
                )
            })
        };
        // SAFETY: created above, not used after.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        plan.algo = heuristic
            .map_err(|status| Error::CublasLtNoAlgorithm {
                gemm: F::NAME,
                mnk: (m, n, k),
                status,
            })?
            .algo;
        Ok(plan)
    }

    /// Enqueues `D = A · Bᵀ` (row-major D) on the GPU's stream.
    pub fn run(&self, gpu: &Gpu) -> Result<()> {
        let (alpha, beta) = (1f32, 0f32);
        let (a, b, d) = self.ptrs;
        let stream = gpu.stream();
        let (ws, _s) = self.workspace.device_ptr(stream);
        // SAFETY: descriptors, algorithm and workspace are live; the
        // operand and scale pointers name buffers validated in `new` and
        // borrowed for the plan's lifetime.
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                a as *const c_void,
                self.layouts[0],
                b as *const c_void,
                self.layouts[1],
                d as *const c_void,
                self.layouts[2],
                d as *mut c_void,
                self.layouts[2],
                &self.algo,
                ws as *mut c_void,
                WORKSPACE_BYTES,
                stream.cu_stream() as ls::cudaStream_t,
            )
        }
        .map_err(lt_err("matmul"))
    }
}

impl<F> Drop for LtBlockScaledPlan<'_, F> {
    fn drop(&mut self) {
        // SAFETY: each handle was created by this plan (or is null) and is
        // destroyed once.
        unsafe {
            for l in self.layouts {
                if !l.is_null() {
                    let _ = lt::destroy_matrix_layout(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}

/// Runs ours and cuBLASLt on the same fresh random operands of format `F`
/// (`D = A·Bᵀ`, NaN-poisoned outputs) and compares ours with cuBLASLt's
/// result. Errors: cuBLASLt's output has non-finite values
/// ([`Error::NonFiniteReference`]); plan and driver errors.
pub fn check_vs_cublaslt<F: LtBlockScaledFormat>(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
) -> Result<Comparison> {
    validate::<F>(gpu.target(), (m, n, k), m * n)?;
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = DeviceQuantized::upload(gpu, &random_operand::<F>(m, k, &mut rng)?)?;
    let b = DeviceQuantized::upload(gpu, &random_operand::<F>(n, k, &mut rng)?)?;
    let stream = gpu.stream();
    let mut d_ours = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let mut d_lt = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    BlockScaledGemmPlan::new(gpu, kernels, &a, &b, None, &mut d_ours)?.run(gpu, 1.0, 0.0)?;
    LtBlockScaledPlan::new(gpu, &a, &b, &mut d_lt)?.run(gpu)?;
    gpu.synchronize()?;
    let theirs: Vec<f64> = stream
        .clone_dtoh(&d_lt)?
        .into_iter()
        .map(|x| bf16_to_f32(x) as f64)
        .collect();
    if let Some(i) = theirs.iter().position(|x| !x.is_finite()) {
        return Err(Error::NonFiniteReference {
            reference: "cuBLASLt",
            gemm: F::NAME,
            row: i / n,
            col: i % n,
            value: theirs[i],
        });
    }
    Ok(Comparison::new(&stream.clone_dtoh(&d_ours)?, &theirs))
}

/// Median times of one shape and format: ours and cuBLASLt.
#[derive(Clone, Debug)]
pub struct BlockScaledBenchRow {
    /// `"mxfp8"` or `"nvfp4"`.
    pub format: &'static str,
    /// (M, N, K).
    pub mnk: (usize, usize, usize),
    /// CTAs ours launched.
    pub grid: u32,
    /// Ours, ms.
    pub ours_ms: f64,
    /// cuBLASLt, ms.
    pub cublaslt_ms: f64,
}

impl BlockScaledBenchRow {
    /// TFLOP/s (2·M·N·K per run) of a time in ms.
    ///
    /// ```
    /// use baton_reference::gemm_block_scaled_ref::BlockScaledBenchRow;
    /// let r = BlockScaledBenchRow {
    ///     format: "mxfp8", mnk: (1000, 1000, 1000), grid: 1, ours_ms: 1.0, cublaslt_ms: 2.0,
    /// };
    /// assert!((r.tflops(1.0) - 2.0).abs() < 1e-12); // 2·10⁹ flops in 1 ms
    /// assert_eq!(r.ratio(), 2.0);
    /// ```
    pub fn tflops(&self, ms: f64) -> f64 {
        let (m, n, k) = self.mnk;
        2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e12
    }

    /// Ours / cuBLASLt throughput (> 1: ours is faster).
    pub fn ratio(&self) -> f64 {
        self.cublaslt_ms / self.ours_ms
    }
}

/// Times ours and cuBLASLt (`D = A·Bᵀ`, format `F`) on the same random
/// operands, interleaved per repetition (event-timed, 3 warm-up rounds),
/// medians of `reps` (at least 1). `progress` is called after each timed
/// pair.
pub fn bench_shape<F: LtBlockScaledFormat>(
    gpu: &Gpu,
    kernels: &Kernels,
    (m, n, k): (usize, usize, usize),
    reps: usize,
    mut progress: impl FnMut(),
) -> Result<BlockScaledBenchRow> {
    validate::<F>(gpu.target(), (m, n, k), m * n)?;
    let reps = reps.max(1);
    let mut rng = XorShift::new(XorShift::seed_from_time());
    let a = DeviceQuantized::upload(gpu, &random_operand::<F>(m, k, &mut rng)?)?;
    let b = DeviceQuantized::upload(gpu, &random_operand::<F>(n, k, &mut rng)?)?;
    let stream = gpu.stream();
    let mut d_ours = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let mut d_lt = stream.clone_htod(&vec![POISON_BF16; m * n])?;
    let ours = BlockScaledGemmPlan::new(gpu, kernels, &a, &b, None, &mut d_ours)?;
    let theirs = LtBlockScaledPlan::new(gpu, &a, &b, &mut d_lt)?;
    // Queued back to back, each launch between its own events (see
    // `timing`): neither side's host launch overhead is timed.
    let mut timer = QueuedTimer::<2>::new();
    for rep in 0..reps + 3 {
        timer.time(gpu, 0, || ours.run(gpu, 1.0, 0.0))?;
        timer.time(gpu, 1, || theirs.run(gpu))?;
        if rep >= 3 {
            progress();
        }
    }
    let [t_ours, t_lt] = timer.finish(gpu, 3)?;
    Ok(BlockScaledBenchRow {
        format: F::NAME,
        mnk: (m, n, k),
        grid: ours.grid(),
        ours_ms: median(t_ours),
        cublaslt_ms: median(t_lt),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton::block_scale::{BlockScaleFormat, SfLayout};
    use baton_runtime::block_scaled::QuantizedMatrix;

    /// cuBLASLt's block-scale layout (the documented formula) is the one
    /// `QuantizedMatrix` writes: same offset for every (row, scale column)
    /// of the padded tensor, same size — no re-layout needed.
    #[test]
    fn cublaslt_scale_layout_is_the_tcgen05_atom_layout() {
        for (rows, sf_cols) in [
            (128, 4),
            (2048, 64),
            (2048, 128),
            (200, 6),
            (1, 1),
            (520, 33),
            (384, 12),
        ] {
            let l = SfLayout::new(rows, sf_cols);
            assert_eq!(
                l.bytes(),
                cublaslt_sf_bytes(rows, sf_cols),
                "{rows}x{sf_cols}"
            );
            for r in 0..l.row_blocks() * 128 {
                for c in 0..l.k_atoms() * 4 {
                    assert_eq!(
                        l.offset(r, c),
                        cublaslt_sf_offset(r, c, sf_cols),
                        "{rows}x{sf_cols}: ({r}, {c})"
                    );
                }
            }
        }
    }

    /// torchao's `to_blocked` (the cuBLAS layout as PyTorch's
    /// `_scaled_mm` feeds it): a row-major `rows × cols` scale matrix,
    /// padded, viewed as `(rb, 128, cb, 4)`, permuted to `(rb, cb, 128, 4)`,
    /// each tile `(4, 32, 4)` transposed to `(32, 4, 4)`, flattened.
    fn to_blocked(scales: &[u8], rows: usize, cols: usize) -> Vec<u8> {
        let (rb, cb) = (rows.div_ceil(128), cols.div_ceil(4));
        let mut out = Vec::with_capacity(rb * cb * 512);
        for i in 0..rb {
            for j in 0..cb {
                for r32 in 0..32 {
                    for r4 in 0..4 {
                        for c in 0..4 {
                            let (r, col) = (i * 128 + r4 * 32 + r32, j * 4 + c);
                            out.push(if r < rows && col < cols {
                                scales[r * cols + col]
                            } else {
                                0
                            });
                        }
                    }
                }
            }
        }
        out
    }

    fn quantized_scales_match_to_blocked<F: baton_runtime::block_scaled::Quantize>(
        rows: usize,
        k: usize,
    ) {
        let mut rng = XorShift::new(7);
        let q = QuantizedMatrix::<F>::quantize(&random_values(rows * k, 4.0, &mut rng), rows, k)
            .unwrap();
        let cols = k / F::VEC;
        // The row-major scale matrix, read through the element accessor.
        let plain: Vec<u8> = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| {
                use baton::numeric::SmallFloat;
                q.parts(r, c * F::VEC).1.code() as u8
            })
            .collect();
        assert_eq!(
            q.sf(),
            &to_blocked(&plain, rows, cols)[..],
            "{} {rows}x{k}",
            <F as BlockScaleFormat>::NAME
        );
    }

    #[test]
    fn quantized_scale_factors_are_what_cublaslt_reads() {
        quantized_scales_match_to_blocked::<Mxfp8>(300, 640);
        quantized_scales_match_to_blocked::<Mxfp8>(128, 128);
        quantized_scales_match_to_blocked::<Nvfp4>(200, 160);
        quantized_scales_match_to_blocked::<Nvfp4>(257, 1024);
    }

    #[test]
    fn validation_says_what_is_allowed() {
        let sm100 = Target::Sm100a;
        assert!(validate::<Mxfp8>(sm100, (2048, 2048, 2048), 2048 * 2048).is_ok());
        assert!(validate::<Nvfp4>(sm100, (1, 8, 64), 8).is_ok());
        let msg = |e: Error| e.to_string();
        let e = msg(validate::<Mxfp8>(Target::Sm90a, (256, 256, 256), 256 * 256).unwrap_err());
        assert!(
            e.contains("mxfp8") && e.contains("sm_100a") && e.contains("sm_90a"),
            "{e}"
        );
        let e = msg(validate::<Mxfp8>(sm100, (256, 256, 160), 256 * 256).unwrap_err());
        assert!(
            e.contains("multiple of 128") && e.contains("256x256x160"),
            "{e}"
        );
        let e = msg(validate::<Nvfp4>(sm100, (256, 256, 96), 256 * 256).unwrap_err());
        assert!(e.contains("multiple of 64"), "{e}");
        let e = msg(validate::<Nvfp4>(sm100, (256, 260, 128), 256 * 260).unwrap_err());
        assert!(e.contains("N a multiple of 8"), "{e}");
        assert!(validate::<Nvfp4>(sm100, (0, 8, 64), 0).is_err());
        let e = msg(validate::<Nvfp4>(sm100, (16, 8, 64), 100).unwrap_err());
        assert!(e.contains("128") && e.contains("100"), "{e}");
    }

    #[test]
    fn formats_map_to_cublaslt_types_and_scale_modes() {
        assert_eq!(Mxfp8::LT_ELEM as u32, 28); // CUDA_R_8F_E4M3
        assert_eq!(Nvfp4::LT_ELEM as u32, 33); // CUDA_R_4F_E2M1
        assert_eq!(Mxfp8::LT_SCALE_MODE as u32, 2); // VEC32_UE8M0
        assert_eq!(Nvfp4::LT_SCALE_MODE as u32, 1); // VEC16_UE4M3
    }
}
