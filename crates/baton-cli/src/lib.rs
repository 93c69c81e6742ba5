//! The `baton` command's library: subcommand implementations, testable
//! without a GPU.
//!
//! * [`demo`]: the CPU-backend pipeline demo (`baton demo`).
//! * [`commands`]: `info`, `smoke`, `probe` and their reports.
#![warn(missing_docs)]

pub mod bench;
pub mod block_scaled_bench;
pub mod chart;
pub mod commands;
pub mod demo;
pub mod fp8_bench;
pub mod hang;
pub mod tile_copy_bench;
