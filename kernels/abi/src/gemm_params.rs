//! Parameter structs of the Hopper GEMMs (BF16 and blockwise-scaled FP8),
//! shared by every tile configuration of each.

use baton::arch::current::tma::TensorMap;
use baton::kernel::KernelParams;

/// The stream-K workspace a Hopper GEMM takes: with `min_segment == 0`
/// stream-K is off and the pointers are never touched (may be null).
///
/// ```
/// let sk = baton_kernels_abi::gemm_params::StreamKParams::OFF;
/// assert_eq!(sk.min_segment, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamKParams {
    /// `2 · grid · BM · BN` floats of partial accumulators.
    pub partials: *mut f32,
    /// `2 · grid` flags (zeroed once).
    pub flags: *mut u32,
    /// Differs from the previous launch's on these buffers (≠ 0).
    pub epoch: u32,
    /// Least K blocks per stream-K segment; 0: stream-K off.
    pub min_segment: u32,
    /// Full waves split along K besides the partial last one.
    pub extra_waves: u32,
}

impl StreamKParams {
    /// Stream-K off.
    pub const OFF: StreamKParams = StreamKParams {
        partials: core::ptr::null_mut(),
        flags: core::ptr::null_mut(),
        epoch: 0,
        min_segment: 0,
        extra_waves: 0,
    };
}

/// Parameters of the BF16 GEMMs: `D = alpha·A·Bᵀ + beta·C`.
///
/// ```
/// use baton_kernels_abi::gemm_params::{GemmBf16Params, StreamKParams};
/// let p = GemmBf16Params {
///     tma_a: core::ptr::null(), tma_b: core::ptr::null(), tma_c: core::ptr::null(), tma_d: core::ptr::null(),
///     m: 4096, n: 4096, k: 4096, group_m: 8, alpha: 1.0, beta: 0.0,
///     stream_k: StreamKParams::OFF, tma_a_tail: core::ptr::null(), tail_rows: 0,
/// };
/// assert_eq!(p.tail_rows, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmBf16Params {
    /// A: bf16, dims {K, M}, box {64, 128}, 128-byte swizzle.
    pub tma_a: *const TensorMap,
    /// B: bf16, dims {K, N}, box {64, BN}, 128-byte swizzle.
    pub tma_b: *const TensorMap,
    /// C: bf16, dims {N, M}, box {32, 64}, 64-byte swizzle (read only when `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D: as C.
    pub tma_d: *const TensorMap,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// Reduction length.
    pub k: u32,
    /// Cluster-unit rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
    /// Stream-K workspace.
    pub stream_k: StreamKParams,
    /// A with a box of `tail_rows` rows (read only when `tail_rows ≠ 0`).
    pub tma_a_tail: *const TensorMap,
    /// `M mod 128`.
    pub tail_rows: u32,
}
// SAFETY: repr(C) of raw pointers, numbers and a repr(C) struct of those.
unsafe impl KernelParams for GemmBf16Params {}

/// Parameters of the blockwise-scaled FP8 GEMMs (e4m3; 1×128 A scales,
/// 128×128 B scales).
///
/// ```
/// use baton_kernels_abi::gemm_params::{GemmFp8Params, StreamKParams};
/// let p = GemmFp8Params {
///     tma_a: core::ptr::null(), tma_b: core::ptr::null(), tma_sa: core::ptr::null(), tma_d: core::ptr::null(),
///     tma_a_tail: core::ptr::null(), tma_sa_tail: core::ptr::null(), b_scales: core::ptr::null(),
///     m: 128, n: 7168, k: 16384, tail_rows: 0, stream_k: StreamKParams::OFF,
/// };
/// assert_eq!(p.k % 128, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmFp8Params {
    /// A: u8, dims {K, M}, box {128, BM}, 128-byte swizzle.
    pub tma_a: *const TensorMap,
    /// B: u8, dims {K, N}, box {128, BN}, 128-byte swizzle.
    pub tma_b: *const TensorMap,
    /// A scales: f32, dims {M4, K/128}, box {BM, 1}.
    pub tma_sa: *const TensorMap,
    /// D: bf16, dims {N, M}, box {32, 64}, 64-byte swizzle.
    pub tma_d: *const TensorMap,
    /// A with a box of `tail_rows` rows (read only when `tail_rows ≠ 0`).
    pub tma_a_tail: *const TensorMap,
    /// A scales with a box of `tail_rows` rounded up to 4.
    pub tma_sa_tail: *const TensorMap,
    /// `⌈N/128⌉ · K/128` f32 B scales in global memory.
    pub b_scales: *const f32,
    /// Rows of A, D.
    pub m: u32,
    /// Rows of B, columns of D.
    pub n: u32,
    /// Reduction length (a positive multiple of 128).
    pub k: u32,
    /// `M mod BM`.
    pub tail_rows: u32,
    /// Stream-K workspace.
    pub stream_k: StreamKParams,
}
// SAFETY: repr(C) of raw pointers, numbers and a repr(C) struct of those.
unsafe impl KernelParams for GemmFp8Params {}
