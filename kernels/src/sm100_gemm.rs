//! sm_100a GEMM entry points (BF16; MXFP8 and NVFP4 block-scaled): each
//! reads the thread's position and runs the warp-role program of
//! `baton-kernel-roles` (the same source `cargo test` runs on the CPU
//! simulation). Built only into `baton_sm100a.ptx`;
//! **assembled by ptxas, never run** (no Blackwell GPU so far).

use baton::arch::sm90::tma::TensorMap;
use baton::arch::sm90::{
    block_dim_x, block_idx_x, dynamic_smem, dynamic_smem_size, grid_dim_x, trap,
};
use baton_kernel_roles::ctx::GpuWarp;
use baton_kernel_roles::gemm_sm100::{self, GemmArgs, GemmSmem};
use baton_kernel_roles::gemm_sm100_block_scaled::{
    self, BlockScaledGemmArgs, Mxfp8GemmSmem, Nvfp4GemmSmem,
};

/// BF16 GEMM `D = alpha·A·Bᵀ + beta·C` on sm_100a, 128×256×64 tiles,
/// accumulators in TMEM (`baton_kernel_roles::gemm_sm100`).
///
/// Launch: grid = min(tiles, SMs) CTAs of `gemm_sm100::THREADS` threads,
/// `gemm_sm100::SMEM_BYTES` of dynamic shared memory (traps otherwise).
///
/// # Safety
/// The tensor maps (in global memory) are as `GemmArgs` documents; `k ≥ 1`,
/// `group_m ≥ 1`; an sm_100a GPU.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "ptx-kernel" fn baton_sm100_gemm_bf16(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    alpha: f32,
    beta: f32,
) {
    if block_dim_x() != gemm_sm100::THREADS
        || (dynamic_smem_size() as usize) < gemm_sm100::SMEM_BYTES
    {
        trap();
    }
    // SAFETY: the launch gave SMEM_BYTES of dynamic shared memory (checked).
    let smem = unsafe { dynamic_smem::<GemmSmem>() };
    let args = GemmArgs {
        tma_a,
        tma_b,
        tma_c,
        tma_d,
        m,
        n,
        k,
        group_m,
        alpha,
        beta,
    };
    // SAFETY: every thread of the CTA runs this with the same arguments;
    // the rest is the kernel's contract.
    unsafe { gemm_sm100::gemm_bf16(&GpuWarp, smem, &args, block_idx_x(), grid_dim_x()) }
}

/// Defines a block-scaled GEMM entry point running `$run` over `$smem`.
macro_rules! block_scaled_entry {
    ($(#[$doc:meta])* $name:ident, $smem:ty, $bytes:expr, $run:path) => {
        $(#[$doc])*
        ///
        /// Launch: grid = min(tiles, SMs) CTAs of
        /// `gemm_sm100_block_scaled::THREADS` threads, the format's
        /// `*_SMEM_BYTES` of dynamic shared memory (traps otherwise).
        ///
        /// # Safety
        /// The tensor maps (in global memory) are as `BlockScaledGemmArgs`
        /// documents for this format; `k ≥ 1`, `group_m ≥ 1`; an sm_100a GPU.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            tma_a: *const TensorMap,
            tma_b: *const TensorMap,
            tma_sfa: *const TensorMap,
            tma_sfb: *const TensorMap,
            tma_c: *const TensorMap,
            tma_d: *const TensorMap,
            m: u32,
            n: u32,
            k: u32,
            group_m: u32,
            alpha: f32,
            beta: f32,
        ) {
            if block_dim_x() != gemm_sm100_block_scaled::THREADS
                || (dynamic_smem_size() as usize) < $bytes
            {
                trap();
            }
            // SAFETY: the launch gave the layout's bytes of dynamic shared
            // memory (checked).
            let smem = unsafe { dynamic_smem::<$smem>() };
            let args = BlockScaledGemmArgs {
                tma_a,
                tma_b,
                tma_sfa,
                tma_sfb,
                tma_c,
                tma_d,
                m,
                n,
                k,
                group_m,
                alpha,
                beta,
            };
            // SAFETY: every thread of the CTA runs this with the same
            // arguments; the rest is the kernel's contract.
            unsafe { $run(&GpuWarp, smem, &args, block_idx_x(), grid_dim_x()) }
        }
    };
}

block_scaled_entry!(
    /// MXFP8 GEMM `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` on sm_100a (e4m3,
    /// ue8m0 per 32 K), 128×128 tiles, 128 K per stage
    /// (`baton_kernel_roles::gemm_sm100_block_scaled`).
    baton_sm100_gemm_mxfp8,
    Mxfp8GemmSmem,
    gemm_sm100_block_scaled::MXFP8_SMEM_BYTES,
    gemm_sm100_block_scaled::gemm_mxfp8
);

block_scaled_entry!(
    /// NVFP4 GEMM `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` on sm_100a (e2m1,
    /// ue4m3 per 16 K), 128×128 tiles, 256 K per stage
    /// (`baton_kernel_roles::gemm_sm100_block_scaled`).
    baton_sm100_gemm_nvfp4,
    Nvfp4GemmSmem,
    gemm_sm100_block_scaled::NVFP4_SMEM_BYTES,
    gemm_sm100_block_scaled::gemm_nvfp4
);
