//! Example 02: a TMA tile copy through baton's `InputTilePipeline`.
//!
//! A row-major bf16 matrix (moved as `u16` bits) is copied in 64 × 64 tiles
//! with the 128-byte swizzle: warp 0 TMA-loads tiles into a 4-stage
//! [`InputTilePipeline`] (the expect-tx byte count comes from the payload
//! type), warp 1 TMA-stores each stage back out. TMA zero-fills loads that
//! hang off the matrix's edge and clips stores there, so ragged shapes need
//! no special code. Block `b` copies tiles `b, b + grid, …`.
//!
//! The roles ([`roles`]) call `baton::arch::current::tma`: the `cp.async.bulk.tensor`
//! instructions on the GPU, and on the host baton's simulated TMA (byte-exact,
//! swizzle and zero fill included), so `cargo test` runs them on the CPU
//! ([`cpu::run_grid`], `tests/cpu.rs`).
//!
//! [`InputTilePipeline`]: baton::tile_pipeline::InputTilePipeline
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
#![warn(missing_docs)]

#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
pub mod roles;
pub mod warp;

use baton::arch::current::tma::TensorMap;
use baton::kernel::{KernelParams, KernelSpec};
use baton::tile_pipeline::{InputTileStorage, Tile, TilePayload};

/// Tile edge: 64 rows × 64 bf16 columns (one 128-byte swizzle span per row).
pub const TILE: u32 = 64;
/// Stages of the ring.
pub const STAGES: usize = 4;
/// Threads per block: warp 0 loads, warp 1 stores.
pub const THREADS: u32 = 64;

/// Parameters of [`TMA_COPY`]. The tensor maps live in global memory (the
/// host encodes them with the driver); on the host build of this crate
/// `TensorMap` is the CPU simulation's, but only the pointer crosses.
///
/// ```
/// let p = tma_copy_kernel::TmaCopyParams { load_map: core::ptr::null(), store_map: core::ptr::null(), tiles_m: 2, tiles_n: 3 };
/// assert_eq!(p.tiles_m * p.tiles_n, 6);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TmaCopyParams {
    /// Source: bf16, box 64 × 64, 128-byte swizzle.
    pub load_map: *const TensorMap,
    /// Destination: same shape and box.
    pub store_map: *const TensorMap,
    /// Tile rows (`⌈rows / 64⌉`).
    pub tiles_m: u32,
    /// Tile columns (`⌈cols / 64⌉`).
    pub tiles_n: u32,
}
// SAFETY: repr(C) of raw pointers and integers.
unsafe impl KernelParams for TmaCopyParams {}

/// One 64 × 64 bf16 tile per stage; its TMA bytes derive from the tile type.
///
/// ```
/// use baton::tile_pipeline::TilePayload;
/// assert_eq!(tma_copy_kernel::TilePayload64::TMA_BYTES, 64 * 64 * 2);
/// ```
pub struct TilePayload64;
impl TilePayload for TilePayload64 {
    type Stage = Tile<u16, 64, 64>;
    const TMA_BYTES: u32 = Tile::<u16, 64, 64>::BYTES;
}

/// The block's shared memory: the ring's barriers, then the stages.
pub type CopySmem = InputTileStorage<TilePayload64, STAGES>;

/// The kernel's spec.
///
/// ```
/// assert_eq!(tma_copy_kernel::TMA_COPY.threads, 64);
/// ```
pub const TMA_COPY: KernelSpec<TmaCopyParams> = KernelSpec::new("example_tma_copy", THREADS)
    .with_dynamic_smem::<CopySmem>()
    .hot();

baton::kernel! {
    #[spec(TMA_COPY)]
    /// Copies the `tiles_m × tiles_n` tiles of `load_map`'s matrix to
    /// `store_map`'s (see the crate docs).
    pub fn example_tma_copy(p: TmaCopyParams) {
        use baton::arch::ptx::{block_idx_x, dynamic_smem, grid_dim_x};
        // SAFETY: the host launches with the module's dynamic shared memory,
        // size_of::<CopySmem>() on the device (checked by the spec).
        let smem = unsafe { dynamic_smem::<CopySmem>() };
        roles::block(&warp::GpuWarp, smem, &p, block_idx_x(), grid_dim_x());
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
