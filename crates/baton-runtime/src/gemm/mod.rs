//! The GEMM host APIs: validation, tensor maps, plans and launches.
//!
//! * [`bf16`]: the Hopper BF16 GEMM family (re-exported here:
//!   `baton_runtime::gemm::GemmPlan`);
//! * the heuristics: [`GemmConfig::choose`], [`stream_k_pays`], from the
//!   [`cost_model`];
//! * [`element`]: the operands' element types (`half::bf16`, `float8`'s
//!   E4M3, and their raw bits `u16`/`u8`);
//! * [`matrix`]: matrix views (leading dimension, layout, batch) over
//!   cudarc buffers or raw device pointers;
//! * the GEMMs over views: [`matmul_bf16`], [`matmul_fp8_blockwise`],
//!   [`GemmPlan::from_views`], [`fp8::Fp8GemmPlan::from_views`] (strided,
//!   batched, row- or column-major where the kernels allow);
//! * [`mn_major`]: MN-major BF16 operands (column-major A, K×N row-major
//!   B) and the kernel entries that read them;
//! * [`fp8`]: the blockwise-scaled FP8 GEMM (sm_90a);
//! * [`block_scaled`]: the MXFP8/NVFP4 block-scaled GEMM (sm_100a);
//! * [`plan_with_repack`]: a misaligned BF16 operand re-packed at a
//!   128-byte row stride where the cost model says it pays;
//! * stream-K workspaces shared by the sm_90a plans.
//!
//! Every plan launches on its [`Gpu`](crate::Gpu)'s stream: make the `Gpu`
//! with [`Gpu::from_stream`](crate::Gpu::from_stream) to run on yours.
//! Refusals are typed: [`GemmShapeError`], [`Fp8ShapeError`], [`GemmError`].

pub mod bf16;
pub mod block_scaled;
pub mod cost_model;
pub mod element;
pub mod fp8;
mod heuristic;
pub mod matrix;
pub mod mn_major;
mod operand;
mod repack;
mod stream_k;
pub mod views;

pub use crate::error::gemm::{Fp8ShapeError, GemmError, GemmShapeError};
pub use bf16::*;
pub use heuristic::{
    L2_BYTES, NARROW_PAIR_MIN_GAIN, OnGpu, PINGPONG_MAX_L2_SHARE, PlanGpu, STREAM_K_MIN_SEGMENT,
    STREAM_K_MIN_WAVES, pingpong_fits_l2, stream_k_pays,
};
pub use repack::{
    REPACK_BYTES_PER_S, REPACK_LAUNCH_US, REPACK_MIN_GAIN, REPACK_ROW_BYTES, Repack, RepackPlan,
    plan_with_repack, repack_us, repacked_ld,
};
pub use views::{BF16_LAYOUT_RULE, FP8_LAYOUT_RULE, Scales, matmul_bf16, matmul_fp8_blockwise};

pub(crate) use crate::device_memory::ranges_overlap;
