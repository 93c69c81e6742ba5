//! Hopper (sm_90a) warp roles of baton's persistent, warp-specialized
//! GEMMs: the BF16 (`baton_gemm_bf16_*`) and blockwise-scaled FP8
//! (`baton_gemm_fp8_blockwise_*`) kernels of `kernels/src` are each a
//! shared-memory layout, a [role table](dispatch::RoleTable) and a dispatch
//! over these roles. A kernel crate of its own can assemble a GEMM the same
//! way (depend on `baton-kernel-roles`, build for `nvptx64-nvidia-cuda`
//! with `-C target-cpu=sm_90a`).
//!
//! | role / piece | module | runs on | waits on | arrives on |
//! |---|---|---|---|---|
//! | tile scheduler, stream-K walk | [`schedule`] | every role | — | — |
//! | TMA producer (A, B or its multicast half, tail rows, FP8 A scales) | [`producer`] | warp 0, one lane | input `empty[s]` (`2·CLUSTER_M` arrivals) | input `full[s]` (1 + TMA bytes) |
//! | C-load (`EpiLoadPipeline`) | [`c_load`] | warp 1, one lane, beta ≠ 0 | C `empty[c]` (1) | C `full[c]` (1 + TMA bytes) |
//! | BF16 `wgmma` main loop | [`mainloop_bf16`] | consumer warpgroup | input `full[s]` | input `empty[s]` of each CTA of the cluster (1 per warpgroup) |
//! | FP8 `wgmma` main loops (+ promotion) | [`mainloop_fp8`], [`promotion`] | consumer warpgroup | input `full[s]` | input `empty[s]` (1 per warpgroup) |
//! | stream-K fixup | [`stream_k`] | consumer warpgroup | finalizer: contributor flags; split-K (distributed): each worker with a share, the unit's `splits − 1` other flags | contributor: its flag; split-K: every worker, its flag |
//! | TMA-store epilogue (beta = 0 ring, in-place residual) | [`epilogue`] | consumer warpgroup | C `full[c]` | C `empty[c]` (1, after the store read it) |
//! | transposed TMA-store epilogue (swap-AB, beta = 0) | [`epilogue_transposed`] | consumer warpgroup | — | — |
//! | columns past the last whole sub-tile, from registers (FP8 256×88) | [`tail_columns`] | consumer warpgroup | — | — |
//! | role table, dispatch, setup | [`dispatch`] | every thread | — | — |
//!
//! Everything here is `#[inline(always)]` and generic over the tile shape:
//! a kernel entry compiles to the same code as the roles written inline
//! (checked: the SASS main loops and ptxas register counts of every GEMM
//! entry, `tools/sass-loops.py`). Only [`schedule`]'s plain arithmetic
//! and the FP8 A-scale loads and offsets ([`fp8_a_scales`], on the CPU
//! backend's simulated TMA) compile on the host; the rest needs `nvptx64`
//! (`wgmma`, TMA).

#[cfg(target_arch = "nvptx64")]
pub mod c_load;
#[cfg(target_arch = "nvptx64")]
pub mod dispatch;
#[cfg(target_arch = "nvptx64")]
pub mod epilogue;
#[cfg(target_arch = "nvptx64")]
pub mod epilogue_transposed;
pub mod fp8_a_scales;
#[cfg(target_arch = "nvptx64")]
pub mod mainloop_bf16;
#[cfg(target_arch = "nvptx64")]
pub mod mainloop_fp8;
#[cfg(target_arch = "nvptx64")]
pub mod producer;
#[cfg(target_arch = "nvptx64")]
pub mod promotion;
pub mod schedule;
#[cfg(target_arch = "nvptx64")]
pub mod stage_descriptors;
#[cfg(target_arch = "nvptx64")]
pub mod stream_k;
#[cfg(target_arch = "nvptx64")]
pub mod tail_columns;
#[cfg(target_arch = "nvptx64")]
pub mod wgmma_wait;
