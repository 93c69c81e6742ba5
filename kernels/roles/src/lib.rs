//! # baton-kernel-roles
//!
//! The warp-role programs of baton's Blackwell (sm_100a) kernels, written
//! once and compiled twice (and, in [`sm90`], the Hopper GEMM roles, compiled
//! for the GPU only):
//!
//! * for `nvptx64-nvidia-cuda` with `-C target-cpu=sm_100a`, through the
//!   kernel crate (`kernels/`, feature `sm100`), whose `extern "ptx-kernel"`
//!   entry points only read the thread's position and call the roles here;
//! * for the host, where `cargo test` runs the same roles on the CPU
//!   backend — a host thread per warp, simulated TMA, TMEM and `tcgen05`
//!   MMA — and checks the result against an f64 reference.
//!
//! Everything a role needs from "the thread it runs on" goes through
//! [`ctx::WarpCtx`]: its warp index, CTA and warp-group barriers, electing
//! one lane, and per-lane code (one lane per GPU thread; 32 lanes in turn
//! per CPU warp thread).
//!
//! | module | kernel |
//! |---|---|
//! | [`gemm_sm100`] | BF16 GEMM `D = alpha·A·Bᵀ + beta·C`: TMA load warp, MMA warp, C-load warp, epilogue warpgroup; accumulators in TMEM |
//! | [`gemm_sm100_block_scaled`] | MXFP8 / NVFP4 GEMM `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C`: the same roles, scale factors copied to TMEM (`tcgen05.cp`) per stage, block-scaled `tcgen05.mma`, accumulators in a `TmemOutputPipeline` |
//! | [`sm90`] | Hopper (sm_90a) roles of the BF16 and blockwise FP8 `wgmma` GEMMs (`kernels/src/gemm_bf16.rs`, `gemm_fp8.rs`): TMA producer, C-load, BF16 and FP8 main loops, FP8 promotion, stream-K fixup, TMA-store epilogue, tile scheduler, role table and dispatch (nvptx only, except the scheduler's arithmetic) |
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
#![warn(missing_docs)]

pub mod ctx;
pub mod epilogue;
pub mod gemm_sm100;
pub mod gemm_sm100_block_scaled;
pub mod sm90;
pub mod smem_io;
pub mod trace;
