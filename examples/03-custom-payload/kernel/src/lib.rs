//! Example 03: a payload defined in this crate, not in baton.
//!
//! Per row `r` of two `rows × 32` `u32` matrices K and V, the kernel
//! computes `out[r] = Σ_c K[r][c]·V[r][c]` (wrapping): an attention-style
//! stage that needs a K tile and a V tile of the same row block at once.
//! [`payload::KvPayload`] says so to baton's [`InputTilePipeline`]: one
//! stage holds both tiles, and the barrier expects both TMA loads' bytes.
//! Warp 0 (one lane) loads K and V 32 rows at a time; warp 1 (lane `r` per
//! row) reads them from the swizzled tiles and writes `out`.
//!
//! As in examples 01 and 02, the roles ([`roles`]) run on the GPU and, with
//! baton's simulated TMA, on the CPU ([`cpu::run_grid`], `tests/cpu.rs`).
//!
//! [`InputTilePipeline`]: baton::tile_pipeline::InputTilePipeline
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
#![warn(missing_docs)]

#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
pub mod payload;
pub mod roles;
pub mod tile_io;
pub mod warp;

use baton::arch::current::tma::TensorMap;
use baton::kernel::{KernelParams, KernelSpec};
use baton::tile_pipeline::InputTileStorage;
use payload::KvPayload;

/// Stages of the ring.
pub const STAGES: usize = 3;
/// Threads per block: warp 0 loads, warp 1 computes.
pub const THREADS: u32 = 64;

/// Parameters of [`KV_DOT`].
///
/// ```
/// let p = kv_kernel::KvParams { k_map: core::ptr::null(), v_map: core::ptr::null(), out: core::ptr::null_mut(), rows: 5 };
/// assert_eq!(p.rows, 5);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KvParams {
    /// K: `u32`, dims {32, rows}, box {32, 32}, 128-byte swizzle.
    pub k_map: *const TensorMap,
    /// V: as K.
    pub v_map: *const TensorMap,
    /// `rows` words.
    pub out: *mut u32,
    /// Rows of K, V and `out`.
    pub rows: u32,
}
// SAFETY: repr(C) of raw pointers and an integer.
unsafe impl KernelParams for KvParams {}

/// The block's shared memory: barriers, then `STAGES` K/V stages.
pub type KvSmem = InputTileStorage<KvPayload, STAGES>;

/// The kernel's spec.
///
/// ```
/// assert_eq!(kv_kernel::KV_DOT.name, "example_kv_dot");
/// ```
pub const KV_DOT: KernelSpec<KvParams> = KernelSpec::new("example_kv_dot", THREADS)
    .with_dynamic_smem::<KvSmem>()
    .hot();

baton::kernel! {
    #[spec(KV_DOT)]
    /// `out[r] = Σ_c K[r][c]·V[r][c]` (see the crate docs).
    pub fn example_kv_dot(p: KvParams) {
        use baton::arch::ptx::{block_idx_x, dynamic_smem, grid_dim_x};
        // SAFETY: the host launches with the module's dynamic shared memory,
        // size_of::<KvSmem>() on the device (checked by the spec).
        let smem = unsafe { dynamic_smem::<KvSmem>() };
        roles::block(&warp::GpuWarp, smem, &p, block_idx_x(), grid_dim_x());
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
