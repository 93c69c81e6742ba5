//! The sm_100a GEMMs (BF16; MXFP8 and NVFP4 block-scaled): parameter
//! structs and specs. Their shared layouts belong to the warp-role programs
//! of `baton-kernel-roles` (one source for the GPU and the CPU simulation).

use baton::arch::current::tma::TensorMap;
use baton::kernel::{KernelParams, KernelSpec};
use baton_kernel_roles::gemm_sm100::{self, GemmSmem};
use baton_kernel_roles::gemm_sm100_block_scaled::{self, Mxfp8GemmSmem, Nvfp4GemmSmem};

/// Parameters of [`GEMM_BF16`]: `D = alpha·A·Bᵀ + beta·C` (tensor maps in
/// global memory, as `baton_kernel_roles::gemm_sm100::GemmArgs` documents).
///
/// ```
/// let p = baton_kernels_abi::gemm_sm100::Sm100GemmParams {
///     tma_a: core::ptr::null(), tma_b: core::ptr::null(), tma_c: core::ptr::null(), tma_d: core::ptr::null(),
///     m: 256, n: 256, k: 64, group_m: 8, alpha: 1.0, beta: 0.0,
/// };
/// assert_eq!(p.group_m, 8);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Sm100GemmParams {
    /// A: bf16, dims {K, M}.
    pub tma_a: *const TensorMap,
    /// B: bf16, dims {K, N}.
    pub tma_b: *const TensorMap,
    /// C (read only when `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D.
    pub tma_d: *const TensorMap,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// Reduction length (≥ 1).
    pub k: u32,
    /// Tile rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
}
// SAFETY: repr(C) of raw pointers and numbers.
unsafe impl KernelParams for Sm100GemmParams {}

/// `baton_sm100_gemm_bf16`: 128×256×64 tiles, accumulators in TMEM.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_sm100::GEMM_BF16.threads, 256);
/// ```
pub const GEMM_BF16: KernelSpec<Sm100GemmParams> =
    KernelSpec::new("baton_sm100_gemm_bf16", gemm_sm100::THREADS)
        .with_dynamic_smem::<GemmSmem>()
        .hot();

/// Parameters of the block-scaled GEMMs ([`GEMM_MXFP8`], [`GEMM_NVFP4`]):
/// `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C`, as
/// `baton_kernel_roles::gemm_sm100_block_scaled::BlockScaledGemmArgs`
/// documents.
///
/// ```
/// let p = baton_kernels_abi::gemm_sm100::BlockScaledGemmParams {
///     tma_a: core::ptr::null(), tma_b: core::ptr::null(), tma_sfa: core::ptr::null(), tma_sfb: core::ptr::null(),
///     tma_c: core::ptr::null(), tma_d: core::ptr::null(), m: 128, n: 128, k: 256, group_m: 8, alpha: 1.0, beta: 0.0,
/// };
/// assert_eq!(p.k, 256);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlockScaledGemmParams {
    /// A (quantized).
    pub tma_a: *const TensorMap,
    /// B (quantized).
    pub tma_b: *const TensorMap,
    /// A's scale factors.
    pub tma_sfa: *const TensorMap,
    /// B's scale factors.
    pub tma_sfb: *const TensorMap,
    /// C (read only when `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D.
    pub tma_d: *const TensorMap,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// Reduction length (≥ 1).
    pub k: u32,
    /// Tile rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
}
// SAFETY: repr(C) of raw pointers and numbers.
unsafe impl KernelParams for BlockScaledGemmParams {}

/// `baton_sm100_gemm_mxfp8`: e4m3 with ue8m0 scales per 32 K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_sm100::GEMM_MXFP8.threads, 256);
/// ```
pub const GEMM_MXFP8: KernelSpec<BlockScaledGemmParams> =
    KernelSpec::new("baton_sm100_gemm_mxfp8", gemm_sm100_block_scaled::THREADS)
        .with_dynamic_smem::<Mxfp8GemmSmem>()
        .hot();

/// `baton_sm100_gemm_nvfp4`: e2m1 with ue4m3 scales per 16 K.
///
/// ```
/// assert_eq!(baton_kernels_abi::gemm_sm100::GEMM_NVFP4.name, "baton_sm100_gemm_nvfp4");
/// ```
pub const GEMM_NVFP4: KernelSpec<BlockScaledGemmParams> =
    KernelSpec::new("baton_sm100_gemm_nvfp4", gemm_sm100_block_scaled::THREADS)
        .with_dynamic_smem::<Nvfp4GemmSmem>()
        .hot();
