//! Hopper BF16 GEMM for small M (swap-AB): `D = alpha·A·Bᵀ` with M ≤ 64
//! wastes most of a 64-row `wgmma` when A's rows are the MMA's M. Both
//! operands are K-major, so these kernels compute `Dᵀ = B·Aᵀ` instead: the
//! user's B (N×K) is the tile's 128 rows (two consumer warpgroups of
//! `wgmma` M = 64) and the user's A (M×K) the tile's `BN` columns (the
//! `wgmma` N: 16, 32 or 64). Everything up to the epilogue is the
//! cooperative kernel of `gemm_bf16` with the operands swapped: the same
//! persistent schedule (`ClusterWork`; clusters only in the `_c2` entries), TMA producer (ragged
//! last tile row of B through the tail map), `bf16_mainloop` and stream-K /
//! split-K fixup (its finalizer waits for all contributors at once:
//! `stream_k_fixup_overlapped!`). The epilogue ([`TransposedEpilogue`])
//! writes each warpgroup's `64 × BN` accumulators transposed into shared memory and
//! TMA-stores them into the user's row-major D. beta = 0 only (no C).
//!
//! The narrow entries (`baton_gemm_bf16_swap_ab_narrow_*`) run the same
//! body on tiles of 64 of the user's N with one consumer warpgroup
//! ([`SWAP_AB_NARROW_ROLES`], 256 threads): twice the CTAs on one problem.
//! Their `_c2` forms run in clusters of 2 CTAs along the user's N that share
//! the user's A by TMA multicast (each loads half of its rows into both
//! CTAs' stages; every stage's empty barrier then counts both CTAs'
//! consumers). Measured slower than the plain narrow tiles at 5 of 6 rows
//! (BENCHMARKS.md "Session 32"); forced only.
//!
//! Parameters: [`GemmBf16Params`] with the operands swapped
//! (`baton_kernels_abi::gemm_bf16_swap_ab::GEMM_SWAP_AB_16` documents
//! them): `m` is the user's N, `n` the user's M.

use baton::arch::ptx::tma::{TensorMap, load_2d, prefetch_tensormap};
use baton::arch::ptx::{dynamic_smem, thread_idx_x};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{InputConsumer, InputTilePipeline};
use baton_kernel_roles::dispatch_roles;
use baton_kernel_roles::sm90::dispatch::{GEMM_ROLES, RoleTable, init_then_sync_scheduled};
use baton_kernel_roles::sm90::epilogue_transposed::{TRANSPOSED_SUB_COLS, TransposedEpilogue};
use baton_kernel_roles::sm90::mainloop_bf16::{
    Bf16Mma, Bf16N16, Bf16N32, Bf16N64, Bf16N128, bf16_mainloop,
};
use baton_kernel_roles::sm90::producer::{TmaProducer, load_b_tile};
use baton_kernel_roles::sm90::schedule::{ClusterWork, TileRows};
use baton_kernel_roles::sm90::stage_descriptors::StageDescriptors;
use baton_kernel_roles::sm90::stream_k::StreamKFixup;
use baton_kernel_roles::stream_k_fixup_overlapped;
use baton_kernel_roles::trace::{self, Event};
use baton_kernels_abi::gemm_bf16::{
    BK, BM, EPI_STAGES as EPI_RING, GemmSmem, Payload, Stage, fixup_batch,
};
use baton_kernels_abi::gemm_bf16_swap_ab::{
    self as abi, NARROW_ROWS, swap_ab_narrow_stages, swap_ab_stages,
};
use core::mem::size_of;

use baton_kernels_abi::gemm_params::{GemmBf16Params, StreamKParams};

/// The role table of the narrow swap-AB entries: the producer warpgroup and
/// one consumer warpgroup (256 threads); its empty barriers take one
/// arrival per stage.
///
/// ```ignore
/// assert_eq!(SWAP_AB_NARROW_ROLES.threads(), 256);
/// ```
pub const SWAP_AB_NARROW_ROLES: RoleTable = GEMM_ROLES.with_consumer_warpgroups(1);

macro_rules! swap_ab_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $acc:literal, $mma:ty, $rows:expr, $stages:expr, $roles:expr) => {
        swap_ab_entry!($(#[$doc])* $spec, $name, $bn, $acc, $mma, $rows, $stages, $roles, 1, $bn);
    };
    ($(#[$doc:meta])* $spec:path, $name:ident, $bn:literal, $acc:literal, $mma:ty, $rows:expr, $stages:expr, $roles:expr, $cluster:literal, $bnh:literal) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            ///
            /// Launch: grid = min(tiles, SMs) CTAs of the spec's threads (with
            /// split-K / stream-K: every worker), with `size_of` the
            /// configuration's `GemmSmem` as dynamic shared memory.
            ///
            /// # Safety
            /// The tensor maps (by value in the parameters, 64-byte
            /// aligned) are as the spec documents (the user's B as
            /// `tma_a` / `tma_a_tail`, the user's A as `tma_b` with a box
            /// of `min(n, BN)` rows, the user's D as `tma_d` with a box of
            /// {32, `min(n, BN)`}); `beta == 0`; `group_m ≥ 1`; the
            /// stream-K workspace as the cooperative kernels'.
            pub fn $name(p: GemmBf16Params) {
                let GemmBf16Params { m, n, k, group_m, alpha, stream_k: StreamKParams { partials, flags, epoch, schedule }, tail_rows, .. } = p;
                let params = baton::entry_param_address!($name);
                let map = |offset: usize| params.wrapping_add(offset) as *const TensorMap;
                let maps = (
                    map(core::mem::offset_of!(GemmBf16Params, tma_a)),
                    map(core::mem::offset_of!(GemmBf16Params, tma_b)),
                    map(core::mem::offset_of!(GemmBf16Params, tma_d)),
                    map(core::mem::offset_of!(GemmBf16Params, tma_a_tail)),
                );
                const { assert!($spec.dynamic_smem_bytes as usize == size_of::<GemmSmem<$bn, { $stages }, { $rows }>>(), "the spec's shared memory is not this entry's layout") };
                const { assert!($spec.threads == $roles.threads() && $rows == 64 * $roles.consumer_warpgroups as usize, "the spec's threads or the tile's rows are not this entry's roles") };
                const { assert!($spec.cluster[0] == $cluster && $bnh * $cluster == $bn, "the spec's cluster is not this entry's A multicast") };
                // SAFETY: forwarded to the kernel's contract.
                let fixup = unsafe { StreamKFixup::<{ $roles.consumer_warpgroups }>::new(partials, flags, epoch) };
                // SAFETY: forwarded to the kernel's contract.
                unsafe { gemm_swap_ab::<$mma, $bn, $bnh, $acc, { $stages }, { $rows }, { $roles.consumer_warpgroups }, $cluster>($roles, maps, (m, n, k), group_m, alpha, fixup, schedule, tail_rows) }
            }
        }
    };
}

swap_ab_entry!(
    /// BF16 GEMM for M ≤ 16 (swap-AB): tiles of 128 of the user's N × 16
    /// of its M × 64 K, `wgmma.m64n16k16`.
    abi::GEMM_SWAP_AB_16,
    baton_gemm_bf16_swap_ab_16, 16, 8, Bf16N16, BM as usize, swap_ab_stages(16), GEMM_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM for M ≤ 32 (swap-AB): tiles of 128 of N × 32 of M,
    /// `wgmma.m64n32k16`.
    abi::GEMM_SWAP_AB_32,
    baton_gemm_bf16_swap_ab_32, 32, 16, Bf16N32, BM as usize, swap_ab_stages(32), GEMM_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM for M ≤ 64 (swap-AB): tiles of 128 of N × 64 of M,
    /// `wgmma.m64n64k16`.
    abi::GEMM_SWAP_AB_64,
    baton_gemm_bf16_swap_ab_64, 64, 32, Bf16N64, BM as usize, swap_ab_stages(64), GEMM_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM for M ≤ 16 (narrow swap-AB): tiles of 64 of the user's N
    /// × 16 of its M × 64 K on one consumer warpgroup, `wgmma.m64n16k16`.
    abi::GEMM_SWAP_AB_NARROW_16,
    baton_gemm_bf16_swap_ab_narrow_16, 16, 8, Bf16N16, NARROW_ROWS as usize, swap_ab_narrow_stages(16), SWAP_AB_NARROW_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM for M ≤ 32 (narrow swap-AB): tiles of 64 of N × 32 of M,
    /// `wgmma.m64n32k16`.
    abi::GEMM_SWAP_AB_NARROW_32,
    baton_gemm_bf16_swap_ab_narrow_32, 32, 16, Bf16N32, NARROW_ROWS as usize, swap_ab_narrow_stages(32), SWAP_AB_NARROW_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM for M ≤ 64 (narrow swap-AB): tiles of 64 of N × 64 of M,
    /// `wgmma.m64n64k16`.
    abi::GEMM_SWAP_AB_NARROW_64,
    baton_gemm_bf16_swap_ab_narrow_64, 64, 32, Bf16N64, NARROW_ROWS as usize, swap_ab_narrow_stages(64), SWAP_AB_NARROW_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM, narrow swap-AB with 128 of the user's M per tile: tiles
    /// of 64 of N × 128 of M on one consumer warpgroup, `wgmma.m64n128k16`
    /// (a 128 × 64 tile of D whose MMAs read 6 KiB of shared memory per
    /// 262 kFLOP, where two warpgroups of `m64n64k16` read 8).
    abi::GEMM_SWAP_AB_NARROW_128,
    baton_gemm_bf16_swap_ab_narrow_128, 128, 64, Bf16N128, NARROW_ROWS as usize, swap_ab_narrow_stages(128), SWAP_AB_NARROW_ROLES
);
swap_ab_entry!(
    /// BF16 GEMM, narrow swap-AB 64 of N × 64 of M per tile in clusters of
    /// 2 CTAs along N that share the user's A tile by TMA multicast (each
    /// loads 32 of its rows into both CTAs' stages).
    abi::GEMM_SWAP_AB_NARROW_64_C2,
    baton_gemm_bf16_swap_ab_narrow_64_c2, 64, 32, Bf16N64, NARROW_ROWS as usize, swap_ab_narrow_stages(64), SWAP_AB_NARROW_ROLES, 2, 32
);
swap_ab_entry!(
    /// BF16 GEMM, narrow swap-AB 64 of N × 128 of M per tile in clusters of
    /// 2 sharing the user's A tile (64 rows each).
    abi::GEMM_SWAP_AB_NARROW_128_C2,
    baton_gemm_bf16_swap_ab_narrow_128_c2, 128, 64, Bf16N128, NARROW_ROWS as usize, swap_ab_narrow_stages(128), SWAP_AB_NARROW_ROLES, 2, 64
);

/// The swap-AB kernel body; in the kernel's own terms (the user's
/// operands swapped): A is `m × k` (the user's B), B is `n × k` (the
/// user's A), the output `Dᵀ` is `m × n`. Tiles of `ROWS` (128 or 64) rows,
/// 64 per consumer warpgroup of `roles`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_swap_ab<
    M: Bf16Mma<ACC>,
    const BN: usize,
    const BNH: usize,
    const ACC: usize,
    const STAGES: usize,
    const ROWS: usize,
    const WGS: u32,
    const CLUSTER: u32,
>(
    roles: RoleTable,
    (tma_a, tma_b, tma_d, tma_a_tail): (
        *const TensorMap,
        *const TensorMap,
        *const TensorMap,
        *const TensorMap,
    ),
    (m, n, k): (u32, u32, u32),
    group_m: u32,
    alpha: f32,
    fixup: StreamKFixup<WGS>,
    sk_schedule: [u32; 4],
    tail_rows: u32,
) {
    // SAFETY: launched with size_of::<GemmSmem<BN, STAGES, ROWS>>() of
    // dynamic shared memory (the kernel traps otherwise).
    let smem: SharedRef<'static, GemmSmem<BN, STAGES, ROWS>> =
        unsafe { dynamic_smem::<GemmSmem<BN, STAGES, ROWS>>() };
    let input = InputTilePipeline::<Payload<BN, ROWS>, STAGES>::new(
        smem_field!(smem, GemmSmem<BN, STAGES, ROWS>, input),
        c"gemm-swap-ab-mainloop",
    );
    let epi_tiles = smem_field!(smem, GemmSmem<BN, STAGES, ROWS>, epi_tiles);
    let bn = BN as u32;
    let rows_per_tile = ROWS as u32;
    // The schedule is computed while the barriers are initialized
    // (`init_then_sync_scheduled`).
    let work = init_then_sync_scheduled::<CLUSTER, _>(
        #[inline(always)]
        || {
            // SAFETY: the maps are valid per the kernel contract.
            unsafe {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
                prefetch_tensormap(tma_d);
                if tail_rows != 0 {
                    prefetch_tensormap(tma_a_tail);
                }
            }
            // Empty barriers: one arrival per consumer warpgroup of every
            // CTA whose TMA multicast writes into the stage (the cluster).
            input.init(roles.consumer_warpgroups * CLUSTER);
        },
        #[inline(always)]
        || {
            ClusterWork::<CLUSTER>::new(
                m.div_ceil(rows_per_tile),
                n.div_ceil(bn),
                k.div_ceil(BK),
                group_m,
                sk_schedule,
            )
        },
    );
    let (sched, rank) = (work.sched, work.rank);
    let rows = TileRows {
        tiles_m: m.div_ceil(rows_per_tile),
        tail_rows,
        bm: rows_per_tile,
    };
    let a_row_bytes = BK * 2;
    // B's box has min(n, BN) rows (no zero fill when the user's M < BN):
    // every stage's B bytes. In clusters each CTA loads BN / CLUSTER rows
    // into every CTA's stage (rows past the user's M zero-filled): BN rows
    // arrive.
    let b_bytes = if n < bn && CLUSTER == 1 { n } else { bn } * BK * 2;

    dispatch_roles!(roles, c_load_active: false,
        // TMA producer: A (its loaded rows) and B per stage; the full
        // barrier expects exactly the bytes loaded.
        producer => {
            TmaProducer {
                input,
                work,
                rows,
            }
            .run_exact_bytes(
                #[inline(always)]
                |t| {
                    let map_a = if t.a_rows == rows_per_tile { tma_a } else { tma_a_tail };
                    (
                        t.a_rows * a_row_bytes + b_bytes,
                        #[inline(always)]
                        move |tiles, bar, kb| {
                            let kc = (kb * BK) as i32;
                            // SAFETY: maps per the kernel contract; the stage
                            // is ours and its full barrier expects these bytes.
                            unsafe {
                                if t.a_rows != 0 {
                                    load_2d(map_a, smem_field!(tiles, Stage<BN, ROWS>, a), bar, kc, (t.tm * rows_per_tile) as i32);
                                }
                                load_b_tile::<u16, BN, BNH, { BK as usize }, CLUSTER>(tma_b, smem_field!(tiles, Stage<BN, ROWS>, b), bar, kc, t.tn * bn, rank);
                            }
                        },
                    )
                },
            )
        },
        c_load => {},
        // Consumer warpgroup `wg`: main loop, stream-K fixup, transposed
        // epilogue.
        consumer(wg) => {
            let wg = wg as usize;
            let tid = thread_idx_x() % 128;
            let signaller = tid == 0;
            let mut consumer: InputConsumer<'_, Payload<BN, ROWS>, STAGES> = input.consumer();
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
            // This warpgroup's 64 rows of A (64 rows × 128 bytes further).
            let st0 = input.stage(0);
            let descs = StageDescriptors::new(
                smem_field!(st0, Stage<BN, ROWS>, a).addr() + (wg * 64 * 128) as u32,
                smem_field!(st0, Stage<BN, ROWS>, b).addr(),
                size_of::<Stage<BN, ROWS>>() as u32,
            );
            let mut d_next = 0u32;
            for seg in work.segments() {
                let (tm, tn) = work.tile_of(seg.unit);
                bf16_mainloop::<M, _, ACC, STAGES, CLUSTER>(&mut consumer, descs, seg.len(), &mut acc, signaller);
                // Partials 4 contributors at a time, 2 for 64 accumulators
                // (`fixup_batch`: 4 × 64 floats would spill).
                if fixup_batch(ACC) == 4 {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER, rank, wg as u32, tid, acc, ACC, 4);
                } else {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER, rank, wg as u32, tid, acc, ACC, 2);
                }
                let epilogue = TransposedEpilogue {
                    bufs: epi_tiles.at(wg),
                    map_d: tma_d,
                    wg: wg as u32,
                    tid,
                };
                // The user's D: columns tm·ROWS + 64·wg + 32·J (kernel
                // rows), rows tn·BN (kernel columns).
                let col0 = (tm * rows_per_tile) as i32 + (wg * 64) as i32;
                let row0 = (tn * bn) as i32;
                // SAFETY: D map per the kernel contract.
                unsafe {
                    epilogue.store(&acc, alpha, d_next, #[inline(always)] |j| (col0 + (j * TRANSPOSED_SUB_COLS) as i32, row0))
                };
                d_next += 2 * TransposedEpilogue::<EPI_RING>::halves::<ACC>();
            }
            if signaller {
                trace::stamp_consumer0(Event::LastStoreIssued, false);
            }
            // Both warp pairs' signallers wait for their stores.
            TransposedEpilogue { bufs: epi_tiles.at(wg), map_d: tma_d, wg: wg as u32, tid }.drain();
            if signaller {
                trace::stamp_consumer0(Event::Exit, false);
            }
        },
    );
}
