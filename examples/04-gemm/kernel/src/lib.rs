//! Example 04: a persistent, warp-specialized BF16 GEMM `D = alpha·A·Bᵀ`
//! assembled from baton's Hopper roles (`baton_kernel_roles::sm90`).
//!
//! A (`M × K`), B (`N × K`) and D (`M × N`) are row-major bf16; fp32
//! accumulation. CTA tile 128 × 128 × 64, 384 threads:
//!
//! | warps | role (`baton_kernel_roles::sm90`) |
//! |---|---|
//! | 0 (one lane) | `producer::TmaProducer`: A and B tiles by TMA into an `InputTilePipeline` |
//! | 1–3 | idle (warpgroup 0 gives its registers to the consumers) |
//! | 4–7, 8–11 | consumer warpgroups: `mainloop_bf16::bf16_mainloop` (`wgmma.m64n128k16`, 64 rows each), then `epilogue::StoreEpilogue` (TMA stores of D through 64-byte-swizzled buffers) |
//!
//! Every role walks the same persistent schedule (`schedule::ClusterWork`:
//! tiles `block, block + grid, …` in grouped order). TMA zero-fills A and B
//! past M, N and K and clips D's stores, so any shape works. The kernel
//! itself is [`gemm`](mod@gemm) (nvptx only: `wgmma` and TMA have no CPU
//! simulation in the roles); this file is its ABI, shared with the host.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
#![warn(missing_docs)]

#[cfg(target_arch = "nvptx64")]
pub mod gemm;

use baton::arch::current::tma::TensorMap;
use baton::kernel::{KernelParams, KernelSpec};
use baton::tile_pipeline::{InputTileStorage, StandardTilePayload, Tile};

/// Tile rows (M).
pub const BM: u32 = 128;
/// Tile columns (N).
pub const BN: u32 = 128;
/// K per stage.
pub const BK: u32 = 64;
/// Input stages.
pub const STAGES: usize = 6;
/// D staging buffers per consumer warpgroup.
pub const D_BUFFERS: usize = 4;
/// Threads: warpgroup 0 (producer) and two consumer warpgroups.
pub const THREADS: u32 = 384;

/// One stage: a 128 × 64 A tile and a 128 × 64 B tile (bf16 bits).
pub type Payload = StandardTilePayload<u16, u16, 128, 128, 64>;

/// The block's shared memory.
#[repr(C)]
pub struct GemmSmem {
    /// Input stages (barriers, then A and B tiles).
    pub input: InputTileStorage<Payload, STAGES>,
    /// Per consumer warpgroup, a ring of 64 × 32 bf16 D sub-tiles.
    pub d_buffers: [[Tile<u16, 64, 32>; D_BUFFERS]; 2],
}

/// Parameters of [`GEMM`].
///
/// ```
/// let p = gemm_kernel::GemmParams { tma_a: core::ptr::null(), tma_b: core::ptr::null(), tma_d: core::ptr::null(), m: 1, n: 1, k: 1, alpha: 1.0 };
/// assert_eq!(p.alpha, 1.0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmParams {
    /// A: bf16, dims {K, M}, box {64, 128}, 128-byte swizzle.
    pub tma_a: *const TensorMap,
    /// B: bf16, dims {K, N}, box {64, 128}, 128-byte swizzle.
    pub tma_b: *const TensorMap,
    /// D: bf16, dims {N, M}, box {32, 64}, 64-byte swizzle.
    pub tma_d: *const TensorMap,
    /// Rows of A and D.
    pub m: u32,
    /// Rows of B, columns of D.
    pub n: u32,
    /// Reduction length.
    pub k: u32,
    /// Scale of the product.
    pub alpha: f32,
}
// SAFETY: repr(C) of raw pointers and numbers.
unsafe impl KernelParams for GemmParams {}

/// The kernel's spec (`.maxntid 384`: `setmaxnreg` needs it).
///
/// ```
/// assert_eq!(gemm_kernel::GEMM.threads, 384);
/// ```
pub const GEMM: KernelSpec<GemmParams> = KernelSpec::new("example_gemm_bf16", THREADS)
    .with_dynamic_smem::<GemmSmem>()
    .hot();

baton::kernel! {
    #[spec(GEMM)]
    /// `D = alpha·A·Bᵀ` (see the crate docs).
    pub fn example_gemm_bf16(p: GemmParams) {
        gemm::run(&p);
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
