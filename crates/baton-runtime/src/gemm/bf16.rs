//! Host side of the Hopper BF16 GEMM (`kernels/src/gemm_bf16.rs`):
//! validation, tensor maps, launch. (The cuBLAS reference is in
//! `baton-reference`.)
//!
//! `D = alpha·A·Bᵀ + beta·C` with A M×K, B N×K (both K-major, row-major),
//! C and D M×N row-major; bf16 storage (as `u16` bits), fp32 accumulation.

use super::heuristic::{OnGpu, STREAM_K_MIN_SEGMENT, stream_k_pays};
use super::mn_major::Bf16Layouts;
use super::operand::{RowMajorOperand, param};
use super::ranges_overlap;
use super::repack::{self, Repack, plan_with_repack, repacked_ld};
use super::stream_k::StreamKWorkspace;
use crate::error::{GemmError, GemmShapeError, MatrixError, Result};
use crate::pitched_copy::CopyKernel;
use crate::tensor_map::{self, DeviceTensorMaps, EncodedTensorMap};
use crate::{Gpu, Kernel, Kernels, LaunchConfig, Target, TypedKernel, programmatic_launch_enabled};
use baton::kernel::KernelSpec;
use baton::tensor_map::{ElemType, Swizzle};
use baton_kernels_abi::gemm_bf16 as bf16_abi;
use baton_kernels_abi::gemm_bf16_swap_ab as swap_ab_abi;
use baton_kernels_abi::gemm_params::{
    BROADCAST_A, BROADCAST_B, BROADCAST_C, GemmBf16Params, TensorMapParam,
};
use baton_kernels_abi::gemm_sm100::{self, Sm100GemmParams};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// A tile configuration of the BF16 GEMM kernel family
/// (`kernels/src/gemm_bf16.rs`): CTA tile 128 × `bn` × 64 (256 × 128 × 64
/// for the [`TALL`](Self::TALL) ones), 384 threads (a producer warpgroup
/// and two consumer warpgroups).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmConfig {
    /// 128×256 tiles, 4 stages, `wgmma.m64n256k16`.
    T128x256,
    /// 128×256 tiles in 2-CTA clusters along M that share each B tile by TMA
    /// multicast (half the B traffic): the large-shape workhorse.
    T128x256C2,
    /// 128×224 tiles in 2-CTA clusters with B multicast: N a multiple of
    /// 224 (e.g. 7168) tiles without ragged columns.
    T128x224C2,
    /// 128×192 tiles in 2-CTA clusters with B multicast, 4 stages: block N
    /// between the powers of two, for N that 192 divides (3072, 6144,
    /// 12288) or that 128- and 256-wide tiles leave a ragged last wave.
    T128x192C2,
    /// 128×160 tiles in 2-CTA clusters with B multicast, 5 stages (N =
    /// 5000: 32 columns of 160 where 128 needs 40).
    T128x160C2,
    /// 128×128 tiles, 6 stages, `wgmma.m64n128k16`.
    T128x128,
    /// 128×128 tiles in 2-CTA clusters with B multicast.
    T128x128C2,
    /// 128×64 tiles, 8 stages, `wgmma.m64n64k16`: few, skinny tiles (small M).
    T128x64,
    /// 128×32 tiles, 8 stages, `wgmma.m64n32k16`: twice the CTAs of
    /// 128×64 where there are few tile rows.
    T128x32,
    /// 256×128 tiles, 4 stages: each consumer warpgroup computes 128 rows
    /// (2 × `wgmma.m64n128k16` per K step). Fewer tile columns than 128-row
    /// tiles of the same area where N is just past a multiple of 256
    /// (N = 4104: 33 columns of 128 against 17 of 256 and twice the rows).
    /// No stream-K.
    T256x128,
    /// 256×128 tiles in 2-CTA clusters with B multicast.
    T256x128C2,
    /// Ping-pong 128×128 tiles, 6 stages: each consumer warpgroup owns
    /// whole tiles (2 × `wgmma.m64n128k16` per K step) and the two take
    /// turns (`baton::ordered_barrier`), so one's epilogue runs under the
    /// other's main loop. No stream-K.
    T128x128PingPong,
    /// Ping-pong 128×128 tiles in 2-CTA clusters with B multicast.
    T128x128PingPongC2,
    /// Swap-AB for small M: tiles of 16 rows of D (the user's M) × 128
    /// columns × 64, computed as `Dᵀ = B·Aᵀ` (`wgmma.m64n16k16`, the
    /// user's N as the MMA's rows; `kernels/src/gemm_bf16_swap_ab.rs`).
    /// No C (beta = 0 only); split-K and stream-K as the cooperative ones.
    SwapAb16,
    /// Swap-AB with 32 rows of D per tile (`wgmma.m64n32k16`).
    SwapAb32,
    /// Swap-AB with 64 rows of D per tile (`wgmma.m64n64k16`).
    SwapAb64,
    /// Narrow swap-AB: 16 rows of D × 64 columns per tile on one consumer
    /// warpgroup (256 threads, 16 stages): twice the CTAs of
    /// [`SwapAb16`](Self::SwapAb16) on one problem.
    SwapAbNarrow16,
    /// Narrow swap-AB with 32 rows of D per tile (16 stages).
    SwapAbNarrow32,
    /// Narrow swap-AB with 64 rows of D per tile (12 stages).
    SwapAbNarrow64,
    /// Narrow swap-AB with 128 rows of D per tile: a 128 × 64 tile of D on
    /// one consumer warpgroup (`wgmma.m64n128k16`, whose operands cost 6
    /// KiB of shared-memory reads per 262 kFLOP where 128×64's two
    /// warpgroups of `m64n64k16` cost 8). No C.
    SwapAbNarrow128,
    /// [`SwapAbNarrow64`](Self::SwapAbNarrow64) in clusters of 2 CTAs along
    /// N that share the user's A tile by TMA multicast (each loads half of
    /// its rows into both CTAs): A leaves L2 once per cluster. Not a
    /// heuristic candidate yet (measured only forced).
    SwapAbNarrow64C2,
    /// [`SwapAbNarrow128`](Self::SwapAbNarrow128) in clusters of 2 sharing
    /// the user's A tile. Not a heuristic candidate yet.
    SwapAbNarrow128C2,
    /// Blackwell (sm_100a): 128×256×64 tiles, 4 stages, `tcgen05.mma` into
    /// two TMEM accumulator stages, 256 threads
    /// (`kernels/roles/src/gemm_sm100.rs`). **Assembled, never run.**
    Sm100T128x256,
}

impl GemmConfig {
    /// Every cooperative sm_90a configuration (both consumer warpgroups on
    /// one tile; they run stream-K).
    pub const ALL: [GemmConfig; 9] = [
        GemmConfig::T128x256C2,
        GemmConfig::T128x256,
        GemmConfig::T128x224C2,
        GemmConfig::T128x192C2,
        GemmConfig::T128x160C2,
        GemmConfig::T128x128C2,
        GemmConfig::T128x128,
        GemmConfig::T128x64,
        GemmConfig::T128x32,
    ];

    /// The ping-pong sm_90a configurations ([`is_pingpong`](Self::is_pingpong)):
    /// no stream-K.
    pub const PINGPONG: [GemmConfig; 2] =
        [GemmConfig::T128x128PingPongC2, GemmConfig::T128x128PingPong];

    /// The tall sm_90a configurations ([`is_tall`](Self::is_tall)): 256-row
    /// tiles, cooperative, no stream-K.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::TALL.iter().all(|c| c.tile() == (256, 128, 64) && !c.runs_stream_k()));
    /// ```
    pub const TALL: [GemmConfig; 2] = [GemmConfig::T256x128C2, GemmConfig::T256x128];

    /// The swap-AB sm_90a configurations ([`is_swap_ab`](Self::is_swap_ab)):
    /// small M, no C.
    pub const SWAP_AB: [GemmConfig; 9] = [
        GemmConfig::SwapAb16,
        GemmConfig::SwapAb32,
        GemmConfig::SwapAb64,
        GemmConfig::SwapAbNarrow16,
        GemmConfig::SwapAbNarrow32,
        GemmConfig::SwapAbNarrow64,
        GemmConfig::SwapAbNarrow128,
        GemmConfig::SwapAbNarrow64C2,
        GemmConfig::SwapAbNarrow128C2,
    ];

    /// Every sm_90a configuration: [`ALL`](Self::ALL), then
    /// [`TALL`](Self::TALL), [`PINGPONG`](Self::PINGPONG) and
    /// [`SWAP_AB`](Self::SWAP_AB).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::SM90.len(), GemmConfig::ALL.len() + GemmConfig::TALL.len() + GemmConfig::PINGPONG.len() + GemmConfig::SWAP_AB.len());
    /// ```
    pub const SM90: [GemmConfig; 22] = [
        GemmConfig::T128x256C2,
        GemmConfig::T128x256,
        GemmConfig::T128x224C2,
        GemmConfig::T128x192C2,
        GemmConfig::T128x160C2,
        GemmConfig::T128x128C2,
        GemmConfig::T128x128,
        GemmConfig::T128x64,
        GemmConfig::T128x32,
        GemmConfig::T256x128C2,
        GemmConfig::T256x128,
        GemmConfig::T128x128PingPongC2,
        GemmConfig::T128x128PingPong,
        GemmConfig::SwapAb16,
        GemmConfig::SwapAb32,
        GemmConfig::SwapAb64,
        GemmConfig::SwapAbNarrow16,
        GemmConfig::SwapAbNarrow32,
        GemmConfig::SwapAbNarrow64,
        GemmConfig::SwapAbNarrow128,
        GemmConfig::SwapAbNarrow64C2,
        GemmConfig::SwapAbNarrow128C2,
    ];

    /// Whether this is a swap-AB configuration (`Dᵀ = B·Aᵀ` for small M;
    /// no C).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::SwapAb16.is_swap_ab());
    /// assert!(!GemmConfig::T128x64.is_swap_ab());
    /// ```
    pub const fn is_swap_ab(self) -> bool {
        matches!(
            self,
            GemmConfig::SwapAb16
                | GemmConfig::SwapAb32
                | GemmConfig::SwapAb64
                | GemmConfig::SwapAbNarrow16
                | GemmConfig::SwapAbNarrow32
                | GemmConfig::SwapAbNarrow64
                | GemmConfig::SwapAbNarrow128
                | GemmConfig::SwapAbNarrow64C2
                | GemmConfig::SwapAbNarrow128C2
        )
    }

    /// Whether this is a narrow swap-AB configuration (64 columns of D per
    /// tile, one consumer warpgroup).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::SwapAbNarrow16.is_narrow_swap_ab());
    /// assert!(!GemmConfig::SwapAb16.is_narrow_swap_ab());
    /// ```
    pub const fn is_narrow_swap_ab(self) -> bool {
        matches!(
            self,
            GemmConfig::SwapAbNarrow16
                | GemmConfig::SwapAbNarrow32
                | GemmConfig::SwapAbNarrow64
                | GemmConfig::SwapAbNarrow128
                | GemmConfig::SwapAbNarrow64C2
                | GemmConfig::SwapAbNarrow128C2
        )
    }

    /// fp32 elements of stream-K / split-K partials per CTA: the tile's
    /// `BM × BN`, one slot of 64 rows × `BN` per consumer warpgroup
    /// (`StreamKFixup<SLOTS_PER_CTA>` in the kernel roles: slot
    /// `block · consumer warpgroups + wg`; the narrow swap-AB kernels have
    /// one).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::SwapAb16.partial_floats(), 16 * 128);
    /// assert_eq!(GemmConfig::SwapAbNarrow16.partial_floats(), 16 * 64);
    /// ```
    pub const fn partial_floats(self) -> u32 {
        let (bm, bn, _) = self.tile();
        bm * bn
    }

    /// Whether this is a ping-pong configuration (each consumer warpgroup
    /// owns whole tiles, in turns); those have no stream-K.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::T128x128PingPong.is_pingpong());
    /// assert!(!GemmConfig::T128x128.is_pingpong());
    /// ```
    pub const fn is_pingpong(self) -> bool {
        matches!(
            self,
            GemmConfig::T128x128PingPong | GemmConfig::T128x128PingPongC2
        )
    }

    /// Whether this is a tall configuration (256-row tiles, each consumer
    /// warpgroup on 128 of them); those have no stream-K.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::T256x128C2.is_tall());
    /// assert!(!GemmConfig::T128x256.is_tall());
    /// ```
    pub const fn is_tall(self) -> bool {
        matches!(self, GemmConfig::T256x128 | GemmConfig::T256x128C2)
    }

    /// Whether the kernel implements stream-K and split-K (the
    /// `sk_*` parameters): the cooperative 128-row configurations
    /// ([`ALL`](Self::ALL)) and swap-AB; not ping-pong, tall or Blackwell.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert!(GemmConfig::T128x64.runs_stream_k() && GemmConfig::SwapAb16.runs_stream_k());
    /// assert!(!GemmConfig::T256x128.runs_stream_k() && !GemmConfig::T128x128PingPong.runs_stream_k());
    /// ```
    pub const fn runs_stream_k(self) -> bool {
        matches!(self.target(), Target::Sm90a) && !self.is_pingpong() && !self.is_tall()
    }

    /// The Blackwell (sm_100a) configurations.
    pub const SM100: [GemmConfig; 1] = [GemmConfig::Sm100T128x256];

    /// The configurations for GPUs of `target`.
    pub const fn for_target(target: Target) -> &'static [GemmConfig] {
        match target {
            Target::Sm90a => &Self::SM90,
            Target::Sm100a => &Self::SM100,
        }
    }

    /// The kernel build this configuration is in.
    pub const fn target(self) -> Target {
        match self {
            GemmConfig::Sm100T128x256 => Target::Sm100a,
            _ => Target::Sm90a,
        }
    }

    /// Threads per CTA, the kernel spec's: 384 on Hopper (a producer
    /// warpgroup and two consumer warpgroups; 256 for the narrow swap-AB
    /// kernels, one consumer warpgroup), 256 on Blackwell (TMA, MMA,
    /// C-load and idle warps, then the epilogue warpgroup).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::T128x256.threads(), 384);
    /// assert_eq!(GemmConfig::SwapAbNarrow64C2.threads(), 256);
    /// assert_eq!(GemmConfig::Sm100T128x256.threads(), 256);
    /// ```
    pub const fn threads(self) -> u32 {
        match self.spec() {
            Some(spec) => spec.threads,
            None => gemm_sm100::GEMM_BF16.threads,
        }
    }

    /// Rows of the epilogue's C and D boxes (the TMA stores' height): one
    /// consumer warpgroup's 64 rows on Hopper, the whole 128-row tile
    /// (one TMEM lane per row) on Blackwell.
    pub const fn epilogue_rows(self) -> u32 {
        match self.target() {
            Target::Sm90a => 64,
            Target::Sm100a => 128,
        }
    }

    /// The kernel's name in the PTX.
    pub const fn kernel(self) -> &'static str {
        match self {
            GemmConfig::Sm100T128x256 => gemm_sm100::GEMM_BF16.name,
            c => match c.spec() {
                Some(s) => s.name,
                None => unreachable!(),
            },
        }
    }

    /// The sm_90a kernel's spec (`kernel_abi::gemm_bf16`); `None` for the
    /// sm_100a configuration (`kernel_abi::gemm_sm100::GEMM_BF16`).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::T128x256C2.spec().unwrap().cluster, [2, 1, 1]);
    /// assert!(GemmConfig::Sm100T128x256.spec().is_none());
    /// ```
    pub const fn spec(self) -> Option<&'static KernelSpec<GemmBf16Params>> {
        Some(match self {
            GemmConfig::T128x256 => &bf16_abi::GEMM_128X256,
            GemmConfig::T128x256C2 => &bf16_abi::GEMM_128X256_C2,
            GemmConfig::T128x224C2 => &bf16_abi::GEMM_128X224_C2,
            GemmConfig::T128x192C2 => &bf16_abi::GEMM_128X192_C2,
            GemmConfig::T128x160C2 => &bf16_abi::GEMM_128X160_C2,
            GemmConfig::T128x128 => &bf16_abi::GEMM_128X128,
            GemmConfig::T128x128C2 => &bf16_abi::GEMM_128X128_C2,
            GemmConfig::T128x64 => &bf16_abi::GEMM_128X64,
            GemmConfig::T128x32 => &bf16_abi::GEMM_128X32,
            GemmConfig::T256x128 => &bf16_abi::GEMM_256X128,
            GemmConfig::T256x128C2 => &bf16_abi::GEMM_256X128_C2,
            GemmConfig::T128x128PingPong => &bf16_abi::GEMM_128X128_PINGPONG,
            GemmConfig::T128x128PingPongC2 => &bf16_abi::GEMM_128X128_PINGPONG_C2,
            GemmConfig::SwapAb16 => &swap_ab_abi::GEMM_SWAP_AB_16,
            GemmConfig::SwapAb32 => &swap_ab_abi::GEMM_SWAP_AB_32,
            GemmConfig::SwapAb64 => &swap_ab_abi::GEMM_SWAP_AB_64,
            GemmConfig::SwapAbNarrow16 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_16,
            GemmConfig::SwapAbNarrow32 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_32,
            GemmConfig::SwapAbNarrow64 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_64,
            GemmConfig::SwapAbNarrow128 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_128,
            GemmConfig::SwapAbNarrow64C2 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_64_C2,
            GemmConfig::SwapAbNarrow128C2 => &swap_ab_abi::GEMM_SWAP_AB_NARROW_128_C2,
            GemmConfig::Sm100T128x256 => return None,
        })
    }

    /// Tile (M, N, K) of D: swap-AB tiles have few rows (16, 32, 64) and
    /// 128 columns (narrow: 64).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::SwapAb16.tile(), (16, 128, 64));
    /// assert_eq!(GemmConfig::SwapAbNarrow64.tile(), (64, 64, 64));
    /// ```
    pub const fn tile(self) -> (u32, u32, u32) {
        match self {
            GemmConfig::SwapAb16 => (16, 128, 64),
            GemmConfig::SwapAb32 => (32, 128, 64),
            GemmConfig::SwapAb64 => (64, 128, 64),
            GemmConfig::SwapAbNarrow16 => (16, swap_ab_abi::NARROW_ROWS, 64),
            GemmConfig::SwapAbNarrow32 => (32, swap_ab_abi::NARROW_ROWS, 64),
            GemmConfig::SwapAbNarrow64 | GemmConfig::SwapAbNarrow64C2 => {
                (64, swap_ab_abi::NARROW_ROWS, 64)
            }
            GemmConfig::SwapAbNarrow128 | GemmConfig::SwapAbNarrow128C2 => {
                (128, swap_ab_abi::NARROW_ROWS, 64)
            }
            GemmConfig::T128x256 | GemmConfig::T128x256C2 | GemmConfig::Sm100T128x256 => {
                (128, 256, 64)
            }
            GemmConfig::T128x224C2 => (128, 224, 64),
            GemmConfig::T128x192C2 => (128, 192, 64),
            GemmConfig::T128x160C2 => (128, 160, 64),
            GemmConfig::T128x128
            | GemmConfig::T128x128C2
            | GemmConfig::T128x128PingPong
            | GemmConfig::T128x128PingPongC2 => (128, 128, 64),
            GemmConfig::T128x64 => (128, 64, 64),
            GemmConfig::T128x32 => (128, 32, 64),
            GemmConfig::T256x128 | GemmConfig::T256x128C2 => (256, 128, 64),
        }
    }

    /// Input stages: as many as the 227 KiB shared-memory budget holds after
    /// the barriers and the epilogue's 8 sub-tiles, at most 8 — the kernel's
    /// own `kernel_abi::gemm_bf16::stages_for` (swap-AB: at most 12,
    /// `kernel_abi::gemm_bf16_swap_ab::swap_ab_stages`).
    pub const fn stages(self) -> u32 {
        if let GemmConfig::Sm100T128x256 = self {
            return 4;
        }
        let (bm, bn, _) = self.tile();
        // Swap-AB: the kernel's tile is 128 × bm (operands swapped), with
        // its own stage count.
        if self.is_narrow_swap_ab() {
            return swap_ab_abi::swap_ab_narrow_stages(bm as usize) as u32;
        }
        if self.is_swap_ab() {
            return swap_ab_abi::swap_ab_stages(bm as usize) as u32;
        }
        bf16_abi::stages_for_tile(bm as usize, bn as usize) as u32
    }

    /// CTAs per cluster along M (sharing B tiles by multicast); for the
    /// swap-AB clusters along the user's N (sharing the user's A), the
    /// kernel's M.
    pub const fn cluster_m(self) -> u32 {
        match self {
            GemmConfig::SwapAbNarrow64C2 | GemmConfig::SwapAbNarrow128C2 => 2,
            GemmConfig::T128x256C2
            | GemmConfig::T128x224C2
            | GemmConfig::T128x192C2
            | GemmConfig::T128x160C2
            | GemmConfig::T128x128C2
            | GemmConfig::T256x128C2
            | GemmConfig::T128x128PingPongC2 => 2,
            _ => 1,
        }
    }

    /// Work units (clusters of tiles) of one M×N matrix: tile rows
    /// grouped by the cluster, times tile columns. Swap-AB clusters lie
    /// along the kernel's M, the user's N.
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// // 33 tile rows of 128 in pairs (17 units) × 16 columns of 256.
    /// assert_eq!(GemmConfig::T128x256C2.work_units(4104, 4096), 17 * 16);
    /// // Swap-AB: 65 tiles of 64 of N, in pairs: 33 units, one column of M.
    /// assert_eq!(GemmConfig::SwapAbNarrow64.work_units(64, 4104), 65);
    /// assert_eq!(GemmConfig::SwapAbNarrow64C2.work_units(64, 4104), 33);
    /// assert_eq!(GemmConfig::SwapAbNarrow128C2.work_units(200, 4104), 2 * 33);
    /// ```
    pub const fn work_units(self, m: u32, n: u32) -> u32 {
        let (bm, bn, _) = self.tile();
        let cluster = self.cluster_m();
        if self.is_swap_ab() {
            n.div_ceil(bn).div_ceil(cluster) * m.div_ceil(bm)
        } else {
            m.div_ceil(bm).div_ceil(cluster) * n.div_ceil(bn)
        }
    }

    /// Short name: `128x256`, `128x256c2`, … (`sm100-128x256` on
    /// Blackwell, `128x128-pingpong` for ping-pong).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// assert_eq!(GemmConfig::T128x128PingPongC2.name(), "128x128c2-pingpong");
    /// ```
    pub fn name(self) -> String {
        let (bm, bn, _) = self.tile();
        let arch = if self.target() == Target::Sm100a {
            "sm100-"
        } else {
            ""
        };
        format!(
            "{arch}{bm}x{bn}{}{}{}",
            match self.cluster_m() {
                1 => String::new(),
                c => format!("c{c}"),
            },
            if self.is_pingpong() { "-pingpong" } else { "" },
            if self.is_swap_ab() { "-swapab" } else { "" }
        )
    }

    /// Dynamic shared memory of the kernel's layout: its spec's
    /// `size_of` the layout (`kernel_abi`), as evaluated on the host — the
    /// GEMM layouts are padded to 1024 bytes, so it equals the device's
    /// (`xtask/tests/kernel_layouts.rs` checks it against the size each
    /// kernel demands in the PTX). Launches use the module's own record
    /// (`TypedKernel::dynamic_smem_bytes`).
    pub const fn smem_bytes(self) -> u32 {
        match self.spec() {
            Some(s) => s.dynamic_smem_bytes,
            None => gemm_sm100::GEMM_BF16.dynamic_smem_bytes,
        }
    }
}

/// Default rasterization group (rows of work units walked together).
pub const DEFAULT_GROUP_M: u32 = 8;

/// Threads per CTA: producer warpgroup + 2 consumer warpgroups.
pub const THREADS: u32 = 384;

/// Checks a GEMM problem; `c_len` is `None` when no C is passed.
///
/// ```
/// use baton_runtime::gemm::{validate, GemmShapeError};
/// assert!(validate(64, 64, 64, 64 * 64, 64 * 64, None, 64 * 64, 0.0).is_ok());
/// assert_eq!(
///     validate(64, 64, 30, 64 * 30, 64 * 30, None, 64 * 64, 0.0),
///     Err(GemmShapeError::RowNotAligned { dim: "K", value: 30 })
/// );
/// ```
#[allow(clippy::too_many_arguments)]
pub fn validate(
    m: usize,
    n: usize,
    k: usize,
    a_len: usize,
    b_len: usize,
    c_len: Option<usize>,
    d_len: usize,
    beta: f32,
) -> std::result::Result<(), GemmShapeError> {
    if m == 0 || n == 0 || k == 0 {
        return Err(GemmShapeError::EmptyDimension { mnk: (m, n, k) });
    }
    if m >= 1 << 31 || n >= 1 << 31 || k >= 1 << 31 {
        return Err(GemmShapeError::TooLarge { mnk: (m, n, k) });
    }
    if !k.is_multiple_of(8) {
        return Err(GemmShapeError::RowNotAligned { dim: "K", value: k });
    }
    if !n.is_multiple_of(8) {
        return Err(GemmShapeError::RowNotAligned { dim: "N", value: n });
    }
    let check = |operand, expected: usize, got: usize| {
        if expected == got {
            Ok(())
        } else {
            Err(GemmShapeError::WrongLength {
                operand,
                expected,
                got,
            })
        }
    };
    check("A", m * k, a_len)?;
    check("B", n * k, b_len)?;
    check("D", m * n, d_len)?;
    match c_len {
        Some(c) => check("C", m * n, c)?,
        None if beta != 0.0 => return Err(GemmShapeError::MissingC),
        None => {}
    }
    Ok(())
}

/// A GEMM bound to its operands: shape validated, tensor maps encoded
/// once (on Hopper kept on the host and passed by value in the kernel
/// parameters), so [`run`](Self::run) only launches the kernel: it
/// allocates nothing and never synchronizes, so it can be captured in a
/// CUDA graph. Holds the operands borrowed (D mutably) for as long as it
/// lives.
pub struct GemmPlan<'a> {
    config: GemmConfig,
    kernel: PlanKernel,
    maps: PlanMaps,
    m: u32,
    n: u32,
    k: u32,
    has_c: bool,
    /// `M mod BM` (sm_90a kernels load the ragged last tile row through a
    /// map of just its rows; swap-AB: `N mod 128`, B's last tile row), else 0.
    tail_rows: u32,
    group_m: u32,
    /// Work units (clusters) that can run at once: SMs, or for clusters the
    /// driver's count of co-resident clusters.
    slots: u32,
    /// Stream-K workspace, when enabled.
    stream_k: Option<StreamKWorkspace>,
    /// Which kernel operands are MN-major (the entry's layout).
    layouts: Bf16Layouts,
    /// Matrices in the batch.
    batch: usize,
    /// Matrices per launch: the whole batch, or 1 when an operand's batch
    /// stride does not fit a rank-3 map (one launch per matrix).
    launch_batch: u32,
    /// The kernel's `batch_broadcast` (inputs shared by the batch).
    batch_broadcast: u32,
    /// The operand copied before each launch to rows 128 bytes apart
    /// ([`Repack`]), if any.
    repack: Option<RepackCopy>,
    _operands: std::marker::PhantomData<(&'a CudaSlice<u16>, &'a mut CudaSlice<u16>)>,
}

/// A plan's re-packed operand: the caller's matrix, and the buffer the
/// kernel reads instead (rows `ld` elements apart), owned by the plan,
/// filled by `copier` before each launch.
struct RepackCopy {
    which: Repack,
    copier: CopyKernel,
    src: RowMajorOperand,
    buffer: CudaSlice<u16>,
    ld: u64,
}

/// The kernel operands of a (batched) BF16 GEMM `D = alpha·A·Bᵀ + beta·C`:
/// A M×K, B N×K, C and D M×N, all row-major — except that an M-major A is
/// stored K×M and an N-major B K×N (row-major, `layouts`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bf16Operands {
    pub a: RowMajorOperand,
    pub b: RowMajorOperand,
    pub layouts: Bf16Layouts,
    pub c: Option<RowMajorOperand>,
    pub d: RowMajorOperand,
    pub batch: usize,
}

impl Bf16Operands {
    /// Whether an operand may be re-packed ([`Repack`]): one matrix per
    /// operand, A and B both K-major.
    fn repackable(&self) -> bool {
        self.batch == 1 && !self.layouts.a_m_major && !self.layouts.b_n_major
    }
}

/// A plan's tensor maps: by value per batch (sm_90a), or uploaded
/// (sm_100a, whose kernel still takes pointers).
enum PlanMaps {
    ByValue(Vec<[TensorMapParam; 5]>),
    Uploaded(DeviceTensorMaps),
}

impl<'a> GemmPlan<'a> {
    /// Validates the problem (typed error before anything runs: zero or
    /// misaligned dimensions, wrong lengths, D overlapping an input) and
    /// prepares the tensor maps for A (M×K), B (N×K), C (M×N, optional) and
    /// D (M×N). Picks the tile configuration and split-K count by the
    /// heuristic ([`GemmConfig::plan_for`]: split-K where the units leave
    /// SMs idle), else turns stream-K on (last wave only) where
    /// [`stream_k_pays`] — neither while the GPU's stream is capturing a
    /// CUDA graph (their per-launch epochs cannot be replayed).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        a: &'a CudaSlice<u16>,
        b: &'a CudaSlice<u16>,
        c: Option<&'a CudaSlice<u16>>,
        d: &'a mut CudaSlice<u16>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Self> {
        validate(m, n, k, a.len(), b.len(), c.map(|c| c.len()), d.len(), 0.0)?;
        let ops = packed_operands(gpu, a, b, c, d, m, n, k);
        Self::for_operands(gpu, kernels, None, ops, (m, n, k))
    }

    /// [`new`](Self::new) with an explicit tile configuration (tuning).
    #[allow(clippy::too_many_arguments)]
    pub fn with_config(
        gpu: &Gpu,
        kernels: &Kernels,
        config: GemmConfig,
        a: &'a CudaSlice<u16>,
        b: &'a CudaSlice<u16>,
        c: Option<&'a CudaSlice<u16>>,
        d: &'a mut CudaSlice<u16>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Self> {
        Self::with_config_repacked(gpu, kernels, config, None, a, b, c, d, m, n, k)
    }

    /// [`with_config`](Self::with_config) with `repack` (if any) read
    /// from a copy the plan makes before each launch, rows 128 bytes apart
    /// ([`Repack`]; tuning, and what [`new`](Self::new) picks where the
    /// cost model says it pays: [`plan_with_repack`]). No split- or
    /// stream-K ([`set_split_k`](Self::set_split_k) turns them on).
    ///
    /// ```no_run
    /// # use baton_runtime::{Gpu, Variant, gemm::{GemmConfig, GemmPlan, Repack}};
    /// # let gpu = Gpu::new(0)?;
    /// # let kernels = gpu.load_kernels(Variant::Release)?;
    /// let (m, n, k) = (4096, 4104, 2056); // rows of A and B 4112 bytes apart
    /// let a = gpu.stream().alloc_zeros::<u16>(m * k)?;
    /// let b = gpu.stream().alloc_zeros::<u16>(n * k)?;
    /// let mut d = gpu.stream().alloc_zeros::<u16>(m * n)?;
    /// let plan = GemmPlan::with_config_repacked(&gpu, &kernels, GemmConfig::T128x256C2,
    ///     Some(Repack::B), &a, &b, None, &mut d, m, n, k)?;
    /// assert_eq!(plan.repack(), Some(Repack::B));
    /// plan.run(&gpu, 1.0, 0.0)?; // copies B, then the GEMM reads the copy
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn with_config_repacked(
        gpu: &Gpu,
        kernels: &Kernels,
        config: GemmConfig,
        repack: Option<Repack>,
        a: &'a CudaSlice<u16>,
        b: &'a CudaSlice<u16>,
        c: Option<&'a CudaSlice<u16>>,
        d: &'a mut CudaSlice<u16>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Self> {
        validate(m, n, k, a.len(), b.len(), c.map(|c| c.len()), d.len(), 0.0)?;
        let ops = packed_operands(gpu, a, b, c, d, m, n, k);
        Self::build(gpu, kernels, config, repack, ops, (m, n, k))
    }

    /// The operand this plan copies to rows 128 bytes apart before each
    /// launch ([`Repack`]), if any.
    ///
    /// ```no_run
    /// # use baton_runtime::{Gpu, Variant, gemm::GemmPlan};
    /// # let gpu = Gpu::new(0)?;
    /// # let kernels = gpu.load_kernels(Variant::Release)?;
    /// let (m, n, k) = (256, 256, 256); // rows 512 bytes apart: aligned
    /// let a = gpu.stream().alloc_zeros::<u16>(m * k)?;
    /// let b = gpu.stream().alloc_zeros::<u16>(n * k)?;
    /// let mut d = gpu.stream().alloc_zeros::<u16>(m * n)?;
    /// assert_eq!(GemmPlan::new(&gpu, &kernels, &a, &b, None, &mut d, m, n, k)?.repack(), None);
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn repack(&self) -> Option<Repack> {
        self.repack.as_ref().map(|r| r.which)
    }

    /// The plan of validated operands: `config` or the heuristic's choice
    /// (then with stream-K where it pays); D must not overlap A or B.
    pub(crate) fn for_operands(
        gpu: &Gpu,
        kernels: &Kernels,
        config: Option<GemmConfig>,
        ops: Bf16Operands,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        let Some(config) = config else {
            let slots = |c: GemmConfig| {
                if c.cluster_m() == 1 {
                    return gpu.sm_count();
                }
                kernels
                    .shared(c.kernel())
                    .and_then(|k| {
                        k.max_active_clusters((c.cluster_m(), 1, 1), c.threads(), c.smem_bytes())
                    })
                    .unwrap_or(0)
            };
            // What the heuristic plans for: those slots, and the cost model
            // at this device's DRAM bandwidth.
            let device = OnGpu {
                slots_of: slots,
                dram_bytes_per_s: gpu.dram_bytes_per_s(),
            };
            // Swap-AB (small M) only without C and with K-major A and B:
            // its epilogue has no C, its loads no transpose.
            let no_swap_ab = ops.c.is_some() || ops.layouts.a_m_major || ops.layouts.b_n_major;
            let capturing = may_be_capturing(gpu);
            // One K-major matrix per operand, not capturing (the copy's
            // buffer is allocated here): the rows' alignment is priced, and
            // an operand may be re-packed where that pays.
            let repackable = gpu.target() == Target::Sm90a && ops.repackable() && !capturing;
            let (chosen, splits, repack) = if repackable {
                let p = plan_with_repack(
                    m,
                    n,
                    k,
                    (ops.a.ld as usize, ops.b.ld as usize),
                    no_swap_ab,
                    device,
                );
                (p.config, p.splits, p.repack)
            } else {
                let (c, s) =
                    GemmConfig::plan_for_operands(gpu.target(), m, n, k, no_swap_ab, device);
                (c, s, None)
            };
            // MN-major operands: the nearest configuration with such
            // entries (its split-K count is the heuristic's business: none).
            let config = ops.layouts.config_for(chosen);
            let splits = if config == chosen { splits } else { 1 };
            let mut plan = Self::build(gpu, kernels, config, repack, ops, (m, n, k))?;
            // Not while the stream captures a graph: a replay would repeat
            // the launch's split-K / stream-K epoch (GemmError::StreamKInGraph).
            if capturing {
                return Ok(plan);
            }
            // The heuristic's split count is for one matrix; a batch in one
            // launch has `launch_batch` times the units: at most as many
            // workers as fit at once.
            let splits = splits.min(plan.slots / plan.units().max(1));
            if splits > 1 {
                plan.set_split_k(gpu, splits)?;
            } else if config.runs_stream_k() && stream_k_pays(plan.units(), plan.slots) {
                plan.set_stream_k(gpu, Some(STREAM_K_MIN_SEGMENT))?;
                plan.set_stream_k_extra_waves(0)?;
            }
            return Ok(plan);
        };
        Self::build(gpu, kernels, config, None, ops, (m, n, k))
    }

    /// The plan of `config` on validated operands, `repack` (if any) read
    /// from a copy at rows 128 bytes apart ([`RepackCopy`]).
    fn build(
        gpu: &Gpu,
        kernels: &Kernels,
        config: GemmConfig,
        repack: Option<Repack>,
        ops: Bf16Operands,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        let Some(which) = repack else {
            return Self::build_given(gpu, kernels, config, ops, (m, n, k));
        };
        // The caller's operands (build_given checks the copy's).
        refuse_output_overlap(&ops)?;
        if !ops.repackable() {
            return Err(MatrixError::NotSupported {
                what: "re-packing an operand of a batch or an MN-major operand",
                gemm: "BF16 GEMM plan",
                allowed: "Repack::A or Repack::B with one K-major matrix per operand",
            }
            .into());
        }
        let src = match which {
            Repack::A => ops.a,
            Repack::B => ops.b,
        };
        let copier = CopyKernel::new(gpu, kernels)?;
        let ld = repacked_ld(k) as u64;
        let stream = gpu.stream();
        let mut buffer = stream.alloc_zeros::<u16>(src.rows as usize * ld as usize)?;
        let address = {
            let (p, _sync) = buffer.device_ptr_mut(stream);
            p
        };
        let copy = RowMajorOperand {
            address,
            ld,
            batch_stride: src.rows * ld,
            ..src
        };
        let mut ops = ops;
        match which {
            Repack::A => ops.a = copy,
            Repack::B => ops.b = copy,
        }
        let mut plan = Self::build_given(gpu, kernels, config, ops, (m, n, k))?;
        plan.repack = Some(RepackCopy {
            which,
            copier,
            src,
            buffer,
            ld,
        });
        Ok(plan)
    }

    /// The plan of `config` on validated operands as given.
    fn build_given(
        gpu: &Gpu,
        kernels: &Kernels,
        config: GemmConfig,
        ops: Bf16Operands,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        if config.target() != gpu.target() {
            return Err(GemmError::WrongTarget {
                kernel: config.name(),
                runs_on: config.target(),
                gpu: gpu.target(),
            }
            .into());
        }
        refuse_output_overlap(&ops)?;
        if config.is_swap_ab() && ops.c.is_some() {
            return Err(MatrixError::NotSupported {
                what: "C (beta ≠ 0)",
                gemm: "swap-AB BF16 GEMM (GemmConfig::SWAP_AB)",
                allowed: "D = alpha·A·Bᵀ without C; the other configurations take C",
            }
            .into());
        }
        let spec = ops.layouts.spec(config)?;
        let (a_mn, b_mn) = (ops.layouts.a_m_major, ops.layouts.b_n_major);
        let (bm, bn, bk) = config.tile();
        if config.is_swap_ab() {
            // Dᵀ = B·Aᵀ: B's rows fill the kernel's `bn`-row tiles (128, or
            // 64 narrow; its ragged last tile row through the tail map),
            // A's rows (at most `bm` per tile) are the MMA's N, with a box
            // of min(M, bm) rows so that M < bm loads no zero fill; D is
            // stored transposed in boxes of 32 columns × min(M, bm) rows.
            let tail_rows = (n % bn as usize) as u32;
            let d_rows = bm.min(m as u32);
            // In clusters each CTA loads its share of A's tile rows (rows
            // past M zero-filled).
            let a_box = match config.cluster_m() {
                1 => d_rows,
                cluster => bm / cluster,
            };
            // The epilogue stores D in boxes of at most 64 rows (two per 32
            // columns with 128 rows of D per tile).
            let d_box = d_rows.min(64);
            let batch_maps = |b: usize| -> Result<[EncodedTensorMap; 5]> {
                let kernel_a = ops.b.map(b, bn, bk, Swizzle::B128)?;
                let d = ops.d.map(b, d_box, 32, Swizzle::B64)?;
                Ok([
                    kernel_a,
                    ops.a.map(b, a_box, bk, Swizzle::B128)?,
                    d,
                    d,
                    if tail_rows == 0 {
                        kernel_a
                    } else {
                        ops.b.map(b, tail_rows, bk, Swizzle::B128)?
                    },
                ])
            };
            let Some(spec) = config.spec() else {
                unreachable!("swap-AB configurations are sm_90a")
            };
            let maps = (0..ops.batch)
                .map(|b| Ok(batch_maps(b)?.map(param)))
                .collect::<Result<Vec<_>>>()?;
            let kernel = kernels.kernel(spec)?;
            let slots = cluster_slots(gpu, kernel.kernel(), config, kernel.dynamic_smem_bytes())?;
            return Ok(Self {
                config,
                kernel: PlanKernel::Sm90(kernel),
                maps: PlanMaps::ByValue(maps),
                m: m as u32,
                n: n as u32,
                k: k as u32,
                has_c: false,
                tail_rows,
                group_m: DEFAULT_GROUP_M,
                slots,
                stream_k: None,
                layouts: ops.layouts,
                batch: ops.batch,
                // One launch per matrix (rank-2 maps).
                launch_batch: 1,
                batch_broadcast: 0,
                repack: None,
                _operands: std::marker::PhantomData,
            });
        }
        let tail_rows = (m % bm as usize) as u32;
        // An M-major A has no tail map (its 64-row boxes are loaded whole).
        let tail_box = if tail_rows == 0 || a_mn {
            bm
        } else {
            tail_rows
        };
        // Each encode is a driver call of about 3 µs (H100): a map equal to
        // one already encoded is copied (no C: C's map is D's; M a multiple
        // of BM: the tail map is A's).
        // The maps of matrices `first..first + count`: rank 3 for the
        // sm_90a kernels (a batch in one launch), rank 2 (count 1) for
        // sm_100a's.
        let batch_maps = |first: usize, count: usize, rank3: bool| {
            move |op: &RowMajorOperand, rows: u32, cols: u32, swizzle: Swizzle| match rank3 {
                true => op.map_batch(first, count, rows, cols, swizzle),
                false => op.map(first, rows, cols, swizzle),
            }
        };
        let maps_of = |first: usize, count: usize, rank3: bool| -> Result<[EncodedTensorMap; 5]> {
            let map = batch_maps(first, count, rank3);
            // MN-major: 64 (K) rows of 64 elements (M or N) per box.
            let a = match a_mn {
                false => map(&ops.a, bm, bk, Swizzle::B128)?,
                true => map(&ops.a, bk, 64, Swizzle::B128)?,
            };
            let d = map(&ops.d, config.epilogue_rows(), 32, Swizzle::B64)?;
            Ok([
                a,
                match b_mn {
                    false => map(&ops.b, bn / config.cluster_m(), bk, Swizzle::B128)?,
                    true => map(&ops.b, bk, 64, Swizzle::B128)?,
                },
                match &ops.c {
                    Some(c) => map(c, config.epilogue_rows(), 32, Swizzle::B64)?,
                    None => d,
                },
                d,
                // sm_90a: the last tile row's A when M mod BM ≠ 0, a box of
                // just its rows (TMA's zero fill of a full box is slow);
                // never read otherwise.
                if tail_box == bm {
                    a
                } else {
                    map(&ops.a, tail_box, bk, Swizzle::B128)?
                },
            ])
        };
        // One launch for the whole batch when every operand fits one
        // rank-3 map (TMA: a batch stride of 0 or of at least a whole
        // matrix); otherwise one launch per matrix.
        let one_launch = [Some(&ops.a), Some(&ops.b), ops.c.as_ref(), Some(&ops.d)]
            .into_iter()
            .flatten()
            .all(|op| op.fits_one_map(ops.batch));
        let shared = |op: &RowMajorOperand, bit: u32| {
            if ops.batch > 1 && op.batch_stride == 0 {
                bit
            } else {
                0
            }
        };
        let broadcast = shared(&ops.a, BROADCAST_A)
            | shared(&ops.b, BROADCAST_B)
            | ops.c.as_ref().map_or(0, |c| shared(c, BROADCAST_C));
        let (kernel, maps, launch_batch, batch_broadcast) = match spec {
            Some(spec) => {
                let (maps, launch_batch, broadcast) = if one_launch {
                    (
                        vec![maps_of(0, ops.batch, true)?.map(param)],
                        ops.batch,
                        broadcast,
                    )
                } else {
                    let maps = (0..ops.batch)
                        .map(|b| Ok(maps_of(b, 1, true)?.map(param)))
                        .collect::<Result<Vec<_>>>()?;
                    (maps, 1, 0)
                };
                (
                    PlanKernel::Sm90(kernels.kernel(spec)?),
                    PlanMaps::ByValue(maps),
                    launch_batch as u32,
                    broadcast,
                )
            }
            None => {
                if ops.batch != 1 {
                    return Err(MatrixError::NotSupported {
                        what: "batch > 1",
                        gemm: "sm_100a BF16 GEMM",
                        allowed: "one matrix per operand",
                    }
                    .into());
                }
                let maps = tensor_map::upload(gpu, &maps_of(0, 1, false)?)?;
                (
                    PlanKernel::Sm100(kernels.kernel(&gemm_sm100::GEMM_BF16)?),
                    PlanMaps::Uploaded(maps),
                    1,
                    0,
                )
            }
        };
        let slots = cluster_slots(gpu, kernel.kernel(), config, kernel.dynamic_smem_bytes())?;
        Ok(Self {
            config,
            kernel,
            maps,
            m: m as u32,
            n: n as u32,
            k: k as u32,
            has_c: ops.c.is_some(),
            tail_rows,
            group_m: DEFAULT_GROUP_M,
            slots,
            stream_k: None,
            layouts: ops.layouts,
            batch: ops.batch,
            launch_batch,
            batch_broadcast,
            repack: None,
            _operands: std::marker::PhantomData,
        })
    }

    /// Rasterization: how many rows of work units (cluster tiles) the
    /// persistent schedule walks together, column by column, for L2 reuse
    /// (default [`DEFAULT_GROUP_M`]). Panics if 0.
    pub fn set_group_m(&mut self, group_m: u32) {
        assert!(group_m >= 1, "group_m must be at least 1");
        self.group_m = group_m;
    }

    /// Stream-K: with `Some(min_segment)` (≥ 1 K blocks of 64), every
    /// resident worker (CTA or cluster) is launched, and the work units
    /// left over after the last full wave (plus one wave) are split along K
    /// across all workers, segments of at least `min_segment` K blocks
    /// (`baton::protocol::tile_scheduler::StreamKSchedule`); `None` (the
    /// default) computes every unit whole. Allocates the fixup workspace
    /// (one fp32 tile and two flags per CTA: 17 MB for 132 CTAs of
    /// 128×256) once; `run` gives each launch a new epoch, so the flags are
    /// never cleared.
    ///
    /// Errors: `min_segment == 0`; [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory) when the
    /// workspace does not fit (the plan is then unchanged and still usable).
    pub fn set_stream_k(&mut self, gpu: &Gpu, min_segment: Option<u32>) -> Result<()> {
        let Some(min_segment) = min_segment else {
            self.stream_k = None;
            return Ok(());
        };
        if !self.config.runs_stream_k() {
            return Err(GemmError::NoStreamK {
                kernel: self.config.name(),
                rule: "stream-K is implemented by the cooperative 128-row sm_90a configurations (GemmConfig::ALL) and swap-AB only",
            }
            .into());
        }
        let grid = self.slots * self.config.cluster_m();
        let floats = self.config.partial_floats();
        self.stream_k = Some(StreamKWorkspace::new(gpu, min_segment, grid, floats)?);
        Ok(())
    }

    /// Stream-K: the full waves added to the stream-K region before the
    /// last, partial one (default 1; 0 splits only the last wave's units).
    /// Errors when stream-K is off.
    pub fn set_stream_k_extra_waves(&mut self, waves: u32) -> Result<()> {
        StreamKWorkspace::set_extra_waves_of(self.stream_k.as_ref(), waves)
    }

    /// Split-K: each work unit's K blocks are cut into `splits` contiguous
    /// ranges (±1 K block) on `splits` workers, `units · splits` workers
    /// in all (the stream-K schedule on that grid). Each unit's first
    /// worker adds the others' fp32 partials in worker order, so the result
    /// has the same bits on every launch. `splits == 1` turns split-K (and
    /// stream-K) off. Allocates one fp32 tile and two flags per CTA.
    ///
    /// Errors: [`GemmError::SplitKCount`] unless `1 ≤ splits ≤ min(slots /
    /// units, K blocks)` (every worker resident: a unit's first worker
    /// waits for the others); [`GemmError::NoStreamK`] on sm_100a.
    ///
    /// ```no_run
    /// # fn f(gpu: &baton_runtime::Gpu, k: &baton_runtime::Kernels) -> baton_runtime::Result<()> {
    /// use baton_runtime::gemm::GemmPlan;
    /// let (m, n, kk) = (8, 1024, 32768);
    /// let a = gpu.stream().alloc_zeros::<u16>(m * kk)?;
    /// let b = gpu.stream().alloc_zeros::<u16>(n * kk)?;
    /// let mut d = gpu.stream().alloc_zeros::<u16>(m * n)?;
    /// let mut plan = GemmPlan::new(gpu, k, &a, &b, None, &mut d, m, n, kk)?;
    /// plan.set_split_k(gpu, 4)?; // 16 tiles of 128×64 on 64 CTAs
    /// assert_eq!(plan.split_k(), Some(4));
    /// plan.run(gpu, 1.0, 0.0)?;
    /// # Ok(()) }
    /// ```
    pub fn set_split_k(&mut self, gpu: &Gpu, splits: u32) -> Result<()> {
        if !self.config.runs_stream_k() {
            return Err(GemmError::NoStreamK {
                kernel: self.config.name(),
                rule: "split-K is implemented by the cooperative 128-row sm_90a configurations (GemmConfig::ALL) and swap-AB only",
            }
            .into());
        }
        let shape = (self.units(), self.k_blocks(), self.slots);
        if splits == 1 {
            super::stream_k::check_split_k(splits, shape.0, shape.1, shape.2)?;
            self.stream_k = None;
            return Ok(());
        }
        let ws = StreamKWorkspace::split_k(
            gpu,
            splits,
            shape,
            self.config.cluster_m(),
            self.config.partial_floats(),
        )?;
        self.stream_k = Some(ws);
        Ok(())
    }

    /// Workers per unit when split-K is on ([`set_split_k`](Self::set_split_k)).
    pub fn split_k(&self) -> Option<u32> {
        self.stream_k.as_ref().and_then(StreamKWorkspace::splits)
    }

    /// The stream-K region's extra full waves, or `None` when stream-K is off.
    pub fn stream_k_extra_waves(&self) -> Option<u32> {
        self.stream_k.as_ref().map(StreamKWorkspace::extra_waves)
    }

    /// The stream-K minimum segment, or `None` when stream-K is off.
    pub fn stream_k(&self) -> Option<u32> {
        self.stream_k.as_ref().map(StreamKWorkspace::min_segment)
    }

    /// The tile configuration this plan launches.
    pub fn config(&self) -> GemmConfig {
        self.config
    }

    /// Which of the kernel's operands are MN-major (the entry the plan
    /// launches: [`Bf16Layouts::spec`]); K-major for the slice APIs.
    pub fn layouts(&self) -> Bf16Layouts {
        self.layouts
    }

    /// CTAs launched: one per SM, or fewer when there are fewer tiles
    /// (with stream-K: every resident worker).
    pub fn grid(&self) -> u32 {
        if let Some(w) = &self.stream_k {
            return w.grid();
        }
        self.units().min(self.slots) * self.config.cluster_m()
    }

    /// Work units (clusters of tiles) of one launch: one matrix's, times
    /// the matrices of the batch it computes.
    fn units(&self) -> u32 {
        self.config.work_units(self.m, self.n) * self.launch_batch
    }

    /// K blocks of a work unit (the kernel's `k.div_ceil(BK)`).
    fn k_blocks(&self) -> u32 {
        self.k.div_ceil(self.config.tile().2)
    }

    /// Matrices in the batch (1 for the slice APIs).
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Kernel launches per [`run`](Self::run): 1 — the whole batch in one
    /// launch (rank-3 tensor maps, units = batch × tiles) — unless an
    /// operand's batch stride is nonzero but smaller than one matrix
    /// (`rows · ld`: overlapping matrices, which TMA's third dimension
    /// cannot describe); then one launch per matrix. A batch stride of 0
    /// (one input shared by the batch) stays one launch.
    pub fn launches(&self) -> usize {
        match &self.maps {
            PlanMaps::ByValue(maps) => maps.len(),
            PlanMaps::Uploaded(_) => 1,
        }
    }

    /// Enqueues `D = alpha·A·Bᵀ + beta·C` on the GPU's stream
    /// ([`launches`](Self::launches): one for the whole batch, or one per
    /// matrix). `beta ≠ 0` needs a plan made with C.
    /// Allocates no device memory and never synchronizes: the launches can
    /// be captured in a CUDA graph and replayed (the operands are read
    /// where the plan's views point, so new data in the same buffers is
    /// multiplied on replay) — except with stream-K on, whose per-launch
    /// epoch a replay would repeat ([`GemmError::StreamKInGraph`]).
    pub fn run(&self, gpu: &Gpu, alpha: f32, beta: f32) -> Result<()> {
        if beta != 0.0 && !self.has_c {
            return Err(GemmShapeError::MissingC.into());
        }
        if self.stream_k.is_some() {
            refuse_stream_k_capture(gpu)?;
        }
        if let Some(r) = &self.repack {
            let (dst, _sync) = r.buffer.device_ptr(gpu.stream());
            // SAFETY: `src` is the caller's operand, borrowed for the plan's
            // lifetime and validated in `for_operands`; `buffer` holds
            // `rows · ld` elements and only this plan's launches, enqueued
            // after the copy on the same stream, read it.
            unsafe { repack::enqueue_copy(gpu.stream(), &r.copier, &r.src, dst, r.ld)? };
        }
        let grid = self.grid();
        match (&self.kernel, &self.maps) {
            (PlanKernel::Sm100(k), PlanMaps::Uploaded(maps)) => {
                let params = Sm100GemmParams {
                    tma_a: maps.ptr(0) as *const _,
                    tma_b: maps.ptr(1) as *const _,
                    tma_c: maps.ptr(2) as *const _,
                    tma_d: maps.ptr(3) as *const _,
                    m: self.m,
                    n: self.n,
                    k: self.k,
                    group_m: self.group_m,
                    alpha,
                    beta,
                };
                // SAFETY: the tensor maps point at operands borrowed for the
                // plan's lifetime, validated in `new`.
                unsafe { k.launch(gpu.stream(), grid, &params) }
            }
            (PlanKernel::Sm90(k), PlanMaps::ByValue(maps)) => {
                // Swap-AB kernels compute Dᵀ = B·Aᵀ: their M is the user's N.
                let (m, n) = if self.config.is_swap_ab() {
                    (self.n, self.m)
                } else {
                    (self.m, self.n)
                };
                for [tma_a, tma_b, tma_c, tma_d, tma_a_tail] in maps.iter().copied() {
                    let sk_params = StreamKWorkspace::launch_params(
                        self.stream_k.as_ref(),
                        self.units(),
                        self.k_blocks(),
                        self.config.cluster_m(),
                    );
                    let params = GemmBf16Params {
                        tma_a,
                        tma_b,
                        tma_c,
                        tma_d,
                        tma_a_tail,
                        m,
                        n,
                        k: self.k,
                        group_m: self.group_m,
                        alpha,
                        beta,
                        stream_k: sk_params,
                        tail_rows: self.tail_rows,
                        batch: self.launch_batch,
                        batch_broadcast: self.batch_broadcast,
                    };
                    // Programmatic dependent launch (opt-in, `BATON_PDL=1`):
                    // every sm_90a GEMM entry waits for its predecessors
                    // (`griddepcontrol.wait` in `init_then_sync`) before its
                    // roles touch memory.
                    let cfg = LaunchConfig {
                        programmatic: programmatic_launch_enabled(),
                        ..k.launch_config(grid)
                    };
                    // SAFETY: the stream-K workspace is off (null,
                    // min_segment 0) or sized for this grid, each launch
                    // with a new epoch; the tensor maps describe operands
                    // borrowed for the plan's lifetime, validated in
                    // `for_operands`; `cfg` is the spec's own configuration.
                    unsafe { k.launch_with(gpu.stream(), &cfg, &params)? }
                }
                Ok(())
            }
            _ => unreachable!("sm_90a plans keep their maps by value, sm_100a plans uploaded"),
        }
    }
}

/// [`GemmError::OutputOverlapsInput`] when D overlaps A or B.
fn refuse_output_overlap(ops: &Bf16Operands) -> Result<()> {
    let (d_start, d_bytes) = (ops.d.address, ops.d.span_bytes(ops.batch));
    if ranges_overlap(d_start, d_bytes, ops.a.address, ops.a.span_bytes(ops.batch))
        || ranges_overlap(d_start, d_bytes, ops.b.address, ops.b.span_bytes(ops.batch))
    {
        return Err(GemmError::OutputOverlapsInput {
            inputs: "A and B",
            may_alias_c: true,
        }
        .into());
    }
    Ok(())
}

/// Whether `gpu`'s stream may be capturing a graph (a failed query counts
/// as capturing): what a plan made now must not allocate for or split.
pub(crate) fn may_be_capturing(gpu: &Gpu) -> bool {
    refuse_stream_k_capture(gpu).is_err()
}

/// [`GemmError::StreamKInGraph`] when `gpu`'s stream is capturing a graph.
pub(crate) fn refuse_stream_k_capture(gpu: &Gpu) -> Result<()> {
    use cudarc::driver::sys::CUstreamCaptureStatus as Status;
    match gpu.stream().capture_status()? {
        Status::CU_STREAM_CAPTURE_STATUS_NONE => Ok(()),
        _ => Err(GemmError::StreamKInGraph.into()),
    }
}

/// Packed operands of the slice APIs (lengths validated).
#[allow(clippy::too_many_arguments)]
fn packed_operands(
    gpu: &Gpu,
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    c: Option<&CudaSlice<u16>>,
    d: &mut CudaSlice<u16>,
    m: usize,
    n: usize,
    k: usize,
) -> Bf16Operands {
    let stream = gpu.stream();
    let ptr_of = |s: &CudaSlice<u16>| {
        let (p, _sync) = s.device_ptr(stream);
        p
    };
    let d_ptr = {
        let (p, _sync) = d.device_ptr_mut(stream);
        p
    };
    let op = |address, rows, cols| RowMajorOperand::packed(address, ElemType::BF16, rows, cols);
    Bf16Operands {
        a: op(ptr_of(a), m, k),
        b: op(ptr_of(b), n, k),
        layouts: Bf16Layouts::K_MAJOR,
        c: c.map(|c| op(ptr_of(c), m, n)),
        d: op(d_ptr, m, n),
        batch: 1,
    }
}

/// The typed kernel a plan launches: one parameter struct per target.
enum PlanKernel {
    Sm90(TypedKernel<GemmBf16Params>),
    Sm100(TypedKernel<Sm100GemmParams>),
}

/// Work units of `config` resident at once: one per SM, or for clusters
/// the clusters the driver can keep resident (`Kernel::max_active_clusters`
/// of `kernel` with `smem` bytes of dynamic shared memory; at least 1).
fn cluster_slots(gpu: &Gpu, kernel: &Kernel, config: GemmConfig, smem: u32) -> Result<u32> {
    Ok(match config.cluster_m() {
        1 => gpu.sm_count(),
        cluster => kernel
            .max_active_clusters((cluster, 1, 1), config.threads(), smem)?
            .max(1),
    })
}

impl PlanKernel {
    fn kernel(&self) -> &Kernel {
        match self {
            PlanKernel::Sm90(k) => k.kernel(),
            PlanKernel::Sm100(k) => k.kernel(),
        }
    }

    /// The module's dynamic shared memory of the kernel.
    fn dynamic_smem_bytes(&self) -> u32 {
        match self {
            PlanKernel::Sm90(k) => k.dynamic_smem_bytes(),
            PlanKernel::Sm100(k) => k.dynamic_smem_bytes(),
        }
    }
}

/// One-shot safe GEMM: `D = alpha·A·Bᵀ + beta·C` on the GPU's stream
/// (validates, encodes the tensor maps, launches). For repeated calls on
/// the same operands, keep a [`GemmPlan`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_bf16(
    gpu: &Gpu,
    kernels: &Kernels,
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    c: Option<&CudaSlice<u16>>,
    d: &mut CudaSlice<u16>,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
) -> Result<()> {
    GemmPlan::new(gpu, kernels, a, b, c, d, m, n, k)?.run(gpu, alpha, beta)
}

/// f32 → bf16 bits, round to nearest even (NaN stays NaN).
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7FFF + ((b >> 16) & 1);
    ((b + round) >> 16) as u16
}

/// bf16 bits → f32.
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding() {
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(bf16_to_f32(f32_to_bf16(3.140625)), 3.140625);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3F80);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }

    #[test]
    fn validation_names_the_problem() {
        assert_eq!(
            validate(0, 8, 8, 0, 64, None, 0, 0.0),
            Err(GemmShapeError::EmptyDimension { mnk: (0, 8, 8) })
        );
        assert_eq!(
            validate(8, 12, 8, 64, 96, None, 96, 0.0),
            Err(GemmShapeError::RowNotAligned {
                dim: "N",
                value: 12
            })
        );
        assert_eq!(
            validate(8, 8, 8, 63, 64, None, 64, 0.0),
            Err(GemmShapeError::WrongLength {
                operand: "A",
                expected: 64,
                got: 63
            })
        );
        assert_eq!(
            validate(8, 8, 8, 64, 64, None, 64, 0.5),
            Err(GemmShapeError::MissingC)
        );
        let msg = GemmShapeError::RowNotAligned {
            dim: "K",
            value: 30,
        }
        .to_string();
        assert!(msg.contains("multiple of 8"), "{msg}");
    }
}
