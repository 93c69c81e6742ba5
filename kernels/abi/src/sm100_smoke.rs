//! The sm_100a (`tcgen05`) smoke kernels, assembled for Blackwell: one
//! `kind::f16` MMA, the multicast commit of a CTA pair, the CTA-pair MMA and
//! the block-scaled paths.

use baton::arch::current::MbarrierCell;
use baton::kernel::{KernelParams, KernelSpec};

/// Rows of A and of the accumulator (M).
pub const SM100_SMOKE_M: usize = 128;
/// Columns of the accumulator (N, rows of B).
pub const SM100_SMOKE_N: usize = 32;
/// Reduction length (K): one `kind::f16` MMA.
pub const SM100_SMOKE_K: usize = 16;

/// Parameters of [`SMOKE`] and [`PAIR_MMA`]: `a`, `b` bf16 bits row-major,
/// `out` the f32 accumulator bits.
///
/// ```
/// let p = baton_kernels_abi::sm100_smoke::MmaSmokeParams { out: core::ptr::null_mut(), a: core::ptr::null(), b: core::ptr::null() };
/// assert!(p.a.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MmaSmokeParams {
    /// The accumulator.
    pub out: *mut u32,
    /// A (M × K bf16 bits, two per word).
    pub a: *const u32,
    /// B (N × K bf16 bits, two per word).
    pub b: *const u32,
}
// SAFETY: repr(C) of raw pointers.
unsafe impl KernelParams for MmaSmokeParams {}

/// Shared-memory layout of [`SMOKE`].
#[repr(C)]
pub struct Sm100SmokeLayout {
    /// A, 128 × 16 bf16 in core matrices (4096 bytes).
    pub a: [u32; SM100_SMOKE_M * SM100_SMOKE_K / 2],
    /// B, 32 × 16 bf16 in core matrices (1024 bytes).
    pub b: [u32; SM100_SMOKE_N * SM100_SMOKE_K / 2],
    /// Completed by the MMA's `tcgen05.commit`.
    pub bar: MbarrierCell,
    /// The TMEM address `tcgen05.alloc` writes.
    pub tmem_addr: u32,
}

/// `baton_sm100_smoke`: one CTA of 128 threads.
///
/// ```
/// assert_eq!(baton_kernels_abi::sm100_smoke::SMOKE.threads, 128);
/// ```
pub const SMOKE: KernelSpec<MmaSmokeParams> =
    KernelSpec::new("baton_sm100_smoke", SM100_SMOKE_M as u32)
        .with_dynamic_smem::<Sm100SmokeLayout>()
        .hot();

/// Parameters of [`COMMIT_PAIR`]: `out` holds one word per CTA.
///
/// ```
/// let p = baton_kernels_abi::sm100_smoke::CommitPairParams { out: core::ptr::null_mut() };
/// assert!(p.out.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CommitPairParams {
    /// `1` per CTA whose barrier completed.
    pub out: *mut u32,
}
// SAFETY: repr(C) of a raw pointer.
unsafe impl KernelParams for CommitPairParams {}

/// Shared-memory layout of [`COMMIT_PAIR`]: one barrier per CTA.
#[repr(C)]
pub struct CommitPairLayout {
    /// Completed by the multicast commit of CTA 0.
    pub bar: MbarrierCell,
}

/// `baton_sm100_commit_pair`: grid 2, cluster 2, one warp.
///
/// ```
/// assert_eq!(baton_kernels_abi::sm100_smoke::COMMIT_PAIR.cluster, [2, 1, 1]);
/// ```
pub const COMMIT_PAIR: KernelSpec<CommitPairParams> =
    KernelSpec::new("baton_sm100_commit_pair", 32)
        .with_cluster([2, 1, 1])
        .with_dynamic_smem::<CommitPairLayout>()
        .hot();

/// Shared-memory layout of [`PAIR_MMA`], the same in both CTAs.
#[repr(C)]
pub struct PairMmaLayout {
    /// This CTA's 128 rows of A (128 × 16 bf16, core matrices).
    pub a: [u32; SM100_SMOKE_M * SM100_SMOKE_K / 2],
    /// This CTA's half of B (16 of the 32 rows, core matrices).
    pub b: [u32; SM100_SMOKE_N / 2 * SM100_SMOKE_K / 2],
    /// Completed by the leader's multicast commit.
    pub bar: MbarrierCell,
    /// The TMEM address `tcgen05.alloc.cta_group::2` writes (same in both).
    pub tmem_addr: u32,
}

/// `baton_sm100_pair_mma`: `D = A·Bᵀ`, M = 256 over a CTA pair.
///
/// ```
/// assert_eq!(baton_kernels_abi::sm100_smoke::PAIR_MMA.cluster_size(), 2);
/// ```
pub const PAIR_MMA: KernelSpec<MmaSmokeParams> =
    KernelSpec::new("baton_sm100_pair_mma", SM100_SMOKE_M as u32)
        .with_cluster([2, 1, 1])
        .with_dynamic_smem::<PairMmaLayout>()
        .hot();

/// Parameters of the block-scaled kernels: `src` 2560 words (operands and
/// scale factors), `out` 128 × 32 words.
///
/// ```
/// let p = baton_kernels_abi::sm100_smoke::BlockScaledParams { out: core::ptr::null_mut(), src: core::ptr::null() };
/// assert!(p.src.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlockScaledParams {
    /// The accumulator.
    pub out: *mut u32,
    /// Operands, then scale factors.
    pub src: *const u32,
}
// SAFETY: repr(C) of raw pointers.
unsafe impl KernelParams for BlockScaledParams {}

/// Shared memory of [`BLOCK_SCALED`] and [`BLOCK_SCALED_PAIR`].
#[repr(C, align(1024))]
pub struct Sm100BlockScaledLayout {
    /// A operand (MXFP8: 128 × 32 bytes; NVFP4 reuses it as 128 × 64 e2m1),
    /// no-swizzle K-major core matrices.
    pub a: [u32; 1024],
    /// B operand.
    pub b: [u32; 1024],
    /// Scale factors staged for `tcgen05.cp` (512-byte atoms).
    pub sf: [u32; 512],
    /// Completed by the MMAs' commit.
    pub bar: MbarrierCell,
    /// The TMEM address `tcgen05.alloc` writes.
    pub tmem_addr: u32,
}

/// `baton_sm100_block_scaled` (`cta_group::1`), assembled only.
///
/// ```
/// assert_eq!(baton_kernels_abi::sm100_smoke::BLOCK_SCALED.threads, 128);
/// ```
pub const BLOCK_SCALED: KernelSpec<BlockScaledParams> =
    KernelSpec::new("baton_sm100_block_scaled", 128)
        .with_dynamic_smem::<Sm100BlockScaledLayout>()
        .hot();

/// `baton_sm100_block_scaled_pair` (`cta_group::2`, a CTA pair), assembled only.
///
/// ```
/// assert_eq!(baton_kernels_abi::sm100_smoke::BLOCK_SCALED_PAIR.cluster, [2, 1, 1]);
/// ```
pub const BLOCK_SCALED_PAIR: KernelSpec<BlockScaledParams> = BLOCK_SCALED
    .renamed("baton_sm100_block_scaled_pair")
    .with_cluster([2, 1, 1]);
