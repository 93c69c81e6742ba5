//! GPU tests of `baton::pipeline` and `baton::epi_load`: five-warp blocks,
//! warp 0 the producer, warps 1..=4 (128 threads) the consumers; and the
//! deliberate hang of the hang report.

use baton::kernel::{KernelParams, KernelSpec};
use baton::pipeline::PipelineBarriers;

/// Threads per block of the handoff and epilogue-load kernels.
pub const THREADS: u32 = 160;
/// Consumer threads (warps 1..=4).
pub const CONSUMER_THREADS: u32 = 128;
/// Stages of the handoff ring.
pub const STAGES: usize = 4;

/// Parameters of [`HANDOFF`] and [`EXPLICIT`]: `out` holds `2 × 128` words
/// per block (mismatches, checksum per consumer thread).
///
/// ```
/// let p = baton_kernels_abi::pipeline::HandoffParams { out: core::ptr::null_mut(), items: 1000, seed: 7 };
/// assert_eq!(p.items, 1000);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HandoffParams {
    /// Per consumer thread: (mismatches, checksum).
    pub out: *mut u32,
    /// Handoffs per block.
    pub items: u32,
    /// Seed of the payload words.
    pub seed: u32,
}
// SAFETY: repr(C) of a raw pointer and integers.
unsafe impl KernelParams for HandoffParams {}

/// Shared memory of [`HANDOFF`] and [`EXPLICIT`].
#[repr(C)]
pub struct HandoffSmem {
    /// The ring's barriers.
    pub bars: PipelineBarriers<STAGES>,
    /// One 32-word slot per stage.
    pub slots: [[u32; 32]; STAGES],
}

/// `baton_pipeline_handoff`: scoped produce/consume through a 4-stage ring.
///
/// ```
/// assert_eq!(baton_kernels_abi::pipeline::HANDOFF.threads, 160);
/// ```
pub const HANDOFF: KernelSpec<HandoffParams> =
    KernelSpec::new("baton_pipeline_handoff", THREADS).with_dynamic_smem::<HandoffSmem>();

/// `baton_pipeline_explicit`: explicit-signal stages (`consume_explicit`).
///
/// ```
/// assert_eq!(baton_kernels_abi::pipeline::EXPLICIT.name, "baton_pipeline_explicit");
/// ```
pub const EXPLICIT: KernelSpec<HandoffParams> = HANDOFF.renamed("baton_pipeline_explicit");

/// Epilogue-load stages.
pub const EPI_STAGES: usize = 2;
/// Rows of a C tile.
pub const TILE_ROWS: u32 = 128;
/// f32 columns of a C tile.
pub const TILE_COLS: u32 = 32;

/// Parameters of [`EPI_LOAD`]: `c` and `d` are `tiles × 128 × 32` f32,
/// row-major.
///
/// ```
/// let p = baton_kernels_abi::pipeline::EpiLoadParams { d: core::ptr::null_mut(), c: core::ptr::null(), tiles: 4, beta: 0.5 };
/// assert_eq!(p.tiles, 4);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EpiLoadParams {
    /// Output tiles.
    pub d: *mut f32,
    /// Input tiles.
    pub c: *const f32,
    /// Number of tiles.
    pub tiles: u32,
    /// `D = accum + beta·C`.
    pub beta: f32,
}
// SAFETY: repr(C) of raw pointers and numbers.
unsafe impl KernelParams for EpiLoadParams {}

/// Shared memory of [`EPI_LOAD`].
#[repr(C)]
pub struct EpiSmem {
    /// The epilogue-load pipeline's barriers.
    pub bars: PipelineBarriers<EPI_STAGES>,
    /// One C tile per stage (f32 bits).
    pub tiles: [[u32; (TILE_ROWS * TILE_COLS) as usize]; EPI_STAGES],
}

/// `baton_epi_load_roundtrip`: `EpiLoadPipeline` round trip.
///
/// ```
/// assert_eq!(baton_kernels_abi::pipeline::EPI_LOAD.threads, 160);
/// ```
pub const EPI_LOAD: KernelSpec<EpiLoadParams> =
    KernelSpec::new("baton_epi_load_roundtrip", THREADS).with_dynamic_smem::<EpiSmem>();

/// Parameters of [`HANG`]: one word, never written in a passing run.
///
/// ```
/// let p = baton_kernels_abi::pipeline::HangParams { out: core::ptr::null_mut() };
/// assert!(p.out.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HangParams {
    /// Written only if the impossible wait ends.
    pub out: *mut u32,
}
// SAFETY: repr(C) of a raw pointer.
unsafe impl KernelParams for HangParams {}

/// `baton_pipeline_hang`: one warp waits on a stage nobody fills (launch the
/// debug PTX only: bounded wait, report, trap).
///
/// ```
/// assert_eq!(baton_kernels_abi::pipeline::HANG.threads, 32);
/// ```
pub const HANG: KernelSpec<HangParams> =
    KernelSpec::new("baton_pipeline_hang", 32).with_dynamic_smem::<PipelineBarriers<1>>();
