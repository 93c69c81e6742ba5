//! The `baton` command's library: subcommand implementations, testable
//! without a GPU.
//!
//! * [`demo`]: the CPU-backend pipeline demo (`baton demo`).
//! * [`commands`]: `info`, `smoke`, `probe` and their reports.
//! * [`args`]: the argument values' parsers (shapes, configurations,
//!   FP8 kernels, forced plans).
//! * [`bench`], [`fp8_bench`], [`sweep_bench`] (grid: [`sweep`]): the GEMM
//!   benchmarks; [`chart`] (PNG charts), [`progress`] (bars),
//!   [`report`] (`--json`).
#![warn(missing_docs)]

pub mod args;
pub mod attention_bench;
pub mod bench;
pub mod block_scaled_bench;
pub mod chart;
pub mod commands;
pub mod demo;
pub mod fp8_anchor_bench;
pub mod fp8_bench;
pub mod hang;
pub mod progress;
pub mod repack_bench;
pub mod report;
pub mod sweep;
pub mod sweep_bench;
pub mod tile_copy_bench;
pub mod trace_bench;
