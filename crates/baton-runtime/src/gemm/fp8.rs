//! Host side of the Hopper blockwise-scaled FP8 GEMM
//! (`kernels/src/gemm_fp8.rs`): validation, tensor maps, launch, a safe
//! one-shot call, e4m3 conversion, and the f64 reference check.
//!
//! `D = (A ⊙ Sa) · (B ⊙ Sb)ᵀ` with A M×K and B N×K FP8 e4m3 (bytes, both
//! K-major), A scales f32 `[K/128, M]` (M contiguous: one per row and 128
//! of K), B scales f32 `[⌈N/128⌉, K/128]` (one per 128×128 block), D M×N
//! bf16 (as `u16` bits) row-major; fp32 accumulation, promoted per 128 of K.

use super::operand::{RowMajorOperand, param};
use super::ranges_overlap;
use super::stream_k::StreamKWorkspace;
use crate::error::{Error, Fp8ShapeError, GemmError, Result};
use crate::{Gpu, Kernels, TypedKernel};
use baton::kernel::KernelSpec;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::{A_SCALE_BOX_ROWS, a_scale_box_floats, a_scale_whole_box_rows};
use baton_kernels_abi::gemm_fp8 as fp8_abi;
use baton_kernels_abi::gemm_params::{GemmFp8Params, TensorMapParam};
use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// 128×128×128 tiles, 6 stages, two partial accumulators (K block kb + 1's
/// MMAs run while kb's partial is promoted; measured against one partial in
/// BENCHMARKS.md). The fallback of [`choose`]; large problems get
/// [`KERNEL_256X128`].
pub const KERNEL: &str = fp8_abi::GEMM_128X128_DB.name;
/// 128×64×128 tiles, 8 stages, two partials: twice the CTAs, for small M.
pub const KERNEL_128X64: &str = fp8_abi::GEMM_128X64_DB.name;
/// [`KERNEL`] in clusters of 2 CTAs along M that share each B tile by TMA
/// multicast (each loads half): a quarter less L2 → SM traffic.
pub const KERNEL_C2: &str = fp8_abi::GEMM_128X128_DB_C2.name;
/// 128×192×128 tiles, 5 stages, one partial accumulator: 17% less
/// operand traffic per FLOP than 128×128 (two B scales per tile and K block).
pub const KERNEL_128X192: &str = fp8_abi::GEMM_128X192.name;
/// 256×128×128 tiles, 4 stages: each consumer warpgroup runs two 64-row
/// waves per K block into one partial: a quarter less operand traffic per
/// FLOP than 128×128. No stream-K (compiled out: faster); split-K and
/// stream-K run [`KERNEL_256X128_SK`].
pub const KERNEL_256X128: &str = fp8_abi::GEMM_256X128.name;
/// [`KERNEL_256X128`] with stream-K and split-K.
pub const KERNEL_256X128_SK: &str = fp8_abi::GEMM_256X128_SK.name;
/// 128×256×128 tiles, 4 stages: [`KERNEL_256X128`] turned along N (two
/// 128-column waves per warpgroup), so each A tile feeds 256 columns: for
/// small M with wide N.
pub const KERNEL_128X256: &str = fp8_abi::GEMM_128X256.name;
/// 128×96×128 tiles, 6 stages, two partials: a width that is not a power
/// of two, for wave counts (a tile may straddle two B-scale blocks).
pub const KERNEL_128X96: &str = fp8_abi::GEMM_128X96_DB.name;
/// 128×32×128 tiles, 8 stages, two partials: four times the CTAs of
/// 128-wide tiles, for small M.
pub const KERNEL_128X32: &str = fp8_abi::GEMM_128X32_DB.name;
/// 256×96×128 tiles, 4 stages: [`KERNEL_256X128`] 96 columns wide, for
/// wave counts.
pub const KERNEL_256X96: &str = fp8_abi::GEMM_256X96.name;
/// 256×88×128 tiles, 4 stages: [`KERNEL_256X128`] 88 columns wide, for
/// wave counts (DeepGEMM's pick at 4096×2112: 3 waves, the last 120 of
/// 132 SMs busy); the last 24 columns of each wave stored from registers.
pub const KERNEL_256X88: &str = fp8_abi::GEMM_256X88.name;
/// [`KERNEL_256X88`] in clusters of 2 CTAs along N sharing each A tile
/// (as [`KERNEL_256X128_MCA`]): a plan candidate where its tile columns
/// pair up ([`SPEED_256X88_MCA`]).
pub const KERNEL_256X88_MCA: &str = fp8_abi::GEMM_256X88_MCA.name;
/// [`KERNEL_256X128`] in clusters of 2 CTAs along N that share each A tile
/// by TMA multicast (each CTA loads half of its 256 rows): a third less
/// L2 → SM operand traffic. No stream-K.
pub const KERNEL_256X128_MCA: &str = fp8_abi::GEMM_256X128_MCA.name;
/// [`KERNEL_256X128_MCA`] with 3 input stages and a whole tile of D
/// staging per consumer warpgroup, so a tile's stores drain under the
/// next tile's main loop: what [`plan`] runs instead of
/// [`KERNEL_256X128_MCA`] for K ≤ [`SHORT_K_MAX`] ([`for_k`]).
pub const KERNEL_256X128_MCA_3STAGE: &str = fp8_abi::GEMM_256X128_MCA_3STAGE.name;
/// 64×128×128 tiles, 8 stages, two partials, one consumer warpgroup (256
/// threads): for M ≤ 128, no 128-row tile's empty half. Data-parallel (no
/// stream-K); [`plan`] runs it (and the 32- and 64-wide twins) in place of
/// the whole 128-row tiles at M ≤ 128 ([`for_m`]).
pub const KERNEL_64X128: &str = fp8_abi::GEMM_64X128_DB.name;
/// [`KERNEL_64X128`] 64 columns wide, 12 stages.
pub const KERNEL_64X64: &str = fp8_abi::GEMM_64X64_DB.name;
/// [`KERNEL_64X128`] 56 columns wide, 12 stages (DeepGEMM's width at
/// M = 64, N = 7168).
pub const KERNEL_64X56: &str = fp8_abi::GEMM_64X56_DB.name;
/// [`KERNEL_64X128`] 32 columns wide, 12 stages.
pub const KERNEL_64X32: &str = fp8_abi::GEMM_64X32_DB.name;
/// Every kernel (same arguments): the default, the 128×64 one, the
/// 128×128 one with a single partial accumulator, the clustered one, the
/// 128×192 one, the 256×128 one, the 128×256 one, and the widths that are
/// not powers of two or narrower: 128×96, 128×32, 256×96, 256×88; 256×128
/// with stream-K; 256×128 sharing A across 2-CTA clusters along N
/// (4 stages, and 3 stages with whole-tile D staging); and the 64-row
/// tiles of one consumer warpgroup (64×128, 64×64, 64×56, 64×32).
pub const VARIANTS: [&str; 19] = [
    KERNEL,
    KERNEL_128X64,
    fp8_abi::GEMM_128X128.name,
    KERNEL_C2,
    KERNEL_128X192,
    KERNEL_256X128,
    KERNEL_128X256,
    KERNEL_128X96,
    KERNEL_128X32,
    KERNEL_256X96,
    KERNEL_256X88,
    KERNEL_256X128_SK,
    KERNEL_256X128_MCA,
    KERNEL_256X88_MCA,
    KERNEL_256X128_MCA_3STAGE,
    KERNEL_64X128,
    KERNEL_64X64,
    KERNEL_64X56,
    KERNEL_64X32,
];

/// Whether a kernel of [`VARIANTS`] implements stream-K and split-K
/// ([`Fp8GemmPlan::set_stream_k`], [`Fp8GemmPlan::set_split_k`]): all but
/// the data-parallel two-wave ones, [`KERNEL_256X128`] (whose stream-K
/// twin is [`KERNEL_256X128_SK`]), [`KERNEL_256X128_MCA`] (and its
/// 3-stage form), [`KERNEL_256X96`], [`KERNEL_256X88`] and the 64-row
/// tiles.
///
/// ```
/// use baton_runtime::gemm::fp8::{has_stream_k, KERNEL, KERNEL_64X32, KERNEL_256X128, KERNEL_256X128_SK};
/// assert!(has_stream_k(KERNEL) && has_stream_k(KERNEL_256X128_SK));
/// assert!(!has_stream_k(KERNEL_256X128) && !has_stream_k(KERNEL_64X32));
/// ```
pub fn has_stream_k(kernel: &str) -> bool {
    ![
        KERNEL_256X128,
        KERNEL_256X96,
        KERNEL_256X88,
        KERNEL_256X128_MCA,
        KERNEL_256X88_MCA,
        KERNEL_256X128_MCA_3STAGE,
        KERNEL_64X128,
        KERNEL_64X64,
        KERNEL_64X56,
        KERNEL_64X32,
    ]
    .contains(&kernel)
}

/// The kernel that runs `kernel`'s tiles with stream-K / split-K: itself,
/// or [`KERNEL_256X128_SK`] for [`KERNEL_256X128`],
/// [`KERNEL_256X128_MCA`] and [`KERNEL_256X128_MCA_3STAGE`]; `None` when the tile shape has no stream-K
/// kernel ([`KERNEL_256X96`], [`KERNEL_256X88`], the 64-row tiles).
///
/// ```
/// use baton_runtime::gemm::fp8::{stream_k_kernel_of, KERNEL, KERNEL_256X96, KERNEL_256X128, KERNEL_256X128_SK};
/// assert_eq!(stream_k_kernel_of(KERNEL_256X128), Some(KERNEL_256X128_SK));
/// assert_eq!(stream_k_kernel_of(KERNEL), Some(KERNEL));
/// assert_eq!(stream_k_kernel_of(KERNEL_256X96), None);
/// ```
pub fn stream_k_kernel_of(kernel: &'static str) -> Option<&'static str> {
    if kernel == KERNEL_256X128
        || kernel == KERNEL_256X128_MCA
        || kernel == KERNEL_256X128_MCA_3STAGE
    {
        Some(KERNEL_256X128_SK)
    } else if has_stream_k(kernel) {
        Some(kernel)
    } else {
        None
    }
}

/// The spec of a kernel of [`VARIANTS`] (`kernel_abi::gemm_fp8`); `None`
/// for other names.
///
/// ```
/// use baton_runtime::gemm::fp8::{spec_of, KERNEL_C2};
/// assert_eq!(spec_of(KERNEL_C2).unwrap().cluster, [2, 1, 1]);
/// assert!(spec_of("sgemm").is_none());
/// ```
pub fn spec_of(kernel: &str) -> Option<&'static KernelSpec<GemmFp8Params>> {
    abi_tile(kernel).map(|t| &t.spec)
}

/// The ABI's [`TILES`](fp8_abi::TILES) entry of `kernel`.
fn abi_tile(kernel: &str) -> Option<&'static fp8_abi::Fp8Tile> {
    fp8_abi::TILES.into_iter().find(|t| t.spec.name == kernel)
}

/// (BM, BN, input stages) of a kernel of [`VARIANTS`] (the ABI's
/// [`TILES`](fp8_abi::TILES)); `None` for other names.
///
/// ```
/// use baton_runtime::gemm::fp8::{tile_of, KERNEL, KERNEL_256X128};
/// assert_eq!(tile_of(KERNEL), Some((128, 128, 6)));
/// assert_eq!(tile_of(KERNEL_256X128), Some((256, 128, 4)));
/// assert_eq!(tile_of(baton_runtime::gemm::fp8::KERNEL_64X32), Some((64, 32, 12)));
/// assert_eq!(tile_of("sgemm"), None);
/// ```
pub fn tile_of(kernel: &str) -> Option<(u32, u32, u32)> {
    abi_tile(kernel).map(|t| (t.bm, t.bn, t.stages))
}

/// CTAs per cluster of a kernel of [`VARIANTS`]: along M sharing B tiles
/// ([`KERNEL_C2`]) or along N sharing A tiles ([`KERNEL_256X128_MCA`],
/// [`shares_a`]).
///
/// ```
/// use baton_runtime::gemm::fp8::{cluster_of, KERNEL, KERNEL_C2, KERNEL_256X128_MCA};
/// assert_eq!((cluster_of(KERNEL), cluster_of(KERNEL_C2), cluster_of(KERNEL_256X128_MCA)), (1, 2, 2));
/// ```
pub fn cluster_of(kernel: &str) -> u32 {
    if kernel == KERNEL_C2 || shares_a(kernel) {
        2
    } else {
        1
    }
}

/// Whether a clustered kernel of [`VARIANTS`] stacks its cluster's tiles
/// along N and multicasts A (each CTA loads half of A's rows), rather
/// than along M multicasting B.
///
/// ```
/// use baton_runtime::gemm::fp8::{shares_a, KERNEL_C2, KERNEL_256X128_MCA};
/// assert!(shares_a(KERNEL_256X128_MCA) && !shares_a(KERNEL_C2));
/// ```
pub fn shares_a(kernel: &str) -> bool {
    [
        KERNEL_256X128_MCA,
        KERNEL_256X88_MCA,
        KERNEL_256X128_MCA_3STAGE,
    ]
    .contains(&kernel)
}

/// Rows of A and of B that one CTA of `kernel` loads per stage (the boxes
/// of its A and B tensor maps): the whole tile's, or with a cluster half of
/// A's rows ([`shares_a`]: the two CTAs multicast A to each other) or half
/// of B's (multicast B). `None` for a name not in [`VARIANTS`]. The plan
/// and the Python package encode their maps from this one rule.
///
/// ```
/// use baton_runtime::gemm::fp8::{load_rows, KERNEL, KERNEL_C2, KERNEL_256X128_MCA};
/// assert_eq!(load_rows(KERNEL), Some((128, 128)));
/// assert_eq!(load_rows(KERNEL_C2), Some((128, 64)));
/// assert_eq!(load_rows(KERNEL_256X128_MCA), Some((128, 128)));
/// assert_eq!(load_rows("nope"), None);
/// ```
pub fn load_rows(kernel: &str) -> Option<(u32, u32)> {
    let (bm, bn, _) = tile_of(kernel)?;
    let cluster = cluster_of(kernel);
    Some(if shares_a(kernel) {
        (bm / cluster, bn)
    } else {
        (bm, bn / cluster)
    })
}

/// Persistent workers for `units` work units on `slots` resident ones:
/// `units` when they fit in one wave, otherwise the fewest workers that
/// still finish in `⌈units / slots⌉` waves (every worker takes unit `u`
/// with `u mod workers` = its index, so each gets the same count, ±1).
/// The time is the same waves of units either way; the idle SMs draw no
/// power (the FP8 GEMMs run at the H100's power limit) and every wave is
/// whole (DeepGEMM launches the same count: 128 of 132 SMs at
/// 4096×7168). At least 1.
///
/// ```
/// use baton_runtime::gemm::fp8::equal_waves_workers;
/// assert_eq!(equal_waves_workers(100, 132), 100);
/// assert_eq!(equal_waves_workers(896, 132), 128); // 7 waves
/// assert_eq!(equal_waves_workers(2048, 132), 128); // 16 waves
/// assert_eq!(equal_waves_workers(544, 132), 109); // 5 waves
/// assert_eq!(equal_waves_workers(0, 132), 1);
/// ```
pub fn equal_waves_workers(units: u32, slots: u32) -> u32 {
    let slots = slots.max(1);
    let waves = units.div_ceil(slots).max(1);
    units.div_ceil(waves).clamp(1, slots)
}

/// CTAs of a data-parallel launch of `units` work units of `cluster` CTAs
/// each on `slots` resident workers ([`Fp8GemmPlan::grid`] without
/// stream-K): the fewest workers of the same waves, times the cluster size.
fn data_parallel_ctas(units: u32, slots: u32, cluster: u32) -> u32 {
    equal_waves_workers(units, slots) * cluster
}

/// Work units of a kernel's tile grid: clusters of `cluster` tiles along
/// N ([`shares_a`]) or along M, or tiles.
fn units_of(m: u32, n: u32, (bm, bn): (u32, u32), cluster: u32, along_n: bool) -> u32 {
    if along_n {
        m.div_ceil(bm) * n.div_ceil(bn).div_ceil(cluster)
    } else {
        m.div_ceil(bm).div_ceil(cluster) * n.div_ceil(bn)
    }
}

/// Picks the kernel for an M×N×K problem on `sms` SMs: the least
/// estimate of the [cost model](super::cost_model) (waves, tile efficiency,
/// K length, L2 reuse) among 128×32, 128×64, 128×96, 128×128, 256×96 and
/// 256×128 tiles, with each tile shape's speed per SM relative to 128×128
/// (H100, BENCHMARKS.md): 128×64 0.7, 256×128 [`SPEED_256X128`], 128×96
/// [`SPEED_128X96`], 256×96 [`SPEED_256X96`] and 128×32
/// [`SPEED_128X32`] measured, 256×88 [`SPEED_256X88`] predicted. The waves
/// term does what DeepGEMM's rule does (fewest waves, then the fullest
/// last wave, then larger tiles): a width that is not a power of two wins
/// where it saves a wave or a wave's width by more than its lower speed
/// costs (2048×1216: 112 tiles of 256×88 in one wave, against 104 wider
/// ones of 256×96, 2 waves of 128×128 or one of the wider 256×128;
/// 128×24576: 2 waves either way, 128×96 with less math; 4096×2112: 3
/// waves of 256×88, DeepGEMM's pick, where 256×96 runs 3 waves 9 %
/// wider and 128×128 5).
/// Small M gets the narrow tiles when they fill more SMs
/// (128×7168: 112 CTAs instead of 56), everything with a few waves of tiles
/// the 256×128 one; the 256-row tiles share A over 2-CTA clusters
/// wherever their tile columns pair up ([`SPEED_256X128_MCA`]), 256×128
/// with 3 stages and whole-tile D staging up to K = [`SHORT_K_MAX`]
/// ([`for_k`]). No list of shapes.
///
/// ```
/// use baton_runtime::gemm::fp8::{choose, plan, plan_cost, KERNEL_64X128, KERNEL_128X96, KERNEL_256X88, KERNEL_256X88_MCA, KERNEL_256X128, KERNEL_256X128_MCA, KERNEL_256X128_MCA_3STAGE};
/// assert_eq!(choose(8192, 8192, 8192, 132), KERNEL_256X128_MCA);
/// assert_eq!(choose(4096, 32768, 512, 132), KERNEL_256X128_MCA_3STAGE);
/// assert_eq!(choose(4096, 7296, 4096, 132), KERNEL_256X128); // 57 tile columns
/// // M ≤ 128: the cost model's 128×64 and 128×96 run as 64×128 tiles (`for_m`).
/// assert_eq!(choose(128, 7168, 16384, 132), KERNEL_64X128);
/// assert_eq!(choose(128, 24576, 1536, 132), KERNEL_64X128);
/// assert_eq!(plan(128, 24576, 1536, 132).1, plan_cost(128, 24576, 1536, 132, KERNEL_128X96, 1).unwrap());
/// assert_eq!(choose(2048, 1216, 4096, 132), KERNEL_256X88_MCA);
/// assert_eq!(choose(4096, 2112, 7168, 132), KERNEL_256X88_MCA);
/// ```
pub fn choose(m: usize, n: usize, k: usize, sms: u32) -> &'static str {
    plan(m, n, k, sms).0
}

/// [`choose`] with the split-K count: the least estimate over the kernels
/// and, where a kernel's units leave SMs idle, every split count
/// ([`TileShape::cost_best_split_finalized`](super::cost_model::TileShape::cost_best_split_finalized)
/// with the kernels' [`FINALIZER`]). Uneven counts are tried too, unlike
/// BF16's cooperative kernels ([`even_split`](super::cost_model::even_split)):
/// measured (session 16, queued, H100), 256×5000×16384 ran 256×128 split 3
/// (128 K blocks) at 1.043–1.049 of cuBLASLt against 0.961–0.963 for the
/// best whole-tile plan, and an uneven 128×64 split 7 of 256 K blocks cost
/// only 3 % against split 8 (8 and 32 × 1024 × 32768).
/// Split counts > 1 run as [`Fp8GemmPlan::set_split_k`].
///
/// ```
/// use baton_runtime::gemm::fp8::{plan, KERNEL_128X32};
/// // 32 tiles of 128×32, K = 32768 (256 K blocks of 128): each split 4
/// // ways (128 CTAs; measured ahead of 128×64 split 7 and 8, session 16).
/// let (kernel, cost) = plan(32, 1024, 32768, 132);
/// assert_eq!((kernel, cost.units, cost.splits), (KERNEL_128X32, 32, 4));
/// ```
pub fn plan(m: usize, n: usize, k: usize, sms: u32) -> (&'static str, super::cost_model::TileCost) {
    plan_on(
        m,
        n,
        k,
        sms,
        super::cost_model::Machine::H100_FP8.dram_bytes_per_s,
    )
}

/// What [`Fp8GemmPlan::new`] plans on `gpu` for M×N×K: [`plan_on`] with
/// the device's SMs and DRAM rate ([`Gpu::dram_bytes_per_s`]). The one
/// place those device facts enter the FP8 choice.
///
/// ```no_run
/// # use baton_runtime::Gpu;
/// let gpu = Gpu::new(0)?;
/// let (kernel, cost) = baton_runtime::gemm::fp8::plan_for_gpu(&gpu, 64, 4096, 7168);
/// println!("{kernel} split {}", cost.splits);
/// # Ok::<(), baton_runtime::Error>(())
/// ```
pub fn plan_for_gpu(
    gpu: &Gpu,
    m: usize,
    n: usize,
    k: usize,
) -> (&'static str, super::cost_model::TileCost) {
    plan_on(m, n, k, gpu.sm_count(), gpu.dram_bytes_per_s())
}

/// [`plan`] on a GPU whose DRAM moves `dram_bytes_per_s`
/// ([`Gpu::dram_bytes_per_s`](crate::Gpu::dram_bytes_per_s); the H100's
/// other rates kept; [`plan_for_gpu`] takes both from a [`Gpu`].
///
/// ```
/// use baton_runtime::gemm::fp8::{plan, plan_on};
/// assert_eq!(plan_on(4096, 4096, 4096, 132, 2.9e12), plan(4096, 4096, 4096, 132));
/// // DRAM-bound at long K: the estimate shrinks on faster memory.
/// let (h100, h200) = (plan(8, 1024, 32768, 132).1, plan_on(8, 1024, 32768, 132, 4.17e12).1);
/// assert!(h200.estimate_us() < h100.estimate_us());
/// ```
pub fn plan_on(
    m: usize,
    n: usize,
    k: usize,
    sms: u32,
    dram_bytes_per_s: f64,
) -> (&'static str, super::cost_model::TileCost) {
    use super::cost_model::{Machine, Problem, TileShape, cheapest};
    let machine = Machine::H100_FP8.with_dram_bytes_per_s(dram_bytes_per_s);
    let candidates = PLAN_CANDIDATES.map(|k| (k, cost_tile(k).expect("a candidate's tile")));
    // A-multicast clusters pair the tile columns: only where they pair up
    // (an odd count leaves a cluster's second CTA computing nothing).
    let candidates: Vec<_> = candidates
        .into_iter()
        .filter(|(kernel, t)| !shares_a(kernel) || n.div_ceil(t.bn).is_multiple_of(2))
        .collect();
    let candidates = &candidates[..];
    let problem = Problem::fp8(m, n, k);
    // Split counts only for the tiles with a stream-K kernel; a split
    // 256×128 plan runs its stream-K twin.
    let cost = |kernel, t: &TileShape| {
        if stream_k_kernel_of(kernel).is_some() {
            t.cost_best_split_finalized(&problem, &machine, sms, sms as usize, FINALIZER, false)
        } else {
            t.cost(&problem, &machine, sms)
        }
    };
    let (kernel, cost) = cheapest(candidates, cost)
        .unwrap_or_else(|| (KERNEL, candidates[3].1.cost(&problem, &machine, sms)));
    match stream_k_kernel_of(kernel) {
        Some(sk) if cost.splits > 1 => (sk, cost),
        _ => (for_m(for_k(kernel, k), m), cost),
    }
}

/// The longest K (elements) for which [`plan`] runs
/// [`KERNEL_256X128_MCA_3STAGE`] in place of [`KERNEL_256X128_MCA`]: 16
/// K blocks. Measured (session 27, H200, DeepGEMM's method, the library's
/// plans, base/new/new/base in one call; BENCHMARKS.md): the 3-stage form
/// with whole-tile D staging ran +6.8 % at 4096×32768×512, +5.3 % at
/// 8192×4096×512, +2.3 % at 4096×24576×1536, +1.5 % at 3072×6144×1536,
/// +0.9 % at 4096×7168×2048, and −0.7 to −1.8 % from K = 4096 (4096³,
/// 4096×4096×7168, 4096×7168×16384, 6144³, 8192³), where the fourth
/// stage is worth more than the epilogue's waits.
///
/// ```
/// assert_eq!(baton_runtime::gemm::fp8::SHORT_K_MAX, 2048);
/// ```
pub const SHORT_K_MAX: usize = 2048;

/// The form of `kernel` that runs K = `k`: [`KERNEL_256X128_MCA_3STAGE`]
/// for [`KERNEL_256X128_MCA`] when `k ≤` [`SHORT_K_MAX`] (the same tiles
/// and clusters, so the same cost), otherwise `kernel`.
///
/// ```
/// use baton_runtime::gemm::fp8::{for_k, KERNEL, KERNEL_256X128_MCA, KERNEL_256X128_MCA_3STAGE};
/// assert_eq!(for_k(KERNEL_256X128_MCA, 1536), KERNEL_256X128_MCA_3STAGE);
/// assert_eq!(for_k(KERNEL_256X128_MCA, 4096), KERNEL_256X128_MCA);
/// assert_eq!(for_k(KERNEL, 512), KERNEL);
/// ```
pub fn for_k(kernel: &'static str, k: usize) -> &'static str {
    if kernel == KERNEL_256X128_MCA && k <= SHORT_K_MAX {
        KERNEL_256X128_MCA_3STAGE
    } else {
        kernel
    }
}

/// The form of `kernel` that runs M = `m` whole tiles: where D has one
/// tile row of 128 (M ≤ 128), a 64-row tile on one consumer warpgroup
/// with a deeper ring and no empty half, otherwise `kernel`. [`plan`]
/// applies it to its whole-tile plans (a split plan needs stream-K, which
/// the 64-row tiles do not have).
///
/// - M ≤ 64 (one 64-row tile row): the twin of the same width
///   ([`KERNEL_64X32`], [`KERNEL_64X64`], [`KERNEL_64X128`] for 32, 64 and
///   128), so the same tile columns, units and waves.
/// - 64 < M ≤ 128 (two 64-row tile rows): the twin twice as wide where
///   there is one, so the same number of CTAs (128×32 → [`KERNEL_64X64`],
///   128×64 → [`KERNEL_64X128`]); 128×96 and 128×128 go to the widest,
///   [`KERNEL_64X128`] (4/3 and 2× the CTAs).
///
/// Measured (H100, DeepGEMM's method, the plan and each 64-row tile forced
/// in one call, BENCHMARKS.md): session 28, at M = 64, +0.7 to +3.9 % at
/// every such row (64×4096×7168 128×32 172.5 → 179.3 TFLOP/s, 64×7168×2048
/// 128×64 139.6 → 145.0). Session 30 call 2, at M = 96–128 over 14 shapes,
/// the mapped twin against the plan's 128-row tile: 128×7168×2048 (128×64)
/// 247.5 → 266.6, 112×7168×2048 +3.8 %, 128×7168×16384 +1.6 %,
/// 128×8192×1024 +1.8 %, 128×5000×4096 +2.6 %; 128×4096×7168 (128×32)
/// 336.5 → 355.3, 128×4096×4096 +3.3 %; 128×24576×1536 (128×96)
/// 378.4 → 401.3, 96×24576×1536 +5.1 %; 128×32768×512 (128×128) +2.4 %,
/// 128×16384×4096 +2.4 %, 128×28672×2048 +2.4 %. The split plans there
/// stay (128×2112×7168: 128×32 split 2 242.7, 64×64 whole 229.8).
///
/// ```
/// use baton_runtime::gemm::fp8::{for_m, KERNEL, KERNEL_128X32, KERNEL_128X64, KERNEL_64X32, KERNEL_64X64, KERNEL_64X128, KERNEL_128X96};
/// assert_eq!(for_m(KERNEL_128X32, 64), KERNEL_64X32);
/// assert_eq!(for_m(KERNEL, 8), KERNEL_64X128);
/// assert_eq!(for_m(KERNEL_128X96, 64), KERNEL_128X96); // no 64×96 twin
/// assert_eq!(for_m(KERNEL_128X32, 65), KERNEL_64X64);
/// assert_eq!(for_m(KERNEL_128X64, 128), KERNEL_64X128);
/// assert_eq!(for_m(KERNEL_128X96, 96), KERNEL_64X128);
/// assert_eq!(for_m(KERNEL_128X64, 129), KERNEL_128X64);
/// ```
pub fn for_m(kernel: &'static str, m: usize) -> &'static str {
    match (m, kernel) {
        (0..=64, KERNEL_128X32) => KERNEL_64X32,
        (0..=64, KERNEL_128X64) => KERNEL_64X64,
        (0..=64, KERNEL) => KERNEL_64X128,
        (65..=128, KERNEL_128X32) => KERNEL_64X64,
        (65..=128, KERNEL_128X64 | KERNEL_128X96 | KERNEL) => KERNEL_64X128,
        _ => kernel,
    }
}

/// How [`plan`] costs the FP8 kernels' split-K finalizer: in turn, the
/// fixed hand-over and the partials' bytes at
/// [`Machine::H100_FP8`](super::cost_model::Machine::H100_FP8)'s fixup
/// rate. Since session 31 the one-wave kernels (every split plan but the
/// 256-row ones) wait for all contributors at once
/// (`stream_k_fixup_overlapped!` in `kernels/src/gemm_fp8.rs`, measured
/// 0.7–6 % faster on 5 of 7 long-K and split-2 rows on an H100, BENCHMARKS.md
/// "Session 31"); the cost model still charges them in turn, so the plans
/// are those it chose before. Charging them
/// [`Finalizer::OverlappedPartials`](super::cost_model::Finalizer::OverlappedPartials)
/// moves plans and waits for a measurement of the moved rows.
///
/// ```
/// use baton_runtime::gemm::cost_model::Finalizer;
/// assert_eq!(baton_runtime::gemm::fp8::FINALIZER, Finalizer::InTurn);
/// ```
pub const FINALIZER: super::cost_model::Finalizer = super::cost_model::Finalizer::InTurn;

/// The kernels [`plan`] chooses among (the A-multicast ones,
/// [`KERNEL_256X88_MCA`] and [`KERNEL_256X128_MCA`], only where their
/// clusters pair the tile columns).
///
/// ```
/// use baton_runtime::gemm::fp8::{cost_tile, plan, PLAN_CANDIDATES};
/// assert!(PLAN_CANDIDATES.iter().all(|k| cost_tile(k).is_some()));
/// assert!(PLAN_CANDIDATES.contains(&plan(4096, 4096, 4096, 132).0));
/// ```
pub const PLAN_CANDIDATES: [&str; 9] = [
    KERNEL_128X32,
    KERNEL_128X64,
    KERNEL_128X96,
    KERNEL,
    KERNEL_256X96,
    KERNEL_256X88,
    KERNEL_256X88_MCA,
    KERNEL_256X128,
    KERNEL_256X128_MCA,
];

/// A kernel of [`VARIANTS`] as the cost model sees it: its tile, K block
/// (128), tiles per work unit along M and measured speed per SM relative
/// to 128×128 ([`plan`]'s candidates, and [`KERNEL_256X128_SK`] as
/// [`KERNEL_256X128`]). [`KERNEL_C2`] is costed as 128×128 at speed 1.0
/// in 2-tile units (not measured apart from the forced rows; [`plan`]
/// does not consider it); `None` for the kernels without a measured
/// speed (128×192, 128×256, 128×128 with one partial) and other names.
///
/// ```
/// use baton_runtime::gemm::fp8::{cost_tile, KERNEL_128X64, KERNEL_128X192};
/// let t = cost_tile(KERNEL_128X64).unwrap();
/// assert_eq!((t.bm, t.bn, t.bk, t.cluster_m, t.speed), (128, 64, 128, 1, 0.7));
/// assert!(cost_tile(KERNEL_128X192).is_none());
/// ```
pub fn cost_tile(kernel: &str) -> Option<super::cost_model::TileShape> {
    let (bm, bn, speed) = match kernel {
        KERNEL_128X32 => (128, 32, SPEED_128X32),
        KERNEL_128X64 => (128, 64, 0.7),
        KERNEL_128X96 => (128, 96, SPEED_128X96),
        KERNEL | KERNEL_C2 => (128, 128, 1.0),
        KERNEL_256X96 => (256, 96, SPEED_256X96),
        KERNEL_256X88 => (256, 88, SPEED_256X88),
        KERNEL_256X88_MCA => (256, 88, SPEED_256X88_MCA),
        KERNEL_256X128 | KERNEL_256X128_SK => (256, 128, SPEED_256X128),
        KERNEL_256X128_MCA | KERNEL_256X128_MCA_3STAGE => (256, 128, SPEED_256X128_MCA),
        _ => return None,
    };
    Some(super::cost_model::TileShape {
        bm,
        bn,
        bk: SCALE_BLOCK,
        cluster_m: if kernel == KERNEL_C2 { 2 } else { 1 },
        speed,
    })
}

/// The cost model's estimate of `kernel` ([`cost_tile`]) on M×N×K with
/// each work unit's K blocks on `splits` workers (1: whole units), on
/// `sms` SMs (`sms / 2` slots for the 2-tile units of [`KERNEL_C2`]): what
/// `Fp8GemmPlan::with_kernel` then `set_split_k(splits)` runs, as [`plan`]
/// costs its candidates. `None` for a kernel without a cost tile. The
/// split count is not checked against the plan's caps.
///
/// ```
/// use baton_runtime::gemm::fp8::{plan, plan_cost, KERNEL_128X32, KERNEL_128X64};
/// let (kernel, cost) = plan(32, 1024, 32768, 132);
/// assert_eq!(kernel, KERNEL_128X32);
/// assert_eq!(plan_cost(32, 1024, 32768, 132, kernel, cost.splits), Some(cost));
/// // A forced plan: 128×64 split 8 is estimated slower.
/// let c64 = plan_cost(32, 1024, 32768, 132, KERNEL_128X64, 8).unwrap();
/// assert!(c64.estimate_us() > cost.estimate_us());
/// ```
pub fn plan_cost(
    m: usize,
    n: usize,
    k: usize,
    sms: u32,
    kernel: &str,
    splits: usize,
) -> Option<super::cost_model::TileCost> {
    let t = cost_tile(kernel)?;
    let slots = sms / t.cluster_m as u32;
    Some(t.cost_split_finalized(
        &super::cost_model::Problem::fp8(m, n, k),
        &super::cost_model::Machine::H100_FP8,
        slots,
        splits,
        FINALIZER,
    ))
}

/// Speed per SM of [`KERNEL_128X32`] (10 stages) relative to 128×128
/// tiles (cost model), fitted on the H100 (BENCHMARKS.md, session 11 FP8
/// round 2; L2 flushed, one call): at 64/128 × 2112/4096 × 7168 the
/// 128×32 tiles ran 3.0–5.6 % faster than the 128×64 plans of the same
/// call (128 whole tiles on 128 CTAs against 64 tiles split 2 ways; 66
/// tiles split 2 ways against 33 split 4 ways), and the model reproduces
/// those time ratios at speeds 0.450–0.486. 0.46 is the least at which it
/// picks 128×32 at all four (predicted 0.4 before: the A tile feeds a
/// quarter of 128×128's columns and `wgmma.m64n32k32` is the narrowest
/// shape). What it buys is in the model's terms: as many CTAs as SMs
/// without a split, or with half the ways and a quarter of the partial
/// bytes of 128×64, where M ≤ 128 leaves few tiles. Unmeasured shapes it
/// also takes at this speed (Python's path included): 128×1536×4096
/// (split 2), 100×3000×5000 (whole).
///
/// Re-fitted 2026-11-28 (session 16) to **0.52**, together with
/// [`Machine::H100_FP8`](super::cost_model::Machine::H100_FP8)'s fixup
/// rate (its doc has the fit): at 32×1024×32768 128×32 split 4 measured
/// 27.0 µs against 128×64 split 8's 29.1 and split 7's 30.2 (L2 flushed),
/// which 0.46 ranks the other way; 0.50–0.55 fit the 33 rows equally
/// (rms log error within 0.003), and every value in that range keeps
/// session 11's four picks above.
pub const SPEED_128X32: f64 = 0.52;
/// Speed per SM of [`KERNEL_256X128_MCA`] relative to 128×128 tiles
/// (cost model), a candidate wherever its clusters pair the tile columns:
/// [`SPEED_256X128`] × 1.02. Predicted 1.1 × 1.04 everywhere (a third less
/// L2 → SM operand traffic per CTA); measured against 256×128 (queued,
/// one call, ratios to cuBLASLt, BENCHMARKS.md session 10, H100): +1.5 to
/// +2.9 % at K ≤ 2048, −0.3 to −4.4 % at K = 4096–16384, so until session
/// 26 it was a candidate only up to K = 2048. Re-measured in session 26
/// (H200, forced, alternating, two passes each): ahead at every K, queued
/// +0.5 % (K = 2048), +1 % (4096³), +1.3 % (4096×4096×7168), +2.5 %
/// (8192³), +4 % (4096×7168×16384); L2-flushed +0.6 to +2.6 % (4096³ to
/// 4096×7168×16384, 6144³). DeepGEMM multicasts A at all those shapes.
pub const SPEED_256X128_MCA: f64 = SPEED_256X128 * 1.02;
/// Speed per SM of [`KERNEL_256X88_MCA`] relative to 128×128 tiles:
/// [`SPEED_256X88`] × 1.02, as [`SPEED_256X128_MCA`]. Measured against
/// 256×88 (session 26, H200, forced, two passes): 4096×2112×7168 +3.5 %
/// L2-flushed and +2.0 % queued, 4096×2112×4096 +1.5 % flushed; at
/// 2048×1216×4096 (one wave of 112 tiles) −0.9 % flushed.
pub const SPEED_256X88_MCA: f64 = SPEED_256X88 * 1.02;
/// Speed per SM of [`KERNEL_128X96`] relative to 128×128 tiles: measured
/// 0.88 × [`SPEED_256X96`] at 4096×2112×7168 (both forced, one call,
/// BENCHMARKS.md session 9; predicted 0.9).
pub const SPEED_128X96: f64 = 0.79;
/// Speed per SM of [`KERNEL_256X96`] relative to 128×128 tiles: measured
/// 0.89 at 4096×2112×7168 in session 9 (L2 flushed, against the 128×128
/// pick in the same call; predicted 1.02: n96 `wgmma`s read more shared
/// memory per FLOP than n128); re-fitted to 0.94 after the 256-row
/// kernels' uniform descriptors (session 12): forced at 4096×2112×7168,
/// 1036 TFLOP/s against the 128×128 plan's 990–996 in the same call
/// (BENCHMARKS.md "Session 13 — FP8").
pub const SPEED_256X96: f64 = 0.94;
/// Speed per SM of [`KERNEL_256X88`] relative to 128×128 tiles: predicted
/// as [`SPEED_256X96`] (an n88 `wgmma` reads about the shared memory per
/// FLOP of an n96 one; the K loop is compiled per B-scale split, so the
/// promotion has no selects). Measured (session 25, H200, forced, L2
/// flushed): at 8192³, where the waves do not differ, 256×88 ran as fast
/// per FLOP as 256×96; at 4096×2112×7168 +9.5 % where the model predicts
/// 8 %.
pub const SPEED_256X88: f64 = SPEED_256X96;
/// Speed per SM of [`KERNEL_256X128`] relative to 128×128 tiles: 1.1
/// (session 9). Session 13's forced 256×128 row at 4096×2112×7168 (1003.5
/// TFLOP/s, same call as [`SPEED_256X96`]'s) fits 1.21 (× 1.10, session
/// 12's uniform descriptors), but that value moves unmeasured shapes
/// (M = 160–256 at N = 7168 onto split 256×128 tiles): left at 1.1 until
/// a sweep measures them.
pub const SPEED_256X128: f64 = 1.1;

/// Threads per CTA of the 128- and 256-row tiles: producer warpgroup + 2
/// MMA/promotion warpgroups (the 64-row tiles run one: each kernel's
/// `KernelSpec::threads`).
pub const THREADS: u32 = fp8_abi::THREADS;
/// K elements per scale block (A: 1×128, B: 128×128).
pub const SCALE_BLOCK: usize = 128;

/// Elements of the A scales (`K/128 · M`) and B scales (`⌈N/128⌉ · K/128`).
pub fn scale_lens(m: usize, n: usize, k: usize) -> (usize, usize) {
    let kb = k / SCALE_BLOCK;
    (kb * m, n.div_ceil(SCALE_BLOCK) * kb)
}

/// Checks an FP8 GEMM problem (lengths in elements: bytes for A and B,
/// floats for the scales, bf16 for D).
///
/// ```
/// use baton_runtime::gemm::fp8::validate;
/// use baton_runtime::gemm::Fp8ShapeError;
/// assert!(validate(1, 8, 128, 128, 8 * 128, 1, 1, 8).is_ok());
/// assert_eq!(
///     validate(1, 8, 64, 64, 8 * 64, 0, 0, 8),
///     Err(Fp8ShapeError::KNotMultipleOf128 { k: 64 })
/// );
/// ```
#[allow(clippy::too_many_arguments)]
pub fn validate(
    m: usize,
    n: usize,
    k: usize,
    a_len: usize,
    b_len: usize,
    a_scales_len: usize,
    b_scales_len: usize,
    d_len: usize,
) -> std::result::Result<(), Fp8ShapeError> {
    if m == 0 || n == 0 || k == 0 {
        return Err(Fp8ShapeError::EmptyDimension { mnk: (m, n, k) });
    }
    if m >= 1 << 31 || n >= 1 << 31 || k >= 1 << 31 || (k / SCALE_BLOCK) * m >= 1 << 31 {
        return Err(Fp8ShapeError::TooLarge { mnk: (m, n, k) });
    }
    if !k.is_multiple_of(SCALE_BLOCK) {
        return Err(Fp8ShapeError::KNotMultipleOf128 { k });
    }
    if !n.is_multiple_of(8) {
        return Err(Fp8ShapeError::RowNotAligned { n });
    }
    let check = |operand, expected: usize, got: usize| {
        if expected == got {
            Ok(())
        } else {
            Err(Fp8ShapeError::WrongLength {
                operand,
                expected,
                got,
            })
        }
    };
    let (sa, sb) = scale_lens(m, n, k);
    check("A", m * k, a_len)?;
    check("B", n * k, b_len)?;
    check("A scales", sa, a_scales_len)?;
    check("B scales", sb, b_scales_len)?;
    check("D", m * n, d_len)?;
    Ok(())
}

/// Whether a plan reads the A scales (`[K/128, M]` f32 at `address`, K
/// blocks any `ld ≥ M` floats apart) through a copy rather than in place.
/// The kernel reads them as one vector (a one-row tensor map over
/// `(K/128 − 1) · ld + M` floats, boxes starting on 16-byte granules:
/// `baton::tile_pipeline::BlockwiseFP8PaddedTilePayload`), so no row
/// stride rule applies — packed scales with M not a multiple of 4 and
/// PyTorch's M-major layout are read in place — but TMA needs the
/// vector's base 16-byte aligned: only a view that starts mid-granule is
/// copied (one 2-D device copy per launch, `K/128 · M` floats).
///
/// ```
/// use baton_runtime::gemm::fp8::a_scales_copied;
/// assert!(!a_scales_copied(0x1000)); // any ld: packed M = 66, torch's layout, DeepGEMM's
/// assert!(a_scales_copied(0x1004)); // a view starting mid-granule
/// ```
pub fn a_scales_copied(address: u64) -> bool {
    !address.is_multiple_of(16)
}

/// The kernel operands of a blockwise FP8 GEMM: A M×K and B N×K e4m3
/// (K-major), the scales' device addresses (packed, lengths checked), D
/// M×N bf16, all row-major.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fp8Operands {
    pub a: RowMajorOperand,
    pub b: RowMajorOperand,
    /// `[K/128, M]` f32, M contiguous, rows `ld ≥ M` floats apart.
    pub a_scales: RowMajorOperand,
    pub b_scales: u64,
    pub d: RowMajorOperand,
}

/// An FP8 GEMM bound to its operands: shape validated, tensor maps encoded
/// once (kept on the host, passed by value in the kernel parameters), so
/// [`run`](Self::run) only enqueues work: no allocation, no
/// synchronization, capturable in a CUDA graph (stream-K off).
pub struct Fp8GemmPlan<'a> {
    kernel: TypedKernel<GemmFp8Params>,
    /// By value in the kernel parameters.
    maps: [TensorMapParam; 6],
    name: &'static str,
    /// (BM, BN, stages).
    tile: (u32, u32, u32),
    b_scales: u64,
    /// The caller's A scales (source of `sa_pad`'s copy).
    a_scales: RowMajorOperand,
    /// Zero-padded copy of the A scales when TMA cannot read them in place
    /// ([`a_scales_copied`]: a base that is not 16-byte aligned). (Owned
    /// by the plan, with its device address taken once, so `run` records
    /// no cudarc events while a graph may be capturing.)
    sa_pad: Option<(CudaSlice<f32>, u64)>,
    m: u32,
    n: u32,
    k: u32,
    /// `M mod BM`: rows of the last tile row when ragged (loaded through the
    /// tail maps), else 0.
    tail_rows: u32,
    /// Floats between the A scales of consecutive K blocks as the kernel
    /// reads them (the caller's `ld`, or the copy's M rounded up to 4).
    sa_ld: u32,
    /// D's base and row stride in elements (the kernels whose tiles are
    /// not whole 32-column sub-tiles store their last columns directly).
    d: (u64, u32),
    /// CTAs per cluster.
    cluster: u32,
    /// Clusters stacked along N sharing A ([`shares_a`]), else along M.
    along_n: bool,
    /// Work units (CTAs, or clusters) resident at once.
    slots: u32,
    /// Stream-K workspace, when enabled.
    stream_k: Option<StreamKWorkspace>,
    _operands: std::marker::PhantomData<(&'a CudaSlice<u8>, &'a mut CudaSlice<u16>)>,
}

impl<'a> Fp8GemmPlan<'a> {
    /// Validates the problem (typed error before anything runs: zero
    /// dimensions, K not a multiple of 128, N not a multiple of 8, wrong
    /// lengths, D overlapping an input) and prepares the tensor maps.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        a: &'a CudaSlice<u8>,
        b: &'a CudaSlice<u8>,
        a_scales: &'a CudaSlice<f32>,
        b_scales: &'a CudaSlice<f32>,
        d: &'a mut CudaSlice<u16>,
        mnk: (usize, usize, usize),
    ) -> Result<Self> {
        let (kernel, cost) = plan_for_gpu(gpu, mnk.0, mnk.1, mnk.2);
        let plan = Self::with_kernel(gpu, kernels, kernel, a, b, a_scales, b_scales, d, mnk)?;
        plan.with_planned_split(gpu, cost.splits as u32)
    }

    /// The planned split-K count ([`plan`]) on this plan, unless the GPU's
    /// stream is capturing a CUDA graph (a replay would repeat the
    /// launch's fixup epoch: [`GemmError::StreamKInGraph`]), as the BF16
    /// plans do; never more workers than fit at once.
    pub(crate) fn with_planned_split(mut self, gpu: &Gpu, splits: u32) -> Result<Self> {
        let splits = splits.min(self.slots / self.units().max(1));
        if splits > 1 && !super::bf16::may_be_capturing(gpu) {
            self.set_split_k(gpu, splits)?;
        }
        Ok(self)
    }

    /// [`new`](Self::new) with an explicit kernel variant (one of [`VARIANTS`]).
    #[allow(clippy::too_many_arguments)]
    pub fn with_kernel(
        gpu: &Gpu,
        kernels: &Kernels,
        kernel: &str,
        a: &'a CudaSlice<u8>,
        b: &'a CudaSlice<u8>,
        a_scales: &'a CudaSlice<f32>,
        b_scales: &'a CudaSlice<f32>,
        d: &'a mut CudaSlice<u16>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        if tile_of(kernel).is_none() {
            return Err(GemmError::NotAKernelOf {
                kernel: kernel.into(),
                family: "blockwise FP8 GEMM",
                allowed: &VARIANTS,
            }
            .into());
        }
        validate(
            m,
            n,
            k,
            a.len(),
            b.len(),
            a_scales.len(),
            b_scales.len(),
            d.len(),
        )
        .map_err(Error::Fp8Shape)?;
        let stream = gpu.stream();
        let (a_ptr, _s0) = a.device_ptr(stream);
        let (b_ptr, _s1) = b.device_ptr(stream);
        let (sa_ptr, _s2) = a_scales.device_ptr(stream);
        let (sb_ptr, _s3) = b_scales.device_ptr(stream);
        let d_ptr = {
            let (p, _sync) = d.device_ptr_mut(stream);
            p
        };
        let ops = Fp8Operands {
            a: RowMajorOperand::packed(a_ptr, ElemType::U8, m, k),
            b: RowMajorOperand::packed(b_ptr, ElemType::U8, n, k),
            a_scales: RowMajorOperand::packed(sa_ptr, ElemType::F32, k / SCALE_BLOCK, m),
            b_scales: sb_ptr,
            d: RowMajorOperand::packed(d_ptr, ElemType::BF16, m, n),
        };
        Self::for_operands(gpu, kernels, kernel, ops, (m, n, k))
    }

    /// The plan of validated operands (scale lengths checked) on `kernel`
    /// (one of [`VARIANTS`]); D must not overlap A, B or the scales.
    pub(crate) fn for_operands(
        gpu: &Gpu,
        kernels: &Kernels,
        kernel: &str,
        ops: Fp8Operands,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Self> {
        let Some((bm, bn, stages)) = tile_of(kernel) else {
            return Err(GemmError::NotAKernelOf {
                kernel: kernel.into(),
                family: "blockwise FP8 GEMM",
                allowed: &VARIANTS,
            }
            .into());
        };
        let stream = gpu.stream();
        let (sa_given, sb_ptr) = (ops.a_scales, ops.b_scales);
        let (d_ptr, d_bytes) = (ops.d.address, ops.d.span_bytes(1));
        let (_, sb_len) = scale_lens(m, n, k);
        if ranges_overlap(d_ptr, d_bytes, ops.a.address, ops.a.span_bytes(1))
            || ranges_overlap(d_ptr, d_bytes, ops.b.address, ops.b.span_bytes(1))
            || ranges_overlap(d_ptr, d_bytes, sa_given.address, sa_given.span_bytes(1))
            || ranges_overlap(d_ptr, d_bytes, sb_ptr, 4 * sb_len as u64)
        {
            return Err(GemmError::OutputOverlapsInput {
                inputs: "A, B and the scales",
                may_alias_c: false,
            }
            .into());
        }
        // The kernel reads the A scales in place as one vector (boxes from
        // 16-byte granules, so any K-block stride `ld ≥ M`); a base that is
        // not 16-byte aligned (TMA's rule for a map's base) is read through
        // a zero-padded copy ([K/128, M4]), refreshed before every launch
        // (one 2-D device copy, enqueued on the stream: a captured graph
        // repeats it).
        let kb = k / SCALE_BLOCK;
        // Box coordinates are i32 (and the kernel's kb · ld + row in u32):
        // the vector and one box past it stay below 2^31 floats.
        if (kb - 1) as u64 * sa_given.ld + m as u64 + 256 >= 1 << 31 {
            return Err(Error::Fp8Shape(Fp8ShapeError::TooLarge { mnk: (m, n, k) }));
        }
        let m4 = m.next_multiple_of(4);
        let sa_pad = if a_scales_copied(sa_given.address) {
            if super::bf16::may_be_capturing(gpu) {
                return Err(GemmError::AScalesCopyInGraph {
                    address: sa_given.address,
                    ld: sa_given.ld,
                }
                .into());
            }
            let mut pad = stream.alloc_zeros::<f32>(kb * m4)?;
            let p = {
                let (p, _sync) = pad.device_ptr_mut(stream);
                p
            };
            Some((pad, p))
        } else {
            None
        };
        // What TMA reads: the copy (packed, M4 apart) or the caller's rows.
        let (sa_address, sa_ld) = match &sa_pad {
            Some((_, p)) => (*p, m4 as u64),
            None => (sa_given.address, sa_given.ld),
        };
        let sa_len = (kb as u64 - 1) * sa_ld + m as u64;
        // The A-scale vector in boxes of `floats`.
        let sa_map = |floats: u32| {
            crate::tensor_map::encode(&TensorMapDesc::vector(
                ElemType::F32,
                sa_address,
                sa_len,
                floats,
            ))
        };
        let bk = 128;
        let cluster = cluster_of(kernel);
        let tail_rows = (m % bm as usize) as u32;
        let tail_box = if tail_rows == 0 { bm } else { tail_rows };
        // A with boxes of `rows` rows.
        let a_map = |rows: u32| ops.a.map(0, rows, bk, Swizzle::B128);
        let along_n = shares_a(kernel);
        let Some((a_rows, b_rows)) = load_rows(kernel) else {
            unreachable!("tile_of and load_rows list the same kernels");
        };
        // A whole box of A scales: 128 rows, or a 64-row tile's 64.
        let (a, sa) = (
            a_map(a_rows)?,
            sa_map(a_scale_box_floats(a_scale_whole_box_rows(bm)))?,
        );
        // The last tile row's partial 128-row box of A scales, if any.
        let sa_tail_rows = tail_rows % A_SCALE_BOX_ROWS;
        let maps = [
            a,
            ops.b.map(0, b_rows, bk, Swizzle::B128)?,
            sa,
            ops.d.map(0, 64, 32, Swizzle::B64)?,
            // The last tile row's A when M mod BM ≠ 0, a box of just its
            // rows (TMA's zero fill of a full box is slow), and its partial
            // box of A scales; the kernel never reads them otherwise. (Each
            // encode is a driver call of about 3 µs: without them they are
            // the full maps.)
            if tail_rows == 0 { a } else { a_map(tail_box)? },
            if sa_tail_rows == 0 {
                sa
            } else {
                sa_map(a_scale_box_floats(sa_tail_rows))?
            },
        ]
        .map(param);
        let Some(spec) = spec_of(kernel) else {
            unreachable!("tile_of and spec_of list the same kernels");
        };
        let kernel_fn = kernels.kernel(spec)?;
        let slots = if cluster > 1 {
            kernel_fn
                .kernel()
                .max_active_clusters(
                    (cluster, 1, 1),
                    spec.threads,
                    kernel_fn.dynamic_smem_bytes(),
                )?
                .max(1)
        } else {
            gpu.sm_count()
        };
        Ok(Self {
            kernel: kernel_fn,
            name: VARIANTS
                .into_iter()
                .find(|v| *v == kernel)
                .unwrap_or(KERNEL),
            tile: (bm, bn, stages),
            maps,
            b_scales: sb_ptr,
            a_scales: sa_given,
            sa_pad,
            m: m as u32,
            n: n as u32,
            k: k as u32,
            tail_rows,
            sa_ld: sa_ld as u32,
            d: (ops.d.address, ops.d.ld as u32),
            cluster,
            along_n,
            slots,
            stream_k: None,
            _operands: std::marker::PhantomData,
        })
    }

    /// Stream-K: with `Some(min_segment)` (≥ 1 K blocks of 128), every
    /// resident worker (CTA or cluster) is launched and the work units left
    /// after the last full wave (plus one wave) are split along K across
    /// all of them, segments of at least `min_segment` K blocks
    /// (`baton::protocol::tile_scheduler::StreamKSchedule`); the promoted
    /// fp32 partials are added by each unit's finalizer. `None` (the
    /// default): every unit whole. Allocates the fixup workspace (one fp32
    /// tile and two flags per CTA) once.
    ///
    /// Every kernel but [`KERNEL_256X128`] and [`KERNEL_256X96`] has
    /// stream-K ([`has_stream_k`]; two-wave tiles hand over both waves'
    /// accumulators).
    ///
    /// Errors: [`GemmError::NoStreamK`] on a kernel without stream-K,
    /// `min_segment == 0`, or the allocation failing.
    pub fn set_stream_k(&mut self, gpu: &Gpu, min_segment: Option<u32>) -> Result<()> {
        if min_segment.is_some() {
            self.require_stream_k()?;
        }
        self.stream_k = match min_segment {
            Some(s) => Some(StreamKWorkspace::new(
                gpu,
                s,
                self.slots * self.cluster,
                self.tile.0 * self.tile.1,
            )?),
            None => None,
        };
        Ok(())
    }

    /// Stream-K: the full waves added to the stream-K region before the
    /// last, partial one (default 1; 0 splits only the last wave's units).
    /// Errors when stream-K is off.
    pub fn set_stream_k_extra_waves(&mut self, waves: u32) -> Result<()> {
        StreamKWorkspace::set_extra_waves_of(self.stream_k.as_ref(), waves)
    }

    /// The stream-K minimum segment, or `None` when stream-K is off.
    pub fn stream_k(&self) -> Option<u32> {
        self.stream_k.as_ref().map(StreamKWorkspace::min_segment)
    }

    /// Split-K: each work unit's K blocks (of 128) are cut into `splits`
    /// contiguous ranges (±1 K block) on `splits` workers, `units · splits`
    /// workers in all (the stream-K schedule on that grid); each unit's
    /// first worker adds the others' promoted fp32 partials in worker order,
    /// so the result has the same bits on every launch. `splits == 1` turns
    /// split-K (and stream-K) off.
    ///
    /// Errors: [`GemmError::SplitKCount`] unless `splits == 1` or `2 ≤
    /// splits ≤ min(slots / units, K / 128)`; [`GemmError::NoStreamK`] for `splits > 1` on a
    /// kernel without stream-K ([`has_stream_k`]).
    ///
    /// ```no_run
    /// # fn f(plan: &mut baton_runtime::gemm::fp8::Fp8GemmPlan<'_>, gpu: &baton_runtime::Gpu) -> baton_runtime::Result<()> {
    /// plan.set_split_k(gpu, 4)?;
    /// assert_eq!(plan.split_k(), Some(4));
    /// plan.run(gpu)?;
    /// # Ok(()) }
    /// ```
    pub fn set_split_k(&mut self, gpu: &Gpu, splits: u32) -> Result<()> {
        if splits != 1 {
            self.require_stream_k()?;
        }
        let units = self.units();
        let shape = (units, self.k_blocks(), self.slots);
        if splits == 1 {
            super::stream_k::check_split_k(splits, shape.0, shape.1, shape.2)?;
            self.stream_k = None;
            return Ok(());
        }
        let ws =
            StreamKWorkspace::split_k(gpu, splits, shape, self.cluster, self.tile.0 * self.tile.1)?;
        self.stream_k = Some(ws);
        Ok(())
    }

    /// `Ok` when this plan's kernel has stream-K, else the typed refusal
    /// naming the kernel that has.
    fn require_stream_k(&self) -> Result<()> {
        if has_stream_k(self.name) {
            return Ok(());
        }
        Err(GemmError::NoStreamK {
            kernel: self.name.into(),
            rule: "the data-parallel two-wave kernels (256x128, 256x128_mca, 256x96, 256x88) have none; \
                   baton_gemm_fp8_blockwise_256x128_sk and the 128-row kernels have",
        }
        .into())
    }

    /// Workers per unit when split-K is on ([`set_split_k`](Self::set_split_k)).
    pub fn split_k(&self) -> Option<u32> {
        self.stream_k.as_ref().and_then(StreamKWorkspace::splits)
    }

    /// CTAs launched: one per work unit ([`cluster_of`] tiles, stacked
    /// along N or M) when they fit on the SMs (clusters: as many as fit at
    /// once), otherwise the fewest that take the same waves
    /// ([`equal_waves_workers`]), times the cluster size; stream-K: every
    /// resident worker.
    pub fn grid(&self) -> u32 {
        if let Some(w) = &self.stream_k {
            return w.grid();
        }
        data_parallel_ctas(self.units(), self.slots, self.cluster)
    }

    /// Work units (tiles, or clusters of tiles) of this plan's problem.
    fn units(&self) -> u32 {
        units_of(
            self.m,
            self.n,
            (self.tile.0, self.tile.1),
            self.cluster,
            self.along_n,
        )
    }

    /// K blocks of a work unit (K is a multiple of the 128-wide scale block).
    fn k_blocks(&self) -> u32 {
        self.k / SCALE_BLOCK as u32
    }

    /// The kernel this plan launches.
    pub fn kernel_name(&self) -> &'static str {
        self.name
    }

    /// Whether [`run`](Self::run) copies the A scales before each launch
    /// (their base is not 16-byte aligned: [`a_scales_copied`]); `false`:
    /// the kernel reads them in place, whatever their K-block stride.
    pub fn copies_a_scales(&self) -> bool {
        self.sa_pad.is_some()
    }

    /// Enqueues the GEMM on the GPU's stream.
    pub fn run(&self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream();
        if let Some((_, dst)) = &self.sa_pad {
            let dst = *dst;
            let m = self.m as usize;
            let copy = sys::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: self.a_scales.address,
                srcArray: std::ptr::null_mut(),
                srcPitch: 4 * self.a_scales.ld as usize,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstHost: std::ptr::null_mut(),
                dstDevice: dst,
                dstArray: std::ptr::null_mut(),
                dstPitch: 4 * m.next_multiple_of(4),
                WidthInBytes: 4 * m,
                Height: self.k as usize / SCALE_BLOCK,
            };
            // SAFETY: both ranges are live device buffers of the validated
            // sizes ([K/128, M] floats `ld` apart and [K/128, M4] packed),
            // ordered on our stream.
            let r = unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) };
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Cuda(cudarc::driver::DriverError(r)));
            }
        }
        if self.stream_k.is_some() {
            super::bf16::refuse_stream_k_capture(gpu)?;
        }
        let [tma_a, tma_b, tma_sa, tma_d, tma_a_tail, tma_sa_tail] = self.maps;
        let params = GemmFp8Params {
            tma_a,
            tma_b,
            tma_sa,
            tma_d,
            tma_a_tail,
            tma_sa_tail,
            b_scales: self.b_scales as *const f32,
            m: self.m,
            n: self.n,
            k: self.k,
            tail_rows: self.tail_rows,
            sa_ld: self.sa_ld,
            d: self.d.0 as *mut u16,
            d_ld: self.d.1,
            stream_k: StreamKWorkspace::launch_params(
                self.stream_k.as_ref(),
                self.units(),
                self.k_blocks(),
                self.cluster,
            ),
        };
        // SAFETY: the maps and the B-scale pointer name operands borrowed
        // for the plan's lifetime, validated in `new`; the stream-K
        // workspace is off or sized for this grid.
        unsafe { self.kernel.launch(gpu.stream(), self.grid(), &params) }
    }
}

/// One-shot safe blockwise FP8 GEMM on the GPU's stream (validates, encodes
/// the tensor maps, launches). For repeated calls keep an [`Fp8GemmPlan`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_fp8_blockwise(
    gpu: &Gpu,
    kernels: &Kernels,
    a: &CudaSlice<u8>,
    b: &CudaSlice<u8>,
    a_scales: &CudaSlice<f32>,
    b_scales: &CudaSlice<f32>,
    d: &mut CudaSlice<u16>,
    mnk: (usize, usize, usize),
) -> Result<()> {
    Fp8GemmPlan::new(gpu, kernels, a, b, a_scales, b_scales, d, mnk)?.run(gpu)
}

/// Largest finite e4m3 magnitude.
pub const E4M3_MAX: f32 = 448.0;

/// f32 → FP8 e4m3 (OCP "E4M3FN": no infinities, NaN = `S.1111.111`), round
/// to nearest even, finite values beyond ±448 saturate (as `cvt.satfinite`);
/// NaN → `0x7F`.
pub fn f32_to_e4m3(x: f32) -> u8 {
    if x.is_nan() {
        return 0x7F;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs();
    if a > E4M3_MAX {
        return sign | 0x7E;
    }
    let bits = a.to_bits();
    let exp = ((bits >> 23) as i32) - 127;
    let code = if exp < -6 {
        // Subnormal: units of 2^-9 (exact scaling), ties to even; 8 units
        // is the smallest normal, code 0x08.
        (a * 512.0).round_ties_even() as u32
    } else {
        let mant = bits & 0x7F_FFFF;
        let (r, rem) = (mant >> 20, mant & 0xF_FFFF);
        let up = rem > 0x8_0000 || (rem == 0x8_0000 && r & 1 == 1);
        // A carry out of the mantissa steps the exponent (correct rounding).
        ((((exp + 7) as u32) << 3) | r) + up as u32
    };
    sign | code.min(0x7E) as u8
}

/// FP8 e4m3 → f32 (exact).
pub fn e4m3_to_f32(c: u8) -> f32 {
    let sign = if c & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((c >> 3) & 0xF, c & 7);
    if e == 0xF && m == 7 {
        return f32::NAN;
    }
    let mag = if e == 0 {
        m as f32 / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + m as f32 / 8.0) * 2f32.powi(e as i32 - 7)
    };
    sign * mag
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Fp8GemmPlan::grid`] without stream-K, over the units of [`units_of`].
    #[test]
    fn data_parallel_grids_take_the_fewest_ctas_of_the_same_waves() {
        let grid = |m, n, tile, cluster, along_n, slots| {
            data_parallel_ctas(units_of(m, n, tile, cluster, along_n), slots, cluster)
        };
        assert_eq!(grid(300, 520, (128, 128), 1, false, 132), 3 * 5);
        // 256-row tiles in pairs along N: 2 tile rows × ⌈3 / 2⌉ pairs, 2 CTAs each.
        assert_eq!(grid(300, 384, (256, 128), 2, true, 66), 2 * 2 * 2);
        // 4096 tiles of 128×128: 32 waves on 132 SMs, as on 128.
        assert_eq!(grid(8192, 8192, (128, 128), 1, false, 132), 128);
        // 896 tiles of 256×128: 7 waves of 128.
        assert_eq!(grid(4096, 7168, (256, 128), 1, false, 132), 128);
    }

    #[test]
    fn e4m3_roundtrips_every_code() {
        for c in 0u8..=255 {
            if c & 0x7F == 0x7F {
                assert!(e4m3_to_f32(c).is_nan());
                continue;
            }
            let x = e4m3_to_f32(c);
            let back = f32_to_e4m3(x);
            // ±0 both map back to their own sign.
            assert_eq!(back, c, "code {c:#04x} = {x}");
        }
    }

    #[test]
    fn e4m3_known_values_and_rounding() {
        assert_eq!(f32_to_e4m3(1.0), 0x38);
        assert_eq!(e4m3_to_f32(0x38), 1.0);
        assert_eq!(f32_to_e4m3(448.0), 0x7E);
        assert_eq!(e4m3_to_f32(0x7E), 448.0);
        assert_eq!(f32_to_e4m3(1.0e6), 0x7E, "saturates");
        assert_eq!(f32_to_e4m3(-1.0e6), 0xFE);
        assert_eq!(f32_to_e4m3(f32::INFINITY), 0x7E);
        assert_eq!(f32_to_e4m3(f32::NAN), 0x7F);
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9), "smallest subnormal");
        assert_eq!(e4m3_to_f32(0x08), 2f32.powi(-6), "smallest normal");
        // 1.0625 is halfway between 1.0 (m=0) and 1.125 (m=1): ties to even.
        assert_eq!(f32_to_e4m3(1.0625), 0x38);
        // 1.1875 is halfway between 1.125 (m=1) and 1.25 (m=2): to m=2.
        assert_eq!(f32_to_e4m3(1.1875), 0x3A);
        // Just above the halfway point rounds up.
        assert_eq!(f32_to_e4m3(1.07), 0x39);
        // Mantissa carry steps the exponent: 1.9375 (between 1.875 and 2) → 2.
        assert_eq!(f32_to_e4m3(1.9375), 0x40);
        // Subnormal rounding: 1.5 · 2^-9 ties to even (2 units); 2^-10 → 0.
        assert_eq!(f32_to_e4m3(1.5 * 2f32.powi(-9)), 0x02);
        assert_eq!(f32_to_e4m3(2f32.powi(-10)), 0x00);
        // Largest subnormal rounds up into the smallest normal.
        assert_eq!(f32_to_e4m3(7.6 * 2f32.powi(-9)), 0x08);
        assert_eq!(f32_to_e4m3(-0.0), 0x80);
    }

    #[test]
    fn e4m3_rounding_is_nearest() {
        // Against a brute-force nearest search over every finite code.
        let codes: Vec<(u8, f32)> = (0u8..0x7F).map(|c| (c, e4m3_to_f32(c))).collect();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next_u32 = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u32
        };
        for _ in 0..20_000 {
            let x = (next_u32() as f32 / u32::MAX as f32)
                * 460.0
                * 2f32.powi(-((next_u32() % 12) as i32));
            let got = e4m3_to_f32(f32_to_e4m3(x));
            let best = codes
                .iter()
                .map(|&(_, v)| (v - x.min(E4M3_MAX)).abs())
                .fold(f32::INFINITY, f32::min);
            assert_eq!((got - x.min(E4M3_MAX)).abs(), best, "x = {x}");
        }
    }

    /// The wave arithmetic behind the choice, by hand (H100_FP8: 9.0e12
    /// FLOP/s per SM; each tile runs its K blocks + 1.5 of per-tile
    /// overhead; speeds per SM: 128×128 1.0, 128×96 0.79, 256×128 1.1
    /// (session 9) and 256×96 0.94 (session 13's re-fit)).
    ///
    /// * 2048×1216×4096 (32 + 1.5 K blocks): 256×96 tiles are 8 × 13 = 104
    ///   units, one wave, 2·256·96·128·33.5 = 210,763,776 FLOP at
    ///   9.0e12 · 0.94: 24.91 µs; 256×128: 8 × 10 = 80 units, one wave of
    ///   wider tiles (281,018,368 FLOP) at 9.0e12 · 1.1: 28.39 µs;
    ///   128×128: 160 units, 2 waves: 31.22 µs. The width that is not a
    ///   power of two wins.
    /// * 128×24576×1536 (12 + 1.5): 128×96: 256 units, 2 waves, 11.95 µs of
    ///   math; 128×128: 192 units, also 2 waves, 12.58 µs; both read the
    ///   same DRAM bytes (15.73 µs, the estimate), so the less math wins:
    ///   128×96 (measured 8 % faster at M = 64 and 128).
    /// * 4096×2112×7168 (56 + 1.5): 256×96: 352 units, 3 waves, 128.28 µs;
    ///   128×128: 544 units, 5 waves, 133.98 µs: 256×96 (measured 1036
    ///   against 990–996 TFLOP/s in session 13; equal in session 9, before
    ///   the 256-row kernels' uniform descriptors).
    #[test]
    fn a_width_that_is_not_a_power_of_two_wins_only_where_it_saves_waves() {
        use crate::gemm::cost_model::{Machine, Problem, TileShape};
        let tile = |bm, bn, speed| TileShape {
            bm,
            bn,
            bk: SCALE_BLOCK,
            cluster_m: 1,
            speed,
        };
        let near = |got: f64, want: f64| (got - want).abs() < 0.01;
        let cost =
            |(m, n, k), t: TileShape| t.cost(&Problem::fp8(m, n, k), &Machine::H100_FP8, 132);

        let p = (2048, 1216, 4096);
        let (c96, c256, c128) = (
            cost(p, tile(256, 96, SPEED_256X96)),
            cost(p, tile(256, 128, SPEED_256X128)),
            cost(p, tile(128, 128, 1.0)),
        );
        assert_eq!(
            (c96.units, c96.waves, c256.units, c256.waves),
            (104, 1, 80, 1)
        );
        assert_eq!((c128.units, c128.waves), (160, 2));
        assert!(near(c96.math_us, 24.91), "{}", c96.math_us);
        assert!(near(c256.math_us, 28.39), "{}", c256.math_us);
        assert!(near(c128.math_us, 31.22), "{}", c128.math_us);
        // 256×88: 112 units, also one wave, each tile 8 % narrower (14
        // tile columns: in A-multicast pairs).
        assert_eq!(plan(2048, 1216, 4096, 132).0, KERNEL_256X88_MCA);

        let p = (128, 24576, 1536);
        let (c96, c128) = (
            cost(p, tile(128, 96, SPEED_128X96)),
            cost(p, tile(128, 128, 1.0)),
        );
        assert_eq!(
            (c96.units, c96.waves, c128.units, c128.waves),
            (256, 2, 192, 2)
        );
        assert!(near(c96.math_us, 11.95) && near(c128.math_us, 12.58));
        assert!(near(c96.dram_us, c128.dram_us) && c96.dram_us > c96.math_us);
        // The model's pick, 128×96 (256 units), runs as 64×128 tiles.
        let (kernel, planned) = plan(128, 24576, 1536, 132);
        assert_eq!((kernel, planned.units), (for_m(KERNEL_128X96, 128), 256));

        let p = (4096, 2112, 7168);
        let (c96, c128) = (
            cost(p, tile(256, 96, SPEED_256X96)),
            cost(p, tile(128, 128, 1.0)),
        );
        assert_eq!(
            (c96.units, c96.waves, c128.units, c128.waves),
            (352, 3, 544, 5)
        );
        assert!(near(c96.math_us, 128.28), "{}", c96.math_us);
        assert!(near(c128.math_us, 133.98), "{}", c128.math_us);
        // 256×88 (DeepGEMM's pick): 384 units, 3 waves of narrower tiles,
        // sharing A in pairs of tile columns (24 of them; 192 units).
        let c88 = cost(p, tile(256, 88, SPEED_256X88));
        assert_eq!((c88.units, c88.waves), (384, 3));
        assert!(c88.math_us < 0.93 * c96.math_us, "{}", c88.math_us);
        let c88_mca = cost(p, tile(256, 88, SPEED_256X88_MCA));
        assert!(c88_mca.estimate_us() < c88.estimate_us());
        assert_eq!(plan(4096, 2112, 7168, 132), (KERNEL_256X88_MCA, c88_mca));
    }

    /// Where the power-of-two tiles already fill their waves the new widths
    /// are not chosen: 8192² (2048 tiles of 256×128, 16 waves, the last
    /// 68/132 full; 256×96: 2752 tiles, 21 waves of 3/4 the work, 15.75
    /// equivalent, but at speed 0.94 against 1.1), 4096×7168 (896 units,
    /// 7 waves, the last 104/132 full). (Their even tile-column counts
    /// share A in pairs.)
    #[test]
    fn full_waves_keep_the_widest_tiles() {
        assert_eq!(choose(8192, 8192, 8192, 132), KERNEL_256X128_MCA);
        assert_eq!(choose(4096, 7168, 16384, 132), KERNEL_256X128_MCA);
        assert_eq!(choose(4096, 4096, 7168, 132), KERNEL_256X128_MCA);
        // Every candidate kernel has a spec, a tile and a place in VARIANTS.
        for k in [KERNEL_128X32, KERNEL_128X96, KERNEL_256X96, KERNEL_256X88] {
            assert!(VARIANTS.contains(&k) && spec_of(k).is_some() && tile_of(k).is_some());
        }
    }

    /// VARIANTS and the ABI's TILES name the same kernels, each once, and
    /// every kernel's spec runs its tile's threads (one consumer
    /// warpgroup for 64 rows) and holds its ring in its shared memory.
    #[test]
    fn variants_are_the_abi_tiles() {
        let names: std::collections::BTreeSet<_> = VARIANTS.into_iter().collect();
        assert_eq!(names.len(), VARIANTS.len());
        let tiles: std::collections::BTreeSet<_> =
            fp8_abi::TILES.iter().map(|t| t.spec.name).collect();
        assert_eq!(names, tiles);
        for k in VARIANTS {
            let ((bm, bn, stages), spec) = (tile_of(k).unwrap(), spec_of(k).unwrap());
            assert_eq!(spec.threads, fp8_abi::threads(bm as usize), "{k}");
            let stage = (bm + bn) as usize * 128;
            assert!(
                spec.dynamic_smem_bytes as usize > stages as usize * stage,
                "{k}"
            );
        }
    }

    /// The rows of session 30 call 2 (H100, DeepGEMM's method, one call):
    /// at 64 < M ≤ 128 each whole-tile plan runs the 64-row tile that ran
    /// fastest there (forced 64×128 and 64×64 against the 128-row plan),
    /// and the split plans stay on their 128-row tiles.
    #[test]
    fn whole_plans_at_m_up_to_128_run_the_64_row_tiles_measured_ahead() {
        for ((m, n, k), fastest) in [
            ((128, 24576, 1536), KERNEL_64X128),
            ((128, 7168, 2048), KERNEL_64X128),
            ((128, 32768, 512), KERNEL_64X128),
            ((128, 7168, 16384), KERNEL_64X128),
            ((128, 4096, 7168), KERNEL_64X64),
            ((128, 8192, 1024), KERNEL_64X128),
            ((128, 4096, 4096), KERNEL_64X64),
            ((128, 16384, 4096), KERNEL_64X128),
            ((128, 5000, 4096), KERNEL_64X128),
            ((96, 24576, 1536), KERNEL_64X128),
            ((112, 7168, 2048), KERNEL_64X128),
            ((128, 28672, 2048), KERNEL_64X128),
        ] {
            let (kernel, cost) = plan(m, n, k, 132);
            assert_eq!((kernel, cost.splits), (fastest, 1), "{m}x{n}x{k}");
        }
        for (m, n, k, splits) in [(128, 2112, 7168, 2), (128, 1024, 4096, 4)] {
            let (kernel, cost) = plan(m, n, k, 132);
            assert_eq!(
                (kernel, cost.splits),
                (KERNEL_128X32, splits),
                "{m}x{n}x{k}"
            );
        }
    }

    /// The 128×32 tiles where M ≤ 128 leaves few tiles of 128×64 (session
    /// 11 round 2, measured 3.0–5.6 % ahead of the 128×64 plans): whole at
    /// N = 4096 (128 tiles on 128 CTAs), split 2 ways at N = 2112 (66
    /// tiles on 132 CTAs); the shapes with many columns keep their plans
    /// (not measured with 128×32). Long K at N = 1024 takes 128×32 split
    /// 4 since session 16 (measured ahead there:
    /// `n1024_long_k_split_plans_follow_the_forced_rows`).
    #[test]
    fn narrow_tiles_where_few_columns_leave_sms_idle() {
        for (m, n, k, splits) in [
            (64, 2112, 7168, 2),
            (64, 4096, 7168, 1),
            (128, 2112, 7168, 2),
            (128, 4096, 7168, 1),
        ] {
            let (kernel, cost) = plan(m, n, k, 132);
            // (A whole plan at M ≤ 64 runs the 64-row twin: `for_m`.)
            let want = if splits == 1 {
                for_m(KERNEL_128X32, m)
            } else {
                KERNEL_128X32
            };
            assert_eq!((kernel, cost.splits), (want, splits), "{m}x{n}x{k}");
        }
        for (m, n, k) in [
            (64, 7168, 16384),
            (128, 7168, 16384),
            (64, 7168, 2048),
            (128, 7168, 2048),
            (64, 24576, 1536),
            (128, 24576, 1536),
            (64, 32768, 512),
            (128, 32768, 512),
        ] {
            assert_ne!(choose(m, n, k, 132), KERNEL_128X32, "{m}x{n}x{k}");
        }
    }

    /// The launch floor every kernel pays in the queued timing and the
    /// model leaves out (BENCHMARKS.md, session 9: 5.3 µs).
    const LAUNCH_FLOOR_US: f64 = 5.3;

    /// The split plans of the FP8 sweep's N = 1024 rows as the sweep timed
    /// them (queued, session 15 call 7,
    /// `docs/runs/2026-11-28-s15/call7/gemm-fp8-sweep.json`): (M, K),
    /// kernel, split count, our ms.
    const QUEUED_SPLIT_ROWS: [((usize, usize), &str, usize, f64); 11] = [
        ((8, 32768), KERNEL_128X64, 7, 0.024896),
        ((32, 32768), KERNEL_128X64, 7, 0.025280),
        ((64, 32768), KERNEL_128X32, 4, 0.022848),
        ((128, 32768), KERNEL_128X32, 4, 0.024992),
        ((256, 32768), KERNEL_128X64, 4, 0.030848),
        ((512, 32768), KERNEL, 4, 0.044064),
        ((8, 4096), KERNEL_128X32, 4, 0.010944),
        ((32, 4096), KERNEL_128X32, 4, 0.011392),
        ((64, 4096), KERNEL_128X32, 4, 0.011552),
        ((128, 4096), KERNEL_128X32, 4, 0.012608),
        ((256, 4096), KERNEL_128X32, 2, 0.012768),
    ];

    /// A forced plan's row: M×N×K, kernel, split count, a measurement.
    type ForcedRow = ((usize, usize, usize), &'static str, usize, f64);

    /// Forced plans timed by the anchor's method (L2 flushed before each
    /// call; DRAM-bound shapes run slower than queued, e.g. 256×1024×32768
    /// 128×64 split 4: 35.1 µs flushed, 30.8 queued, so only their order
    /// at one shape is used): M×N×K, kernel, split count, ours TFLOP/s.
    /// Session 16 call 1 (`docs/runs/2026-11-28-s16/call1/fp8-split-rows.txt`,
    /// N = 1024, K = 32768) and session 11 round 2 (BENCHMARKS.md, 128×32
    /// with 10 stages against the 128×64 plans).
    const FLUSHED_ROWS: [ForcedRow; 19] = [
        ((512, 1024, 32768), KERNEL, 4, 779.95),
        ((512, 1024, 32768), KERNEL_128X64, 2, 709.7),
        ((512, 1024, 32768), KERNEL_256X128_SK, 8, 654.9),
        ((256, 1024, 32768), KERNEL_128X64, 4, 489.4),
        ((256, 1024, 32768), KERNEL, 8, 449.3),
        ((256, 1024, 32768), KERNEL_256X128_SK, 16, 320.5),
        ((32, 1024, 32768), KERNEL_128X64, 8, 73.8),
        ((32, 1024, 32768), KERNEL_128X32, 4, 79.4),
        ((32, 1024, 32768), KERNEL, 16, 58.4),
        ((64, 2112, 7168), KERNEL_128X64, 4, 109.2),
        ((64, 2112, 7168), KERNEL_128X32, 1, 106.3),
        ((64, 2112, 7168), KERNEL_128X32, 2, 114.7),
        ((64, 4096, 7168), KERNEL_128X64, 2, 161.4),
        ((64, 4096, 7168), KERNEL_128X32, 1, 166.2),
        ((128, 2112, 7168), KERNEL_128X64, 4, 202.5),
        ((128, 2112, 7168), KERNEL_128X32, 1, 193.3),
        ((128, 2112, 7168), KERNEL_128X32, 2, 213.8),
        ((128, 4096, 7168), KERNEL_128X64, 2, 302.9),
        ((128, 4096, 7168), KERNEL_128X32, 1, 316.8),
    ];

    /// The split-K terms by hand at 32×1024×32768 (the sweep's 0.88 row):
    ///
    /// * 128×32 split 4: 32 units on 128 CTAs of 64 K blocks. Math: 2 ·
    ///   128 · 32 · 128 · (64 + 1.5) = 68,681,728 FLOP at 9 TFLOP/s ·
    ///   0.52 = 14.676 µs. DRAM: A's 32 rows and B's 1024 over K, (32 +
    ///   1024) · 32768 · 1.03125 B, and D 65,536 B = 35,749,888 B at 2.9
    ///   TB/s · (1 − 0.4 · 4/132): 12.479 µs. Fixup in turn: 3 µs and 4
    ///   partials of 16 KiB at 60 GB/s: 4.092 µs. Estimate 18.768 µs (the
    ///   old constants, 0.46 and 50 GB/s: 16.590 + 4.311 = 20.901).
    /// * 128×64 split 8: 16 units on 128 CTAs of 32 K blocks. Math 2 · 128
    ///   · 64 · 128 · 33.5 = 70,254,592 FLOP at 9 · 0.7: 11.152 µs, under
    ///   the same DRAM's 12.479; fixup 3 µs and 8 partials of 32 KiB:
    ///   7.369 µs. Estimate 19.848 µs (old: 12.479 + 8.243 = 20.722, ahead
    ///   of 128×32 split 4).
    #[test]
    fn split_k_terms_by_hand_at_32x1024x32768() {
        let (m, n, k) = (32, 1024, 32768);
        let c32 = plan_cost(m, n, k, 132, KERNEL_128X32, 4).unwrap();
        assert_eq!((c32.units, c32.splits, c32.waves), (32, 4, 1));
        assert!((c32.math_us - 68_681_728.0 / (9e12 * 0.52) * 1e6).abs() < 1e-9);
        let dram = 35_749_888.0 / (2.9e12 * (1.0 - 0.4 * 4.0 / 132.0)) * 1e6;
        assert!((c32.dram_us - dram).abs() < 1e-9, "{c32:?}");
        let fix = 3.0 + 4.0 * 16384.0 / 60e9 * 1e6;
        assert!((c32.fixup_us - fix).abs() < 1e-9, "{c32:?}");
        assert!((c32.estimate_us() - 18.768).abs() < 1e-3, "{c32:?}");
        let c64 = plan_cost(m, n, k, 132, KERNEL_128X64, 8).unwrap();
        assert_eq!((c64.units, c64.splits, c64.waves), (16, 8, 1));
        assert!((c64.math_us - 70_254_592.0 / (9e12 * 0.7) * 1e6).abs() < 1e-9);
        assert!((c64.dram_us - dram).abs() < 1e-9, "{c64:?}");
        let fix = 3.0 + 8.0 * 32768.0 / 60e9 * 1e6;
        assert!((c64.fixup_us - fix).abs() < 1e-9, "{c64:?}");
        assert!((c64.estimate_us() - 19.848).abs() < 1e-3, "{c64:?}");
        assert_eq!(plan(m, n, k, 132), (KERNEL_128X32, c32));
    }

    /// The plans of the FP8 sweep's long-K column (N = 1024, K = 32768)
    /// follow the forced rows: 128×32 split 4 at M ≤ 128 (M = 8 and 32
    /// were 128×64 split 7, an uneven cut of 256 K blocks; 128×32 split 4
    /// measured 10 % ahead of it at M = 32, L2 flushed), 128×64 split 4 at
    /// 256, 128×128 split 4 at 512 (each the best of its forced rows). On
    /// the sweep's 11 queued split rows the estimates are within an rms
    /// log error of 0.07 of the times past the launch floor (0.096 with
    /// the constants before session 16); every pair of flushed rows at one
    /// shape that measured ≥ 2.5 % apart is ordered as measured (before:
    /// 128×64 split 8 ahead of 128×32 split 4 at 32×1024×32768).
    #[test]
    fn n1024_long_k_split_plans_follow_the_forced_rows() {
        for (m, want) in [
            (8, (KERNEL_128X32, 4)),
            (32, (KERNEL_128X32, 4)),
            (64, (KERNEL_128X32, 4)),
            (128, (KERNEL_128X32, 4)),
            (256, (KERNEL_128X64, 4)),
            (512, (KERNEL, 4)),
        ] {
            let (kernel, cost) = plan(m, 1024, 32768, 132);
            assert_eq!((kernel, cost.splits), want, "{m}x1024x32768");
        }
        let sq: f64 = QUEUED_SPLIT_ROWS
            .iter()
            .map(|&((m, k), kernel, splits, ms)| {
                let e = plan_cost(m, 1024, k, 132, kernel, splits).unwrap();
                (e.estimate_us() / (ms * 1e3 - LAUNCH_FLOOR_US))
                    .ln()
                    .powi(2)
            })
            .sum();
        let rms = (sq / QUEUED_SPLIT_ROWS.len() as f64).sqrt();
        assert!(rms < 0.07, "rms log error {rms}");
        let est = |((m, n, k), kernel, splits, _): ForcedRow| {
            plan_cost(m, n, k, 132, kernel, splits)
                .unwrap()
                .estimate_us()
        };
        for &a in &FLUSHED_ROWS {
            for &b in &FLUSHED_ROWS {
                // Faster by ≥ 2.5 %: more TFLOP/s at the same shape.
                if a.0 == b.0 && a.3 >= 1.025 * b.3 {
                    assert!(est(a) < est(b), "{a:?} ({}) vs {b:?} ({})", est(a), est(b));
                }
            }
        }
    }

    /// The A-multicast kernels replace their single-CTA twins wherever the
    /// tile columns pair up (measured ahead at every K, session 26; 256×128
    /// in its 3-stage form up to K = 2048, session 27):
    /// 4096×{24576×1536, 7168×2048, 32768×512, 7168×4096, 7168×16384}
    /// (even column counts); not 4096×7296 with 128-wide tiles (57
    /// columns) nor 256×88 at N = 2200 (25 columns); never with a split
    /// (no stream-K: a split plan runs 256×128's twin).
    #[test]
    fn a_multicast_wherever_the_columns_pair() {
        for (m, n, k) in [
            (4096, 24576, 1536),
            (4096, 7168, 2048),
            (4096, 32768, 512),
            (4096, 7168, 4096),
            (4096, 7168, 16384),
        ] {
            assert_eq!(
                choose(m, n, k, 132),
                for_k(KERNEL_256X128_MCA, k),
                "{m}x{n}x{k}"
            );
        }
        assert_ne!(choose(4096, 7296, 4096, 132), KERNEL_256X128_MCA);
        assert_ne!(choose(4096, 2200, 7168, 132), KERNEL_256X88_MCA);
        for (m, n, k) in [(4096, 4096, 256), (1024, 1024, 1024), (512, 8192, 2048)] {
            let (kernel, cost) = plan(m, n, k, 132);
            assert!(!shares_a(kernel) || cost.splits == 1, "{m}x{n}x{k}");
        }
        for k in [
            KERNEL_256X128_MCA,
            KERNEL_256X88_MCA,
            KERNEL_256X128_MCA_3STAGE,
        ] {
            assert!(!has_stream_k(k));
            assert_eq!((cluster_of(k), shares_a(k)), (2, true));
        }
        assert_eq!(units_of(300, 520, (256, 128), 2, true), 2 * 3);
        assert_eq!(units_of(300, 520, (128, 128), 2, false), 2 * 5);
    }

    #[test]
    fn validation_names_the_problem() {
        assert_eq!(
            validate(0, 8, 128, 0, 1024, 0, 1, 0),
            Err(Fp8ShapeError::EmptyDimension { mnk: (0, 8, 128) })
        );
        assert_eq!(
            validate(4, 8, 200, 800, 1600, 4, 1, 32),
            Err(Fp8ShapeError::KNotMultipleOf128 { k: 200 })
        );
        assert_eq!(
            validate(4, 12, 128, 512, 1536, 4, 1, 48),
            Err(Fp8ShapeError::RowNotAligned { n: 12 })
        );
        assert_eq!(
            validate(4, 8, 256, 1024, 2048, 4, 2, 32),
            Err(Fp8ShapeError::WrongLength {
                operand: "A scales",
                expected: 8,
                got: 4
            })
        );
        assert_eq!(
            validate(4, 136, 256, 1024, 136 * 256, 8, 2, 4 * 136),
            Err(Fp8ShapeError::WrongLength {
                operand: "B scales",
                expected: 4,
                got: 2
            })
        );
        assert!(validate(3, 136, 256, 768, 136 * 256, 6, 4, 3 * 136).is_ok());
        let msg = Fp8ShapeError::KNotMultipleOf128 { k: 200 }.to_string();
        assert!(msg.contains("multiple of 128"), "{msg}");
    }
}
