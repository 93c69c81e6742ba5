//! # baton-selftest
//!
//! The GPU self-tests of baton's pipelines, kept out of the public host
//! library: the drivers that `baton smoke`, `baton bench` (tile copy,
//! zero-cost) and the GPU suite run. Each poisons its outputs, draws fresh
//! random inputs and checks every word the kernels write.
//!
//! * [`smoke`]: one mbarrier handoff, and the cluster launch;
//! * [`pipeline_gpu`]: `ProducerConsumerPipeline` handoffs, the epilogue
//!   load pipeline, the zero-cost benchmark;
//! * [`tile_copy`]: TMA tile loads through `InputTilePipeline`.
//!
//! The test kernels are a PTX module of their own (`kernels/selftest`),
//! built by this crate's build script with `baton-build` and loaded with
//! [`kernels::load_kernels`].
//!
//! ```no_run
//! use baton_reference::random::XorShift;
//! use baton_runtime::{Gpu, Variant};
//! use baton_selftest::smoke;
//! let gpu = Gpu::new(0)?;
//! let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)?;
//! let report = smoke::run(&gpu, &kernels, XorShift::seed_from_time())?;
//! assert!(report.passed());
//! # Ok::<(), baton_selftest::Error>(())
//! ```
#![warn(missing_docs)]

pub mod error;
pub mod kernels;
pub mod pipeline_gpu;
pub mod smoke;
pub mod tile_copy;

pub use error::{Error, Result, TileCopyRule};
