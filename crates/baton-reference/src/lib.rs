//! # baton-reference
//!
//! What checks and measures baton's GPU kernels, kept out of the public
//! host library (`baton-runtime`):
//!
//! * f64 references and result checks of every GEMM ([`gemm_check`] for
//!   BF16, [`gemm_fp8_check`], [`gemm_block_scaled_check`]), on fresh
//!   random inputs ([`random`]) with NaN-poisoned outputs;
//! * cuBLAS / cuBLASLt side by side ([`gemm_cublas`], [`gemm_fp8_ref`],
//!   [`gemm_block_scaled_ref`]): checks against them and the benchmark
//!   harnesses of `baton bench`; behind the `cublas` feature (on by
//!   default; cuBLAS is loaded at run time like the driver);
//! * event timing of launches queued back to back ([`timing`]) on cold
//!   inputs (each library its own rotation of input sets:
//!   [`cold_inputs`]), and the device-to-device copy bandwidth GEMMs are
//!   compared with ([`copy_bandwidth`]).
//!
//! ```no_run
//! use baton_reference::gemm_check::{GemmTuning, check_vs_f64};
//! use baton_runtime::{Gpu, Variant};
//! let gpu = Gpu::new(0)?;
//! let kernels = gpu.load_kernels(Variant::Release)?;
//! let cmp = check_vs_f64(&gpu, &kernels, GemmTuning::default(), (256, 512, 128), 1.0, 0.5)?;
//! assert!(cmp.passes(1e-2), "{cmp:?}");
//! # Ok::<(), baton_reference::Error>(())
//! ```
#![warn(missing_docs)]

pub mod cold_inputs;
pub mod copy_bandwidth;
pub mod error;
pub mod gemm_block_scaled_check;
#[cfg(feature = "cublas")]
pub mod gemm_block_scaled_ref;
pub mod gemm_check;
#[cfg(feature = "cublas")]
pub mod gemm_cublas;
#[cfg(feature = "cublas")]
pub mod gemm_fp8_anchor;
pub mod gemm_fp8_check;
#[cfg(feature = "cublas")]
pub mod gemm_fp8_ref;
pub mod random;
pub mod timing;

pub use error::{Error, Result};
