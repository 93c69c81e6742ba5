//! Hopper BF16 GEMM: `D = alpha·A·Bᵀ + beta·C`, persistent and
//! warp-specialized, built from baton's pipelines.
//!
//! * A: M×K row-major bf16; B: N×K row-major bf16 (K-major, "TN"); C, D: M×N
//!   row-major bf16; fp32 accumulation.
//! * CTA tile 128 × BN × 64 (BN = 256, 224, 192, 160, 128 or 64; one kernel entry per
//!   configuration, input stages derived from the shared-memory budget),
//!   384 threads:
//!   - warpgroup 0 (registers released to 40): warp 0's elected lane is the
//!     main-loop producer (`InputTilePipeline<StandardTilePayload>`, TMA,
//!     128-byte swizzle); warp 1's elected lane is the epilogue-load
//!     producer (`EpiLoadPipeline`, C sub-tiles by TMA, only when beta ≠ 0);
//!   - warpgroups 1 and 2 (232 registers): consumers, 64 × BN each with
//!     `wgmma.m64nBNk16`; stage `k` is released (one arrival per warpgroup
//!     and CTA) after `wgmma.wait_group<1>` retired the MMAs that read it
//!     (`defer_release`).
//! * `_c2` configurations: clusters of 2 CTAs along M; each CTA loads half of
//!   the shared B tile and multicasts it to both, so the empty barriers
//!   count both CTAs' consumer warpgroups.
//! * Epilogue per consumer warpgroup, in BN / 32 sub-tiles of 64×32 through
//!   four 64-byte-swizzled shared buffers (bank-conflict free). With
//!   beta ≠ 0 the buffers are the stages of the warpgroup's
//!   `EpiLoadPipeline`: each thread reads its C values and writes
//!   `alpha·acc + beta·C` as bf16 over them, one thread TMA-stores the
//!   buffer, and the stage goes back to the C-load warp once the store has
//!   read it (`cp.async.bulk.wait_group.read`), so four C loads are in
//!   flight. With beta = 0 the four buffers rotate as D staging. TMA clips
//!   ragged edges; the stores drain while the warpgroup starts the next
//!   tile's main loop.
//! * Persistent grid: CTA `b` takes work units `b, b + grid, …` (a unit is a
//!   cluster's tiles) in grouped, L2-friendly order (`group_m`).
//! * Strided batches in one launch: every map is rank 3 (third dimension
//!   the matrix), the units of all `batch` matrices form one schedule
//!   (`ClusterWork::batched`; stream-K and split-K over all of them), and
//!   each role reads a unit's matrix from `batch_tile_of`; an input shared
//!   by the batch (`batch_broadcast`) is read at batch coordinate 0.
//! * MN-major entries (`_am`, `_bn`, `_ambn`; 128×256 and 128×128): a
//!   column-major A and/or a K×N row-major B, loaded as 64 × 64 boxes
//!   (64 elements of M or N per 128-byte row) and read by `wgmma` with its
//!   transpose bits (`Bf16N256T` / `Bf16N128T`, `StageDescriptors::with_layouts`).
//! * Tall entries (`baton_gemm_bf16_256x128`, `_256x128_c2`, see
//!   `gemm_tall`): 256 × 128 tiles, both consumer warpgroups on every
//!   stage, each computing 128 rows in two `m64n128k16` accumulators (the
//!   ping-pong main loop without turns) and storing both halves through
//!   its own ring; no stream-K. N = 4104 is 33 columns of 128 where
//!   128-row tiles need 17 of 256 and twice the rows.
//! * Ping-pong entries (`*_pingpong`, 128×128 tiles, see `gemm_pingpong`):
//!   each consumer warpgroup owns whole tiles, alternating, and the two
//!   take turns on the tensor cores and the epilogue through an
//!   `OrderedBarrier<2, 2>` (CUTLASS's `KernelTmaWarpSpecializedPingpong`);
//!   no stream-K.
//!
//! Assembled from the Hopper roles of `baton_kernel_roles::sm90` (their
//! docs state each role's barrier contract): the layout (`GemmSmem`), then
//! setup (`init_then_sync`), the schedule (`ClusterWork`, `TileRows`) and
//! `dispatch_roles!` over `GEMM_ROLES` — `TmaProducer` with this kernel's
//! loads, `CLoad`, and per consumer warpgroup `bf16_mainloop`,
//! `stream_k_fixup_overlapped!` and `StoreEpilogue` (in place over C through
//! `LoadedC`, or the D ring).

use baton::arch::ptx::tma::{TensorMap, load_3d, prefetch_tensormap, store_wait_group};
use baton::arch::ptx::{dynamic_smem, thread_idx_x};
use baton::epi_load::EpiLoadPipeline;
use baton::protocol::ordered_barrier::OrderedBarrier;
use baton::protocol::stream_k::split_share;
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::Tile;
use baton::tile_pipeline::{InputConsumer, InputTilePipeline};
use baton_kernel_roles::dispatch_roles;
use baton_kernel_roles::sm90::c_load::CLoad;
use baton_kernel_roles::sm90::dispatch::{GEMM_ROLES, init_then_sync, init_then_sync_scheduled};
use baton_kernel_roles::sm90::epilogue::{LoadedC, SUB_COLS, SUB_ROWS, StoreEpilogue};
use baton_kernel_roles::sm90::mainloop_bf16::{
    Bf16Mma, Bf16N32, Bf16N64, Bf16N128, Bf16N128T, Bf16N160, Bf16N192, Bf16N224, Bf16N256,
    Bf16N256T, bf16_mainloop, bf16_pingpong_mainloop, finish_pingpong_mainloop,
};
use baton_kernel_roles::sm90::producer::{TmaProducer, load_b_tile_3d};
use baton_kernel_roles::sm90::schedule::{ClusterWork, TileRows};
use baton_kernel_roles::sm90::stage_descriptors::{MN_BOX_BYTES, StageDescriptors};
use baton_kernel_roles::sm90::stream_k::{StreamKFixup, distributed_split_k};
use baton_kernel_roles::stream_k_fixup_overlapped;
use baton_kernel_roles::trace::{self, Event};

use baton_kernels_abi::gemm_bf16::{
    self as abi, A_MN_MAJOR, B_MN_MAJOR, GemmSmem, K_MAJOR, PINGPONG_GROUPS, PINGPONG_TURNS,
    Payload, PingPongSmem, Stage, TALL_BM, fixup_batch, stages_for, stages_for_tile,
};
pub use baton_kernels_abi::gemm_bf16::{BK, BM};
use baton_kernels_abi::gemm_params::{
    BROADCAST_A, BROADCAST_B, BROADCAST_C, GemmBf16Params, StreamKParams,
};

/// The BF16 entry `$name`'s tensor maps `(A, B, C, D, A tail)` as generic
/// addresses into its parameter space: the maps stay there by value (no
/// copy) and TMA reads them through these addresses.
macro_rules! param_maps {
    ($name:ident) => {{
        let params = baton::entry_param_address!($name);
        let map = |offset: usize| params.wrapping_add(offset) as *const TensorMap;
        (
            map(core::mem::offset_of!(GemmBf16Params, tma_a)),
            map(core::mem::offset_of!(GemmBf16Params, tma_b)),
            map(core::mem::offset_of!(GemmBf16Params, tma_c)),
            map(core::mem::offset_of!(GemmBf16Params, tma_d)),
            map(core::mem::offset_of!(GemmBf16Params, tma_a_tail)),
        )
    }};
}

macro_rules! gemm_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $bnh:literal, $acc:literal, $cluster:literal, $mma:ty) => {
        gemm_entry!($(#[$doc])* $spec, $name, $bn, $bnh, $acc, $cluster, $mma, K_MAJOR);
    };
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $bnh:literal, $acc:literal, $cluster:literal, $mma:ty, $layout:expr) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(tiles, SMs) CTAs of 384 threads, with
            /// `size_of` the configuration's shared-memory layout as dynamic
            /// shared memory (the host's table; checked by a test against the PTX).
            ///
            /// # Safety
            /// The tensor maps (by value in the parameters, 64-byte
            /// aligned; TMA reads them in the parameter space) describe, with 128-byte
            /// swizzle, A (dims {K, M}, box {64, 128}) and B (dims {K, N},
            /// box {64, BN}); with 64-byte swizzle, C and D (dims {N, M},
            /// box {32, 64}); all bf16. `tma_c` is only read when `beta != 0`.
            /// MN-major entries (`_am`: A M-major, `_bn`: B N-major) take
            /// that operand's map with dims {M, K} (or {N, K}) and box
            /// {64, 64} instead; an M-major A has no tail map (`tma_a_tail`
            /// is then never read).
            /// `group_m ≥ 1`: cluster-unit rows per rasterization group.
            ///
            /// Stream-K (`stream_k.schedule` with stream-K workers: the
            /// host's `StreamKSchedule::launch_words` for this launch's
            /// units, K blocks and workers): `partials` then holds
            /// `2 · grid · 64 · BN` floats and `flags` `2 · grid` `u32`s
            /// (zeroed once), and `epoch ≠ 0` differs from the previous
            /// launch's on these buffers. With no stream-K workers
            /// (`StreamKParams::OFF`) they are never touched (may be null).
            ///
            /// `tail_rows` is `M mod 128`; when it is not 0, `tma_a_tail`
            /// describes A with a box of `tail_rows` rows (the last tile row
            /// loads only those), otherwise it is never read.
            ///
            /// Every map is rank 3 (third dimension: the matrix of the
            /// batch, box 1): `batch ≥ 1` matrices are computed in this
            /// launch, units `batch ×` one matrix's; an input whose bit is
            /// set in `batch_broadcast` (`BROADCAST_A/B/C`) is read at
            /// batch coordinate 0 for every matrix.
            pub fn $name(p: GemmBf16Params) {
                let GemmBf16Params { m, n, k, group_m, alpha, beta, stream_k: StreamKParams { partials: sk_partials, flags: sk_flags, epoch: sk_epoch, schedule: sk_schedule }, tail_rows, batch, batch_broadcast, .. } = p;
                let (tma_a, tma_b, tma_c, tma_d, tma_a_tail) = param_maps!($name);
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<GemmSmem<$bn, { stages_for($bn) }>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract.
                let fixup = unsafe { StreamKFixup::<{ GEMM_ROLES.consumer_warpgroups }>::new(sk_partials, sk_flags, sk_epoch) };
                // SAFETY: forwarded to the kernel's contract.
                unsafe { gemm::<$mma, $bn, $bnh, $acc, { stages_for($bn) }, $cluster, { $layout }>(tma_a, tma_b, tma_c, tma_d, m, n, k, group_m, alpha, beta, fixup, sk_schedule, (tma_a_tail, tail_rows), (batch, batch_broadcast)) }
            }
        }
    };
}

gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, 4 stages (m64n256k16).
    abi::GEMM_128X256,
    baton_gemm_bf16_128x256, 256, 256, 128, 1, Bf16N256
);
gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, 4 stages, clusters of 2 CTAs along M
    /// sharing the B tile by TMA multicast (each CTA loads half).
    abi::GEMM_128X256_C2,
    baton_gemm_bf16_128x256_c2, 256, 128, 128, 2, Bf16N256
);
gemm_entry!(
    /// BF16 GEMM, 128×224×64 tiles, 2-CTA clusters with B multicast: N
    /// multiples of 224 (7168 = 32 × 224) tile without a ragged column.
    abi::GEMM_128X224_C2,
    baton_gemm_bf16_128x224_c2, 224, 112, 112, 2, Bf16N224
);
gemm_entry!(
    /// BF16 GEMM, 128×192×64 tiles, 2-CTA clusters with B multicast
    /// (m64n192k16).
    abi::GEMM_128X192_C2,
    baton_gemm_bf16_128x192_c2, 192, 96, 96, 2, Bf16N192
);
gemm_entry!(
    /// BF16 GEMM, 128×160×64 tiles, 2-CTA clusters with B multicast
    /// (m64n160k16).
    abi::GEMM_128X160_C2,
    baton_gemm_bf16_128x160_c2, 160, 80, 80, 2, Bf16N160
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, 6 stages (m64n128k16).
    abi::GEMM_128X128,
    baton_gemm_bf16_128x128, 128, 128, 64, 1, Bf16N128
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, 6 stages, 2-CTA clusters with B multicast.
    abi::GEMM_128X128_C2,
    baton_gemm_bf16_128x128_c2, 128, 64, 64, 2, Bf16N128
);
gemm_entry!(
    /// BF16 GEMM, 128×64×64 tiles, 8 stages (m64n64k16): for few, skinny tiles.
    abi::GEMM_128X64,
    baton_gemm_bf16_128x64, 64, 64, 32, 1, Bf16N64
);
gemm_entry!(
    /// BF16 GEMM, 128×32×64 tiles, 8 stages (m64n32k16): twice the CTAs of
    /// 128×64 where there are few tile rows.
    abi::GEMM_128X32,
    baton_gemm_bf16_128x32, 32, 32, 16, 1, Bf16N32
);

gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, A M-major (column-major A).
    abi::GEMM_128X256_AM,
    baton_gemm_bf16_128x256_am, 256, 256, 128, 1, Bf16N256T<1, 0>, A_MN_MAJOR
);
gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, B N-major (a K×N row-major B).
    abi::GEMM_128X256_BN,
    baton_gemm_bf16_128x256_bn, 256, 256, 128, 1, Bf16N256T<0, 1>, B_MN_MAJOR
);
gemm_entry!(
    /// BF16 GEMM, 128×256×64 tiles, A M-major and B N-major.
    abi::GEMM_128X256_AMBN,
    baton_gemm_bf16_128x256_ambn, 256, 256, 128, 1, Bf16N256T<1, 1>, A_MN_MAJOR | B_MN_MAJOR
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, A M-major (column-major A).
    abi::GEMM_128X128_AM,
    baton_gemm_bf16_128x128_am, 128, 128, 64, 1, Bf16N128T<1, 0>, A_MN_MAJOR
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, B N-major (a K×N row-major B).
    abi::GEMM_128X128_BN,
    baton_gemm_bf16_128x128_bn, 128, 128, 64, 1, Bf16N128T<0, 1>, B_MN_MAJOR
);
gemm_entry!(
    /// BF16 GEMM, 128×128×64 tiles, A M-major and B N-major.
    abi::GEMM_128X128_AMBN,
    baton_gemm_bf16_128x128_ambn, 128, 128, 64, 1, Bf16N128T<1, 1>, A_MN_MAJOR | B_MN_MAJOR
);

macro_rules! pingpong_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $bnh:literal, $acc:literal, $cluster:literal, $mma:ty) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(tiles, SMs) CTAs of 384 threads (a
            /// multiple of the cluster size), with `size_of` the
            /// configuration's `PingPongSmem` as dynamic shared memory.
            ///
            /// # Safety
            /// As the cooperative entries, except that stream-K is not
            /// implemented: the stream-K parameters are ignored (every unit
            /// is computed whole; the buffers are never touched).
            pub fn $name(p: GemmBf16Params) {
                let GemmBf16Params { m, n, k, group_m, alpha, beta, tail_rows, batch, batch_broadcast, .. } = p;
                let (tma_a, tma_b, tma_c, tma_d, tma_a_tail) = param_maps!($name);
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<PingPongSmem<$bn, { stages_for($bn) }>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract.
                unsafe { gemm_pingpong::<$mma, $bn, $bnh, $acc, { stages_for($bn) }, $cluster, K_MAJOR>(tma_a, tma_b, tma_c, tma_d, m, n, k, group_m, (alpha, beta), (tma_a_tail, tail_rows), (batch, batch_broadcast)) }
            }
        }
    };
}

pingpong_entry!(
    /// BF16 GEMM, ping-pong: 128×128×64 tiles, 6 stages, each consumer
    /// warpgroup owns whole tiles (2 × m64n128k16 per K step) and the two
    /// take turns on the tensor cores and the epilogue.
    abi::GEMM_128X128_PINGPONG,
    baton_gemm_bf16_128x128_pingpong, 128, 128, 64, 1, Bf16N128
);
pingpong_entry!(
    /// BF16 GEMM, ping-pong 128×128×64 in 2-CTA clusters along M sharing
    /// the B tile by TMA multicast.
    abi::GEMM_128X128_PINGPONG_C2,
    baton_gemm_bf16_128x128_pingpong_c2, 128, 64, 64, 2, Bf16N128
);

macro_rules! tall_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $bnh:literal, $acc:literal, $cluster:literal, $mma:ty) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(units, slots) CTAs of 384 threads (a
            /// multiple of the cluster size), with `size_of` the
            /// configuration's `GemmSmem<BN, STAGES, 256>` as dynamic
            /// shared memory.
            ///
            /// # Safety
            /// As the cooperative entries, with A's map box {64, 256}
            /// (`tma_a_tail`: `tail_rows = M mod 256` rows) and no stream-K:
            /// the stream-K parameters are ignored (every unit is computed
            /// whole; the buffers are never touched).
            pub fn $name(p: GemmBf16Params) {
                let GemmBf16Params { m, n, k, group_m, alpha, beta, tail_rows, batch, batch_broadcast, .. } = p;
                let (tma_a, tma_b, tma_c, tma_d, tma_a_tail) = param_maps!($name);
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<GemmSmem<$bn, { stages_for_tile(TALL_BM as usize, $bn) }, { TALL_BM as usize }>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract.
                unsafe { gemm_tall::<$mma, $bn, $bnh, $acc, { stages_for_tile(TALL_BM as usize, $bn) }, $cluster>(tma_a, tma_b, tma_c, tma_d, m, n, k, group_m, (alpha, beta), (tma_a_tail, tail_rows), (batch, batch_broadcast)) }
            }
        }
    };
}

tall_entry!(
    /// BF16 GEMM, 256×128×64 tiles, 4 stages: each consumer warpgroup
    /// computes 128 rows × 128 (2 × m64n128k16 per K step).
    abi::GEMM_256X128,
    baton_gemm_bf16_256x128, 128, 128, 64, 1, Bf16N128
);
tall_entry!(
    /// BF16 GEMM, 256×128×64 tiles in 2-CTA clusters along M sharing the
    /// B tile by TMA multicast (each CTA loads half).
    abi::GEMM_256X128_C2,
    baton_gemm_bf16_256x128_c2, 128, 64, 64, 2, Bf16N128
);

/// The TMA producer role of both BF16 schedules (cooperative and
/// ping-pong): per stage, A's loaded rows (through the tail map on a ragged
/// last tile row; none when the tile row has no rows left) and B, or this
/// CTA's multicast half of it. The stage's full barrier expects
/// `a_rows · a_row_bytes + b_bytes`. A macro, not a function, so that both
/// kernels keep their closures inlined exactly as before.
///
/// MN-major operands (`LAYOUT`, a const generic of the expanding function):
/// an M-major A is loaded as the 64 × 64 boxes (64 rows of M each, TMA
/// zero-filling past M and K) that hold the tile row's rows — one or two,
/// `⌈a_rows / 64⌉ · MN_BOX_BYTES` expected — and an N-major B as its
/// `BN / 64` boxes (no clusters: `CLUSTER_M == 1`).
macro_rules! bf16_producer {
    ($input:expr, $work:expr, $rows:expr, ($tma_a:expr, $tma_a_tail:expr, $tma_b:expr), ($a_row_bytes:expr, $b_bytes:expr), $bn:expr, $rank:expr, $broadcast:expr) => {
        bf16_producer!(
            $input,
            $work,
            $rows,
            ($tma_a, $tma_a_tail, $tma_b),
            ($a_row_bytes, $b_bytes),
            $bn,
            $rank,
            $broadcast,
            BM,
            Stage<BN>
        )
    };
    ($input:expr, $work:expr, $rows:expr, ($tma_a:expr, $tma_a_tail:expr, $tma_b:expr), ($a_row_bytes:expr, $b_bytes:expr), $bn:expr, $rank:expr, $broadcast:expr, $bm:expr, $stage:ty) => {
        TmaProducer {
            input: $input,
            work: $work,
            rows: $rows,
        }
        .run_batched(
            #[inline(always)]
            |t| {
                // Batch coordinates: the tile's matrix, or 0 for an input
                // shared by the whole batch.
                let a_batch = if $broadcast & BROADCAST_A != 0 {
                    0
                } else {
                    t.batch as i32
                };
                let b_batch = if $broadcast & BROADCAST_B != 0 {
                    0
                } else {
                    t.batch as i32
                };
                let a_mn = LAYOUT & A_MN_MAJOR != 0;
                let map_a = if t.a_rows == $bm || a_mn {
                    $tma_a
                } else {
                    $tma_a_tail
                };
                let a_boxes = t.a_rows.div_ceil(64);
                let a_bytes = if a_mn {
                    a_boxes * MN_BOX_BYTES
                } else {
                    t.a_rows * $a_row_bytes
                };
                (
                    a_bytes + $b_bytes,
                    #[inline(always)]
                    move |tiles, bar, kb| {
                        let kc = (kb * BK) as i32;
                        // SAFETY: maps per the kernel contract; the stage is
                        // ours and its full barrier expects these bytes.
                        unsafe {
                            if a_mn {
                                let a = smem_field!(tiles, $stage, a).addr();
                                for j in 0..a_boxes {
                                    load_3d(
                                        map_a,
                                        mn_box(a + j * MN_BOX_BYTES),
                                        bar,
                                        (t.tm * $bm + j * 64) as i32,
                                        kc,
                                        a_batch,
                                    );
                                }
                            } else if t.a_rows != 0 {
                                load_3d(
                                    map_a,
                                    smem_field!(tiles, $stage, a),
                                    bar,
                                    kc,
                                    (t.tm * $bm) as i32,
                                    a_batch,
                                );
                            }
                            if LAYOUT & B_MN_MAJOR != 0 {
                                const {
                                    assert!(
                                        (CLUSTER_M == 1 && BN % 64 == 0)
                                            || LAYOUT & B_MN_MAJOR == 0,
                                        "an N-major B is whole 64-column boxes, not multicast"
                                    )
                                };
                                let b = smem_field!(tiles, $stage, b).addr();
                                for j in 0..(BN / 64) as u32 {
                                    load_3d(
                                        $tma_b,
                                        mn_box(b + j * MN_BOX_BYTES),
                                        bar,
                                        (t.tn * $bn + j * 64) as i32,
                                        kc,
                                        b_batch,
                                    );
                                }
                            } else {
                                load_b_tile_3d::<u16, BN, BNH, { BK as usize }, CLUSTER_M>(
                                    $tma_b,
                                    smem_field!(tiles, $stage, b),
                                    bar,
                                    kc,
                                    t.tn * $bn,
                                    $rank,
                                    b_batch,
                                );
                            }
                        }
                    },
                )
            },
        )
    };
}

/// One 64 × 64 box of an MN-major stage tile at shared address `addr`.
///
/// # Safety
/// `addr` lies inside a stage's A or B tile, a multiple of `MN_BOX_BYTES`
/// from its (1024-byte aligned) start, with a whole box before the tile's end.
#[inline(always)]
unsafe fn mn_box(addr: u32) -> SharedRef<'static, Tile<u16, 64, 64>> {
    // SAFETY: forwarded to the caller.
    unsafe { SharedRef::from_addr(addr) }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<
    M: Bf16Mma<ACC>,
    const BN: usize,
    const BNH: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
    const LAYOUT: u32,
>(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    alpha: f32,
    beta: f32,
    fixup: StreamKFixup,
    sk_schedule: [u32; 4],
    (tma_a_tail, tail_rows): (*const TensorMap, u32),
    (batch, broadcast): (u32, u32),
) {
    // SAFETY: launched with size_of::<GemmSmem<BN, STAGES>>() of dynamic
    // shared memory (the kernel traps otherwise).
    let smem: SharedRef<'static, GemmSmem<BN, STAGES>> =
        unsafe { dynamic_smem::<GemmSmem<BN, STAGES>>() };
    let input = InputTilePipeline::<Payload<BN>, STAGES>::new(
        smem_field!(smem, GemmSmem<BN, STAGES>, input),
        c"gemm-mainloop",
    );
    let epi_bars = smem_field!(smem, GemmSmem<BN, STAGES>, epi_bars);
    let epi_tiles = smem_field!(smem, GemmSmem<BN, STAGES>, epi_tiles);
    let subtiles = (BN / SUB_COLS) as u32;
    let bn = BN as u32;
    let epi_for = |w: usize| EpiLoadPipeline::new(epi_bars.at(w), c"gemm-epi-load");
    // Every role walks the same schedule (data-parallel units, then this
    // worker's stream-K share): see `ClusterWork`. It is computed while the
    // barriers are initialized (`init_then_sync_scheduled`).
    let work = init_then_sync_scheduled::<CLUSTER_M, _>(
        #[inline(always)]
        || {
            // Fetch the tensor maps into the descriptor cache while the
            // barriers are set up (the first TMA of each would wait for it).
            // SAFETY: the maps are valid per the kernel contract (C only read
            // with beta ≠ 0).
            unsafe {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
                prefetch_tensormap(tma_d);
                if beta != 0.0 {
                    prefetch_tensormap(tma_c);
                }
                if tail_rows != 0 {
                    prefetch_tensormap(tma_a_tail);
                }
            }
            // Empty barriers: one arrival per consumer warpgroup of every CTA
            // whose TMA multicast writes into the stage (the whole cluster).
            input.init(GEMM_ROLES.consumer_warpgroups * CLUSTER_M);
            // Producer: one elected thread's arrive_expect_tx; consumer: one
            // arrival per warpgroup, once the D sub-tile written over the C
            // sub-tile has been read by its TMA store.
            epi_for(0).init_barriers(1, 1);
            epi_for(1).init_barriers(1, 1);
        },
        #[inline(always)]
        || {
            ClusterWork::<CLUSTER_M>::batched(
                batch,
                m.div_ceil(BM),
                n.div_ceil(bn),
                k.div_ceil(BK),
                group_m,
                sk_schedule,
            )
        },
    );
    let (sched, rank) = (work.sched, work.rank);
    let residual = beta != 0.0;
    // Rows of A per tile row: `TileRows::a_rows`. K past the end is still
    // zero-filled: it feeds every row.
    let rows = TileRows {
        tiles_m: m.div_ceil(BM),
        tail_rows,
        bm: BM,
    };
    let a_row_bytes = BK * 2;
    let b_bytes = bn * BK * 2;

    dispatch_roles!(GEMM_ROLES, c_load_active: residual,
        // TMA producer: A (its loaded rows) and B (or this CTA's multicast
        // half) per stage; the full barrier expects Payload::TMA_BYTES, or
        // a_rows rows of A plus B.
        producer => {
            bf16_producer!(input, work, rows, (tma_a, tma_a_tail, tma_b), (a_row_bytes, b_bytes), bn, rank, broadcast)
        },
        // C-load: C sub-tiles of the tiles this CTA finishes (beta ≠ 0).
        c_load => {
            let c_load = CLoad {
                pipes: [epi_for(0), epi_for(1)],
                tiles: epi_tiles,
                map_c: tma_c,
                work,
                batch_step: (broadcast & BROADCAST_C == 0) as u32,
                tile_m: BM,
                tile_n: bn,
                subtiles,
            };
            // SAFETY: C map per the kernel contract (read: beta ≠ 0). With
            // the distributed split-K fixup (BN ≤ 128): C of each
            // warpgroup's share of a split unit.
            unsafe {
                if distributed_split_k(ACC) {
                    c_load.run_distributed()
                } else {
                    c_load.run()
                }
            }
        },
        // Consumer warpgroup `wg`: main loop, stream-K fixup, epilogue.
        consumer(wg) => {
            // (usize, as the inline original: the same descriptor
            // arithmetic, and so the same main loop.)
            let wg = wg as usize;
            let tid = thread_idx_x() % 128;
            let signaller = tid == 0;
            let mut consumer: InputConsumer<'_, Payload<BN>, STAGES> = input.consumer();
            let mut c = LoadedC {
                pipe: epi_for(wg),
                beta,
            };
            // `zeroed` lowers to a memset that SROA splits into registers;
            // an array repeat expression lowers to a loop that keeps `acc`
            // in local memory.
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
            // This warpgroup's 64 rows of A (64 rows × 128 bytes further).
            let st0 = input.stage(0);
            // (M-major A: its box `wg`, 64 × 128 bytes further too.)
            let descs = StageDescriptors::with_layouts(
                smem_field!(st0, Stage<BN>, a).addr() + (wg * 64 * 128) as u32,
                smem_field!(st0, Stage<BN>, b).addr(),
                core::mem::size_of::<Stage<BN>>() as u32,
                LAYOUT & A_MN_MAJOR != 0,
                LAYOUT & B_MN_MAJOR != 0,
            );
            let mut d_next = 0u32;
            for seg in work.segments() {
                let (b, tm, tn) = work.batch_tile_of(seg.unit);
                bf16_mainloop::<M, _, ACC, STAGES, CLUSTER_M>(
                    &mut consumer,
                    descs,
                    seg.len(),
                    &mut acc,
                    signaller,
                );
                // Split-K (the unit's `splits` workers, one segment each,
                // all resident): every worker publishes its partial, then
                // reduces and stores its share of this warpgroup's
                // sub-tiles (`split_share`: the same worker-order sum as a
                // finalizer's, so the same bits), instead of one finalizer
                // reading every other worker's partial alone.
                // (BN ≤ 128 only, `distributed_split_k`: the constant folds.)
                if let Some((first, splits)) = sched.distributed_workers(seg.unit).filter(|_| distributed_split_k(ACC)) {
                    let position = work.worker - first;
                    let share = split_share(position, splits, subtiles, wg as u32);
                    // SAFETY: all 128 threads; this worker's one split
                    // segment; the host's split-K grids are resident.
                    unsafe {
                        fixup.reduce_split_share::<ACC>(
                            (first, splits, position),
                            (CLUSTER_M, rank, wg as u32),
                            tid,
                            1 + wg as u32,
                            share,
                            &mut acc,
                        )
                    };
                    let epilogue = StoreEpilogue {
                        bufs: epi_tiles.at(wg),
                        map_d: tma_d,
                        wg: wg as u32,
                        tid,
                    };
                    // SAFETY: D map per the kernel contract; the C-load
                    // role loads this share's C sub-tiles in this order
                    // (`CLoad::run_distributed`).
                    unsafe {
                        epilogue.store_range(&acc, alpha, &mut c, d_next, subtiles, share, #[inline(always)]
                        |j| {
                            (
                                (tn * bn) as i32 + (j as usize * SUB_COLS) as i32,
                                (tm * BM) as i32 + (wg * SUB_ROWS) as i32,
                                b as i32,
                            )
                        })
                    };
                    d_next += share.1 - share.0;
                    continue;
                }
                // Stream-K fixup: a contributor hands its partial to the
                // unit's finalizer and has no epilogue (`continue`); a
                // finalizer of a split unit adds the contributors' partials
                // first, waiting for all of them at once and loading
                // `fixup_batch(ACC)` partials at a time (the same sum in the
                // same order as taking them in turn: the same bits). The
                // batch is a const argument, so each count is spelled out;
                // the branch on the constant folds.
                if fixup_batch(ACC) == 4 {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC, 4);
                } else if fixup_batch(ACC) == 2 {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC, 2);
                } else {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC, 1);
                }
                // Epilogue: BN / 32 sub-tiles of 64 rows × 32 columns, D in
                // place over C (beta ≠ 0) or through the ring (`d_next`
                // counts sub-tiles).
                let epilogue = StoreEpilogue {
                    bufs: epi_tiles.at(wg),
                    map_d: tma_d,
                    wg: wg as u32,
                    tid,
                };
                // SAFETY: D map per the kernel contract; the C-load role
                // loads this tile's C sub-tiles in this order.
                unsafe {
                    epilogue.store(&acc, alpha, &mut c, d_next, subtiles, #[inline(always)]
                    |j| {
                        (
                            (tn * bn) as i32 + (j as usize * SUB_COLS) as i32,
                            (tm * BM) as i32 + (wg * SUB_ROWS) as i32,
                            b as i32,
                        )
                    })
                };
                d_next += subtiles;
            }
            if signaller {
                trace::stamp_consumer0(Event::LastStoreIssued, false);
                store_wait_group::<0>();
                trace::stamp_consumer0(Event::Exit, false);
            }
        },
    );
    // No final cluster barrier: every access a peer makes to this CTA's
    // shared memory is accounted for by this CTA's own waits — the peer's
    // multicast loads complete on our `full` barriers, which our consumers
    // wait for, and the peer consumers' releases arrive on our `empty`
    // barriers, which our producer's `drain` waits for — and the drain keeps
    // the CTA alive until then. (Idle warps parked in a cluster barrier for
    // the whole kernel cost half the throughput: measured.)
}

/// The tall cooperative schedule ([`TALL_BM`] = 256 rows per CTA tile):
/// the producer, the schedule and the input ring are the cooperative
/// kernels' with 256-row A tiles, and both consumer warpgroups consume
/// every stage (empty count: one arrival per warpgroup of every CTA of the
/// cluster), warpgroup `wg` computing rows `wg · 128..wg · 128 + 128` of
/// the tile in two accumulators (rows `+0..64` and `+64..128`, the
/// ping-pong main loop's `top` and `bottom`, without turns). Its epilogue
/// stores the two halves through its own ring, as a ping-pong
/// warpgroup's; with beta ≠ 0 the C-load role fills that ring in the same
/// order (`CLoad::run_tall`). No stream-K: every segment is a whole unit.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_tall<
    M: Bf16Mma<ACC>,
    const BN: usize,
    const BNH: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
>(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    (alpha, beta): (f32, f32),
    (tma_a_tail, tail_rows): (*const TensorMap, u32),
    (batch, broadcast): (u32, u32),
) {
    const ROWS: usize = TALL_BM as usize;
    // (The layout code the producer macro reads: K-major operands only.)
    const LAYOUT: u32 = K_MAJOR;
    // SAFETY: launched with size_of::<GemmSmem<BN, STAGES, ROWS>>() of
    // dynamic shared memory (the kernel traps otherwise).
    let smem: SharedRef<'static, GemmSmem<BN, STAGES, ROWS>> =
        unsafe { dynamic_smem::<GemmSmem<BN, STAGES, ROWS>>() };
    let input = InputTilePipeline::<Payload<BN, ROWS>, STAGES>::new(
        smem_field!(smem, GemmSmem<BN, STAGES, ROWS>, input),
        c"gemm-mainloop",
    );
    let epi_bars = smem_field!(smem, GemmSmem<BN, STAGES, ROWS>, epi_bars);
    let epi_tiles = smem_field!(smem, GemmSmem<BN, STAGES, ROWS>, epi_tiles);
    let subtiles = (BN / SUB_COLS) as u32;
    let bn = BN as u32;
    let epi_for = |w: usize| EpiLoadPipeline::new(epi_bars.at(w), c"gemm-epi-load");
    init_then_sync::<CLUSTER_M>(
        #[inline(always)]
        || {
            // SAFETY: the maps are valid per the kernel contract (C only
            // read with beta ≠ 0).
            unsafe {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
                prefetch_tensormap(tma_d);
                if beta != 0.0 {
                    prefetch_tensormap(tma_c);
                }
                if tail_rows != 0 {
                    prefetch_tensormap(tma_a_tail);
                }
            }
            // Empty barriers: one arrival per consumer warpgroup of every
            // CTA whose TMA multicast writes into the stage.
            input.init(GEMM_ROLES.consumer_warpgroups * CLUSTER_M);
            // C stages, per warpgroup: producer one arrive_expect_tx,
            // consumer one arrival once the store has read the stage.
            epi_for(0).init_barriers(1, 1);
            epi_for(1).init_barriers(1, 1);
        },
    );

    // Stream-K off: every segment is a whole unit.
    let work = ClusterWork::<CLUSTER_M>::batched(
        batch,
        m.div_ceil(TALL_BM),
        n.div_ceil(bn),
        k.div_ceil(BK),
        group_m,
        [0; 4],
    );
    let rank = work.rank;
    let rows = TileRows {
        tiles_m: m.div_ceil(TALL_BM),
        tail_rows,
        bm: TALL_BM,
    };
    let a_row_bytes = BK * 2;
    let b_bytes = bn * BK * 2;
    let residual = beta != 0.0;

    dispatch_roles!(GEMM_ROLES, c_load_active: residual,
        // TMA producer: 256 rows of A (its loaded rows) and B (or this
        // CTA's multicast half) per stage.
        producer => {
            bf16_producer!(input, work, rows, (tma_a, tma_a_tail, tma_b), (a_row_bytes, b_bytes), bn, rank, broadcast, TALL_BM, Stage<BN, ROWS>)
        },
        // C-load: each tile's C sub-tiles, warpgroup w's rows
        // w·128 + 0..64 then + 64..128, into its pipeline.
        c_load => {
            let c_load = CLoad {
                pipes: [epi_for(0), epi_for(1)],
                tiles: epi_tiles,
                map_c: tma_c,
                work,
                batch_step: (broadcast & BROADCAST_C == 0) as u32,
                tile_m: TALL_BM,
                tile_n: bn,
                subtiles,
            };
            // SAFETY: C map per the kernel contract (read: beta ≠ 0).
            unsafe { c_load.run_tall() }
        },
        // Consumer warpgroup `wg`: rows wg·128..wg·128 + 128 of every tile.
        consumer(wg) => {
            let tid = thread_idx_x() % 128;
            let signaller = tid == 0;
            let mut consumer: InputConsumer<'_, Payload<BN, ROWS>, STAGES> = input.consumer();
            let mut c = LoadedC {
                pipe: epi_for(wg as usize),
                beta,
            };
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut top: [f32; ACC] = unsafe { core::mem::zeroed() };
            // SAFETY: as above.
            let mut bottom: [f32; ACC] = unsafe { core::mem::zeroed() };
            let st0 = input.stage(0);
            // This warpgroup's 128 rows of A: 128 rows × 128 bytes further
            // per warpgroup, the bottom half 64 rows further still (both
            // multiples of the 1024-byte swizzle atom).
            let a0 = smem_field!(st0, Stage<BN, ROWS>, a).addr() + wg * 128 * 128;
            let b0 = smem_field!(st0, Stage<BN, ROWS>, b).addr();
            let stage_bytes = core::mem::size_of::<Stage<BN, ROWS>>() as u32;
            let top_descs = StageDescriptors::new(a0, b0, stage_bytes);
            let bottom_descs = StageDescriptors::new(a0 + 64 * 128, b0, stage_bytes);
            let mut d_next = 0u32;
            for seg in work.segments() {
                let (b, tm, tn) = work.batch_tile_of(seg.unit);
                let pending = bf16_pingpong_mainloop::<M, _, ACC, STAGES, CLUSTER_M>(
                    &mut consumer,
                    top_descs,
                    bottom_descs,
                    seg.len(),
                    &mut top,
                    &mut bottom,
                    signaller,
                );
                finish_pingpong_mainloop::<CLUSTER_M>(pending, signaller);
                let epilogue = StoreEpilogue {
                    bufs: epi_tiles.at(wg as usize),
                    map_d: tma_d,
                    wg,
                    tid,
                };
                let col0 = (tn * bn) as i32;
                let row0 = (tm * TALL_BM + wg * 128) as i32;
                // SAFETY: D map per the kernel contract; the C-load role
                // loads this warpgroup's C sub-tiles (top half, then
                // bottom) in this order.
                unsafe {
                    epilogue.store(&top, alpha, &mut c, d_next, subtiles, #[inline(always)]
                    |j| (col0 + (j as usize * SUB_COLS) as i32, row0, b as i32));
                    epilogue.store(&bottom, alpha, &mut c, d_next + subtiles, subtiles, #[inline(always)]
                    |j| (col0 + (j as usize * SUB_COLS) as i32, row0 + SUB_ROWS as i32, b as i32));
                }
                d_next += 2 * subtiles;
            }
            if signaller {
                trace::stamp_consumer0(Event::LastStoreIssued, false);
                store_wait_group::<0>();
                trace::stamp_consumer0(Event::Exit, false);
            }
        },
    );
}

/// The ping-pong schedule (CUTLASS's `KernelTmaWarpSpecializedPingpong`):
/// the producer walks the same `ClusterWork` as the cooperative kernels,
/// but the CTA's work units alternate between the two consumer warpgroups
/// (segment `i` to warpgroup `i mod 2`), each owning the whole 128 × BN
/// tile (rows 0..64 and 64..128 in two accumulators). The warpgroups take
/// turns through an `OrderedBarrier<2, 2>`: turn 0 is the main loop (from
/// the first stage wait until its last MMAs are issued), turn 1 the
/// epilogue (TMA stores of D through the warpgroup's own ring of 4
/// sub-tile buffers; with beta ≠ 0 they are the stages of its
/// `EpiLoadPipeline`, which the C-load warp fills tile by tile:
/// `CLoad::run_pingpong`). So warpgroup 1's main loop runs while
/// warpgroup 0 stores, and vice versa. Each input stage has one consuming warpgroup
/// (empty count: one arrival per CTA of the cluster); a warpgroup skips
/// the other's K blocks (`InputConsumer::skip`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_pingpong<
    M: Bf16Mma<ACC>,
    const BN: usize,
    const BNH: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
    const LAYOUT: u32,
>(
    tma_a: *const TensorMap,
    tma_b: *const TensorMap,
    tma_c: *const TensorMap,
    tma_d: *const TensorMap,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    (alpha, beta): (f32, f32),
    (tma_a_tail, tail_rows): (*const TensorMap, u32),
    (batch, broadcast): (u32, u32),
) {
    // SAFETY: launched with size_of::<PingPongSmem<BN, STAGES>>() of
    // dynamic shared memory (the kernel traps otherwise).
    let smem: SharedRef<'static, PingPongSmem<BN, STAGES>> =
        unsafe { dynamic_smem::<PingPongSmem<BN, STAGES>>() };
    let gemm_smem = smem_field!(smem, PingPongSmem<BN, STAGES>, gemm);
    let order_bars = smem_field!(smem, PingPongSmem<BN, STAGES>, order);
    let input = InputTilePipeline::<Payload<BN>, STAGES>::new(
        smem_field!(gemm_smem, GemmSmem<BN, STAGES>, input),
        c"gemm-mainloop",
    );
    let epi_tiles = smem_field!(gemm_smem, GemmSmem<BN, STAGES>, epi_tiles);
    let epi_bars = smem_field!(gemm_smem, GemmSmem<BN, STAGES>, epi_bars);
    let epi_for = |w: usize| EpiLoadPipeline::new(epi_bars.at(w), c"gemm-epi-load");
    let subtiles = (BN / SUB_COLS) as u32;
    let bn = BN as u32;
    init_then_sync::<CLUSTER_M>(
        #[inline(always)]
        || {
            // SAFETY: the maps are valid per the kernel contract (C only
            // read with beta ≠ 0).
            unsafe {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
                prefetch_tensormap(tma_d);
                if beta != 0.0 {
                    prefetch_tensormap(tma_c);
                }
                if tail_rows != 0 {
                    prefetch_tensormap(tma_a_tail);
                }
            }
            // Empty barriers: one consuming warpgroup per stage, in every
            // CTA whose multicast writes into it (the whole cluster).
            input.init(CLUSTER_M);
            // Turns: every thread of the warpgroup arrives (128).
            OrderedBarrier::<PINGPONG_TURNS, PINGPONG_GROUPS>::new(
                order_bars,
                0,
                c"gemm-pingpong-order",
            )
            .init(128);
            // C stages, per warpgroup: producer one arrive_expect_tx,
            // consumer one arrival once the store has read the stage.
            epi_for(0).init_barriers(1, 1);
            epi_for(1).init_barriers(1, 1);
        },
    );

    // Stream-K off: every segment is a whole unit.
    let work = ClusterWork::<CLUSTER_M>::batched(
        batch,
        m.div_ceil(BM),
        n.div_ceil(bn),
        k.div_ceil(BK),
        group_m,
        [0; 4],
    );
    let rank = work.rank;
    let rows = TileRows {
        tiles_m: m.div_ceil(BM),
        tail_rows,
        bm: BM,
    };
    let a_row_bytes = BK * 2;
    let b_bytes = bn * BK * 2;

    let residual = beta != 0.0;
    dispatch_roles!(GEMM_ROLES, c_load_active: residual,
        producer => {
            bf16_producer!(input, work, rows, (tma_a, tma_a_tail, tma_b), (a_row_bytes, b_bytes), bn, rank, broadcast)
        },
        // C-load: each tile's C sub-tiles into its warpgroup's pipeline.
        c_load => {
            let c_load = CLoad {
                pipes: [epi_for(0), epi_for(1)],
                tiles: epi_tiles,
                map_c: tma_c,
                work,
                batch_step: (broadcast & BROADCAST_C == 0) as u32,
                tile_m: BM,
                tile_n: bn,
                subtiles,
            };
            // SAFETY: C map per the kernel contract (read: beta ≠ 0).
            unsafe { c_load.run_pingpong() }
        },
        // Consumer warpgroup `wg`: the units `wg, wg + 2, …` of this CTA.
        consumer(wg) => {
            let tid = thread_idx_x() % 128;
            let signaller = tid == 0;
            let mut consumer: InputConsumer<'_, Payload<BN>, STAGES> = input.consumer();
            let mut c = LoadedC {
                pipe: epi_for(wg as usize),
                beta,
            };
            let mut order = OrderedBarrier::<PINGPONG_TURNS, PINGPONG_GROUPS>::new(
                order_bars,
                wg,
                c"gemm-pingpong-order",
            );
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut top: [f32; ACC] = unsafe { core::mem::zeroed() };
            // SAFETY: as above.
            let mut bottom: [f32; ACC] = unsafe { core::mem::zeroed() };
            let st0 = input.stage(0);
            let a0 = smem_field!(st0, Stage<BN>, a).addr();
            let b0 = smem_field!(st0, Stage<BN>, b).addr();
            let stage_bytes = core::mem::size_of::<Stage<BN>>() as u32;
            // (K-major only: the ping-pong entries have no MN-major twins.)
            const { assert!(LAYOUT == K_MAJOR) };
            let top_descs = StageDescriptors::new(a0, b0, stage_bytes);
            // Rows 64..128 of A: 64 rows × 128 bytes further.
            let bottom_descs = StageDescriptors::new(a0 + 64 * 128, b0, stage_bytes);
            let mut d_next = 0u32;
            let mut mine = wg == 0;
            for seg in work.segments() {
                if !mine {
                    // The other warpgroup's tile: skip its stages.
                    consumer.skip(seg.len());
                    mine = true;
                    continue;
                }
                mine = false;
                let (b, tm, tn) = work.batch_tile_of(seg.unit);
                // Turn 0: the tensor cores, until the last MMAs are issued.
                order.wait();
                let pending = bf16_pingpong_mainloop::<M, _, ACC, STAGES, CLUSTER_M>(
                    &mut consumer,
                    top_descs,
                    bottom_descs,
                    seg.len(),
                    &mut top,
                    &mut bottom,
                    signaller,
                );
                order.arrive();
                finish_pingpong_mainloop::<CLUSTER_M>(pending, signaller);
                // Turn 1: the epilogue, rows 0..64 then 64..128 through
                // this warpgroup's D ring (or in place over its C stages).
                order.wait();
                let epilogue = StoreEpilogue {
                    bufs: epi_tiles.at(wg as usize),
                    map_d: tma_d,
                    wg,
                    tid,
                };
                let col0 = (tn * bn) as i32;
                let row0 = (tm * BM) as i32;
                // SAFETY: D map per the kernel contract; the C-load role
                // loads this tile's C sub-tiles (top half, then bottom) in
                // this order.
                unsafe {
                    epilogue.store(&top, alpha, &mut c, d_next, subtiles, #[inline(always)]
                    |j| (col0 + (j as usize * SUB_COLS) as i32, row0, b as i32));
                    epilogue.store(&bottom, alpha, &mut c, d_next + subtiles, subtiles, #[inline(always)]
                    |j| (col0 + (j as usize * SUB_COLS) as i32, row0 + SUB_ROWS as i32, b as i32));
                }
                order.arrive();
                d_next += 2 * subtiles;
            }
            if signaller {
                trace::stamp_consumer0(Event::LastStoreIssued, false);
                store_wait_group::<0>();
                trace::stamp_consumer0(Event::Exit, false);
            }
        },
    );
}
