//! Host API of the sm_100a block-scaled GEMMs (MXFP8, NVFP4; issue #8):
//! `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` with A (M×K) and B (N×K)
//! quantized by [`QuantizedMatrix`] (elements K-major, scale factors in the
//! tcgen05 atom layout), C and D bf16 M×N row-major, f32 accumulation.
//!
//! The kernels (`baton_sm100_gemm_mxfp8` / `baton_sm100_gemm_nvfp4`, role
//! programs in `kernels/roles/src/gemm_sm100_block_scaled.rs`) exist only
//! in `baton_sm100a.ptx`; a plan on any other GPU is a typed error.
//! **Never run on a GPU so far** (no Blackwell GPU here): the role programs
//! are verified on the CPU simulation, the kernels assembled by ptxas.
//!
//! ```no_run
//! use baton::block_scale::Mxfp8;
//! use baton_runtime::block_scaled::QuantizedMatrix;
//! use baton_runtime::gemm::block_scaled::{BlockScaledGemmPlan, DeviceQuantized};
//! use baton_runtime::{Gpu, Variant};
//!
//! let gpu = Gpu::new(0)?;
//! let kernels = gpu.load_kernels(Variant::Release)?;
//! let (m, n, k) = (256, 128, 512);
//! let qa = QuantizedMatrix::<Mxfp8>::quantize(&vec![0.5; m * k], m, k).unwrap();
//! let qb = QuantizedMatrix::<Mxfp8>::quantize(&vec![2.0; n * k], n, k).unwrap();
//! let (a, b) = (DeviceQuantized::upload(&gpu, &qa)?, DeviceQuantized::upload(&gpu, &qb)?);
//! let mut d = gpu.stream().alloc_zeros::<u16>(m * n)?;
//! BlockScaledGemmPlan::new(&gpu, &kernels, &a, &b, None, &mut d)?.run(&gpu, 1.0, 0.0)?;
//! gpu.synchronize()?;
//! # Ok::<(), baton_runtime::Error>(())
//! ```

use super::ranges_overlap;
use crate::block_scaled::{BlockScaledError, Quantize, QuantizedMatrix};
use crate::error::{GemmError, GemmShapeError};
use crate::tensor_map::{self, DeviceTensorMaps, encode, encode_matrix};
use crate::{Gpu, Kernels, Result, Target, TypedKernel};
use baton::block_scale::{Mxfp8, Nvfp4};
use baton::kernel::KernelSpec;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton_kernels_abi::gemm_sm100::{self, BlockScaledGemmParams};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// CTA tile rows and columns of both kernels (`gemm_sm100_block_scaled::BM`
/// and `BN`).
pub const TILE: usize = 128;
/// Threads per CTA (the kernels' spec).
pub const THREADS: u32 = gemm_sm100::GEMM_MXFP8.threads;
/// Rasterization group (tile rows) the plans start with.
pub const DEFAULT_GROUP_M: u32 = 8;

/// A format the sm_100a block-scaled GEMM runs: its kernel's spec (name,
/// threads, and the dynamic shared memory, which the module records as the
/// device's `size_of` the layout) and K per pipeline stage.
pub trait BlockScaledGemmFormat: Quantize {
    /// The kernel's spec in `baton_sm100a.ptx`.
    const SPEC: KernelSpec<BlockScaledGemmParams>;
    /// The kernel's name.
    const KERNEL: &'static str = Self::SPEC.name;
    /// K elements per stage (the TMA box: 128 bytes of elements per row).
    const BK: usize;
}

impl BlockScaledGemmFormat for Mxfp8 {
    const SPEC: KernelSpec<BlockScaledGemmParams> = gemm_sm100::GEMM_MXFP8;
    const BK: usize = 128;
}

impl BlockScaledGemmFormat for Nvfp4 {
    const SPEC: KernelSpec<BlockScaledGemmParams> = gemm_sm100::GEMM_NVFP4;
    const BK: usize = 256;
}

/// Checks the shape of a block-scaled GEMM (A: M × K, B: N × K, C and D:
/// M × N bf16; `c_len` is `None` without C): M, N, K at least 1, N a
/// multiple of 8 (16-byte rows of bf16 C/D), M·N below 2^32, K below 2^31,
/// C and D of exactly M·N elements. (K's own rules, a multiple of 32 for
/// the quantized rows, are the quantizer's: [`BlockScaledError`].)
///
/// ```
/// use baton_runtime::gemm::{GemmShapeError, block_scaled::validate_shape};
/// assert!(validate_shape((128, 64, 256), None, 128 * 64).is_ok());
/// assert_eq!(
///     validate_shape((128, 60, 256), None, 128 * 60),
///     Err(GemmShapeError::RowNotAligned { dim: "N", value: 60 })
/// );
/// ```
pub fn validate_shape(
    (m, n, k): (usize, usize, usize),
    c_len: Option<usize>,
    d_len: usize,
) -> std::result::Result<(), GemmShapeError> {
    if m == 0 || n == 0 || k == 0 {
        return Err(GemmShapeError::EmptyDimension { mnk: (m, n, k) });
    }
    if !n.is_multiple_of(8) {
        return Err(GemmShapeError::RowNotAligned { dim: "N", value: n });
    }
    if m.checked_mul(n).is_none_or(|mn| u32::try_from(mn).is_err()) {
        return Err(GemmShapeError::OutputTooLarge { m, n });
    }
    if k >= 1 << 31 {
        return Err(GemmShapeError::TooLarge { mnk: (m, n, k) });
    }
    let check = |operand, got: usize| {
        if got == m * n {
            Ok(())
        } else {
            Err(GemmShapeError::WrongLength {
                operand,
                expected: m * n,
                got,
            })
        }
    };
    check("D", d_len)?;
    if let Some(c) = c_len {
        check("C", c)?;
    }
    Ok(())
}

/// A quantized operand on the GPU: its elements and scale factors (the
/// bytes of [`QuantizedMatrix::data`] / [`QuantizedMatrix::sf`]) and the
/// TMA descriptions the kernel loads them through (boxes of [`TILE`] rows
/// × one stage of K).
pub struct DeviceQuantized<F> {
    rows: usize,
    k: usize,
    data: CudaSlice<u8>,
    sf: CudaSlice<u8>,
    data_desc: TensorMapDesc,
    sf_desc: TensorMapDesc,
    format: std::marker::PhantomData<F>,
}

impl<F: BlockScaledGemmFormat> DeviceQuantized<F> {
    /// Copies `q` to the GPU (on its stream). Errors: [`Error::BlockScaled`](crate::Error::BlockScaled) when
    /// the layout cannot be loaded by the kernel's TMA (e.g. a row pitch
    /// that is not a multiple of 16 bytes: K must be a multiple of 32),
    /// driver errors.
    pub fn upload(gpu: &Gpu, q: &QuantizedMatrix<F>) -> Result<Self> {
        let stream = gpu.stream();
        let data = stream.clone_htod(q.data())?;
        let sf = stream.clone_htod(q.sf())?;
        let (dp, sp) = {
            let (d, _s1) = data.device_ptr(stream);
            let (s, _s2) = sf.device_ptr(stream);
            (d, s)
        };
        let data_desc = q.data_map("data", dp, TILE, F::BK)?;
        let sf_desc = q.sf_map("scale factors", sp, TILE, F::BK)?;
        Ok(Self {
            rows: q.rows(),
            k: q.k(),
            data,
            sf,
            data_desc,
            sf_desc,
            format: std::marker::PhantomData,
        })
    }

    /// Rows (M for A, N for B).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K (elements per row).
    pub fn k(&self) -> usize {
        self.k
    }

    /// The device elements.
    pub fn data(&self) -> &CudaSlice<u8> {
        &self.data
    }

    /// The device scale factors.
    pub fn sf(&self) -> &CudaSlice<u8> {
        &self.sf
    }
}

/// A block-scaled GEMM bound to its operands: shapes validated, tensor maps
/// encoded and uploaded once, so [`run`](Self::run) only launches.
pub struct BlockScaledGemmPlan<'a, F> {
    kernel: TypedKernel<BlockScaledGemmParams>,
    maps: DeviceTensorMaps,
    m: u32,
    n: u32,
    k: u32,
    has_c: bool,
    group_m: u32,
    grid: u32,
    _operands: std::marker::PhantomData<(
        &'a DeviceQuantized<F>,
        &'a CudaSlice<u16>,
        &'a mut CudaSlice<u16>,
    )>,
}

impl<'a, F: BlockScaledGemmFormat> BlockScaledGemmPlan<'a, F> {
    /// Validates the problem (A and B of equal K; C and D of `M·N` bf16, N
    /// a multiple of 8; D not overlapping A, B or their scale factors; an
    /// sm_100a GPU) and prepares the tensor maps of A, B, SFA, SFB, C
    /// (optional) and D. Errors: [`Error::GemmShape`](crate::Error::GemmShape), [`Error::Gemm`](crate::Error::Gemm) and
    /// [`Error::BlockScaled`](crate::Error::BlockScaled) for each refusal, driver
    /// errors.
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        a: &'a DeviceQuantized<F>,
        b: &'a DeviceQuantized<F>,
        c: Option<&'a CudaSlice<u16>>,
        d: &'a mut CudaSlice<u16>,
    ) -> Result<Self> {
        if gpu.target() != Target::Sm100a {
            return Err(GemmError::WrongTarget {
                kernel: F::KERNEL.into(),
                runs_on: Target::Sm100a,
                gpu: gpu.target(),
            }
            .into());
        }
        let (m, n, k) = (a.rows, b.rows, a.k);
        if b.k != k {
            return Err(BlockScaledError::KMismatch { a_k: k, b_k: b.k }.into());
        }
        validate_shape((m, n, k), c.map(|c| c.len()), d.len())?;
        let stream = gpu.stream();
        let d_ptr = {
            let (p, _sync) = d.device_ptr_mut(stream);
            p
        };
        let d_bytes = 2 * (m * n) as u64;
        for s in [&a.data, &a.sf, &b.data, &b.sf] {
            let (p, _sync) = s.device_ptr(stream);
            if ranges_overlap(d_ptr, d_bytes, p, s.len() as u64) {
                return Err(GemmError::OutputOverlapsInput {
                    inputs: "A, B and their scale factors",
                    may_alias_c: true,
                }
                .into());
            }
        }
        let c_ptr = c.map(|c| {
            let (p, _sync) = c.device_ptr(stream);
            p
        });
        let bf16 = |ptr| {
            encode_matrix(
                ptr,
                ElemType::BF16,
                m as u64,
                n as u64,
                TILE as u32,
                32,
                Swizzle::B64,
            )
        };
        let maps = [
            encode(&a.data_desc)?,
            encode(&b.data_desc)?,
            encode(&a.sf_desc)?,
            encode(&b.sf_desc)?,
            bf16(c_ptr.unwrap_or(d_ptr))?,
            bf16(d_ptr)?,
        ];
        let maps = tensor_map::upload(gpu, &maps)?;
        let kernel = kernels.kernel(&F::SPEC)?;
        let tiles = (m.div_ceil(TILE) * n.div_ceil(TILE)) as u32;
        Ok(Self {
            kernel,
            maps,
            m: m as u32,
            n: n as u32,
            k: k as u32,
            has_c: c.is_some(),
            group_m: DEFAULT_GROUP_M,
            grid: tiles.min(gpu.sm_count()).max(1),
            _operands: std::marker::PhantomData,
        })
    }

    /// Rasterization: tile rows per group (at least 1).
    pub fn set_group_m(&mut self, group_m: u32) {
        self.group_m = group_m.max(1);
    }

    /// CTAs launched: `min(tiles, SMs)` (persistent).
    pub fn grid(&self) -> u32 {
        self.grid
    }

    /// Enqueues `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` on the GPU's stream.
    /// `beta ≠ 0` needs a plan made with C ([`GemmShapeError::MissingC`]
    /// otherwise).
    pub fn run(&self, gpu: &Gpu, alpha: f32, beta: f32) -> Result<()> {
        if beta != 0.0 && !self.has_c {
            return Err(GemmShapeError::MissingC.into());
        }
        let m = &self.maps;
        let params = BlockScaledGemmParams {
            tma_a: m.ptr(0) as *const _,
            tma_b: m.ptr(1) as *const _,
            tma_sfa: m.ptr(2) as *const _,
            tma_sfb: m.ptr(3) as *const _,
            tma_c: m.ptr(4) as *const _,
            tma_d: m.ptr(5) as *const _,
            m: self.m,
            n: self.n,
            k: self.k,
            group_m: self.group_m,
            alpha,
            beta,
        };
        // SAFETY: the maps describe operands borrowed for the plan's
        // lifetime, validated in `new`; k ≥ 1, group_m ≥ 1.
        unsafe { self.kernel.launch(gpu.stream(), self.grid, &params) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_validation_names_each_rule() {
        assert_eq!(
            validate_shape((128, 64, 256), Some(128 * 64), 128 * 64),
            Ok(())
        );
        assert_eq!(
            validate_shape((0, 64, 256), None, 0),
            Err(GemmShapeError::EmptyDimension { mnk: (0, 64, 256) })
        );
        assert_eq!(
            validate_shape((128, 60, 256), None, 128 * 60),
            Err(GemmShapeError::RowNotAligned {
                dim: "N",
                value: 60
            })
        );
        assert_eq!(
            validate_shape((1 << 20, 1 << 13, 256), None, 0),
            Err(GemmShapeError::OutputTooLarge {
                m: 1 << 20,
                n: 1 << 13
            })
        );
        assert_eq!(
            validate_shape((8, 8, 1 << 31), None, 64),
            Err(GemmShapeError::TooLarge {
                mnk: (8, 8, 1 << 31)
            })
        );
        assert_eq!(
            validate_shape((8, 8, 32), None, 63),
            Err(GemmShapeError::WrongLength {
                operand: "D",
                expected: 64,
                got: 63
            })
        );
        assert_eq!(
            validate_shape((8, 8, 32), Some(65), 64),
            Err(GemmShapeError::WrongLength {
                operand: "C",
                expected: 64,
                got: 65
            })
        );
    }
}
