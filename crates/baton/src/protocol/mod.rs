//! Arch-independent protocol code: the pipelines, written once against the
//! operations of [`crate::arch::current`].

pub mod diag;
pub mod epi_load;
pub mod ordered_barrier;
pub mod pipeline;
pub mod state;
pub mod stream_k;
pub mod tile_pipeline;
pub mod tile_scheduler;
