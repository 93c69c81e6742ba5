//! sm_100a GEMM entry points (BF16; MXFP8 and NVFP4 block-scaled): each
//! reads the thread's position and runs the warp-role program of
//! `baton-kernel-roles` (the same source `cargo test` runs on the CPU
//! simulation). Built only into `baton_sm100a.ptx`;
//! **assembled by ptxas, never run** (no Blackwell GPU so far).

use baton::arch::ptx::{
    block_dim_x, block_idx_x, dynamic_smem, dynamic_smem_size, grid_dim_x, trap,
};
use baton_kernel_roles::ctx::GpuWarp;
use baton_kernel_roles::gemm_sm100::{self, GemmArgs, GemmSmem};
use baton_kernel_roles::gemm_sm100_block_scaled::{
    self, BlockScaledGemmArgs, Mxfp8GemmSmem, Nvfp4GemmSmem,
};
use baton_kernels_abi::gemm_sm100::{self as abi, BlockScaledGemmParams, Sm100GemmParams};

baton::kernel! {
    #[spec(abi::GEMM_BF16)]
    /// BF16 GEMM `D = alpha·A·Bᵀ + beta·C` on sm_100a, 128×256×64 tiles,
    /// accumulators in TMEM (`baton_kernel_roles::gemm_sm100`).
    ///
    /// Launch: grid = min(tiles, SMs) CTAs, block and dynamic shared memory
    /// from the spec (traps otherwise).
    ///
    /// # Safety
    /// The tensor maps (in global memory) are as `GemmArgs` documents; `k ≥ 1`,
    /// `group_m ≥ 1`; an sm_100a GPU.
    pub fn baton_sm100_gemm_bf16(p: Sm100GemmParams) {
        if block_dim_x() != gemm_sm100::THREADS
            || (dynamic_smem_size() as usize) < gemm_sm100::SMEM_BYTES
        {
            trap();
        }
        // SAFETY: the launch gave SMEM_BYTES of dynamic shared memory (checked).
        let smem = unsafe { dynamic_smem::<GemmSmem>() };
        let args = GemmArgs {
            tma_a: p.tma_a,
            tma_b: p.tma_b,
            tma_c: p.tma_c,
            tma_d: p.tma_d,
            m: p.m,
            n: p.n,
            k: p.k,
            group_m: p.group_m,
            alpha: p.alpha,
            beta: p.beta,
        };
        // SAFETY: every thread of the CTA runs this with the same arguments;
        // the rest is the kernel's contract.
        unsafe { gemm_sm100::gemm_bf16(&GpuWarp, smem, &args, block_idx_x(), grid_dim_x()) }
    }
}

/// Defines a block-scaled GEMM entry point running `$run` over `$smem`.
macro_rules! block_scaled_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $smem:ty, $bytes:expr, $run:path) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(tiles, SMs) CTAs, block and dynamic shared
            /// memory from the spec (traps otherwise).
            ///
            /// # Safety
            /// The tensor maps (in global memory) are as `BlockScaledGemmArgs`
            /// documents for this format; `k ≥ 1`, `group_m ≥ 1`; an sm_100a GPU.
            pub fn $name(p: BlockScaledGemmParams) {
                if block_dim_x() != gemm_sm100_block_scaled::THREADS
                    || (dynamic_smem_size() as usize) < $bytes
                {
                    trap();
                }
                // SAFETY: the launch gave the layout's bytes of dynamic shared
                // memory (checked).
                let smem = unsafe { dynamic_smem::<$smem>() };
                let args = BlockScaledGemmArgs {
                    tma_a: p.tma_a,
                    tma_b: p.tma_b,
                    tma_sfa: p.tma_sfa,
                    tma_sfb: p.tma_sfb,
                    tma_c: p.tma_c,
                    tma_d: p.tma_d,
                    m: p.m,
                    n: p.n,
                    k: p.k,
                    group_m: p.group_m,
                    alpha: p.alpha,
                    beta: p.beta,
                };
                // SAFETY: every thread of the CTA runs this with the same
                // arguments; the rest is the kernel's contract.
                unsafe { $run(&GpuWarp, smem, &args, block_idx_x(), grid_dim_x()) }
            }
        }
    };
}

block_scaled_entry!(
    /// MXFP8 GEMM `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` on sm_100a (e4m3,
    /// ue8m0 per 32 K), 128×128 tiles, 128 K per stage
    /// (`baton_kernel_roles::gemm_sm100_block_scaled`).
    abi::GEMM_MXFP8,
    baton_sm100_gemm_mxfp8,
    Mxfp8GemmSmem,
    gemm_sm100_block_scaled::MXFP8_SMEM_BYTES,
    gemm_sm100_block_scaled::gemm_mxfp8
);

block_scaled_entry!(
    /// NVFP4 GEMM `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C` on sm_100a (e2m1,
    /// ue4m3 per 16 K), 128×128 tiles, 256 K per stage
    /// (`baton_kernel_roles::gemm_sm100_block_scaled`).
    abi::GEMM_NVFP4,
    baton_sm100_gemm_nvfp4,
    Nvfp4GemmSmem,
    gemm_sm100_block_scaled::NVFP4_SMEM_BYTES,
    gemm_sm100_block_scaled::gemm_nvfp4
);
