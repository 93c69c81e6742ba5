//! Hopper blockwise-scaled FP8 GEMM (DeepSeek-V3 style):
//! `D = (A ⊙ Sa) · (B ⊙ Sb)ᵀ`, persistent and warp-specialized.
//!
//! * A: M×K e4m3 row-major (K-major); B: N×K e4m3 (K-major); D: M×N bf16
//!   row-major; fp32 accumulation.
//! * Scales (f32): `Sa` is `[K/128, M]` (M contiguous, one scale per row of A
//!   and 128-wide K block); `Sb` is `[⌈N/128⌉, K/128]` (one scale per 128×128
//!   block of B).
//! * CTA tile BM×BN×128 (128 fp8 = 128 bytes of K per row: exactly one
//!   128-byte swizzle atom): 128×128 with 6 stages, 128×64 with 8 and
//!   128×32 with 10 stages (2 and 4 times the CTAs, for small M; BN divides
//!   128, so a tile has one B scale per K block), 128×96 with 6 stages and 128×192
//!   with 5 (a tile may straddle two B-scale blocks), or 256×128, 256×96
//!   and 256×88 with 4 stages (each consumer warpgroup computes two 64-row
//!   waves, see below; the fastest per FLOP; 256×88 stores each wave's
//!   last 24 columns from registers, `sm90::tail_columns`),
//!   of `InputTilePipeline<BlockwiseFP8TilePayload<BM, BN, 128>>`, 384
//!   threads:
//!   - warpgroup 0 (registers released to 40): warp 0's elected lane is the
//!     producer. Per stage it TMA-loads A (128×128 bytes), B (BN×128 bytes)
//!     and the stage's A scales onto one `full` barrier whose expect-tx
//!     count is the payload's `TMA_BYTES`. The A scales (`[K/128][ld]`, any
//!     `ld ≥ M`: PyTorch's M-major layout with M not a multiple of 4 too)
//!     are read in place as one vector, through a one-row map over its
//!     `(K/128 − 1)·ld + M` floats (no row stride, so no 16-byte stride
//!     rule; only the base must be 16-byte aligned, else the host copies):
//!     per 128-row box a load of 132 floats from the 16-byte granule that
//!     holds the box's first scale (a box must start on one), into
//!     `a_scales` at 160 floats per box (`BlockwiseFP8PaddedTilePayload`,
//!     `fp8_a_scales::load_a_scales`); the consumers read row r at
//!     `off + r`, `off = (kb·ld) mod 4`. The floats a box carries past its
//!     rows (padding between K blocks, the next block's scales, the zero
//!     fill past the vector) reach only rows past M. The ragged last
//!     tile row loads only its `M mod BM` rows of A and scales (tail maps,
//!     `arrive_expect_tx_bytes`): TMA's zero fill of a full box is as slow
//!     as a load. Its other rows keep stale stage data and land in D rows
//!     the store clips.
//!   - warpgroups 1 and 2 (232 registers): MMA + promotion, 64×BN each.
//!     Per stage: read this thread's two A-row scales from the stage and the
//!     tile's B scale from global memory, issue 4 ×
//!     `wgmma.m64n128k32.f32.e4m3.e4m3` into a fresh **partial** accumulator
//!     (scale-d = 0 on the first); once they retired, release the stage (one
//!     arrival per warpgroup) and promote with one FMA per register:
//!     `main += partial × (a_scale[row] × b_scale[n-block, k-block])` in
//!     fp32. Promotion every 128 of K is what keeps the error of the tensor
//!     core's limited-precision FP8 accumulation bounded.
//!     - `_db` (the default): two partials alternate, so K block kb + 1's
//!       MMAs are in flight (`wait_group<1>`) while kb's partial is promoted
//!       (3 × BN/2 accumulator registers per thread); the K loop is unrolled
//!       over the ring, one copy per stage with its barrier, A scales and
//!       descriptors at constant offsets (`rotated_double_mainloop`);
//!     - plain (128×128 only): one partial, `wait_group<0>` then promotion; the
//!       other warpgroup's MMAs cover the promotion.
//!     - 256×128: per K block, wave 0 (rows 64·wg..) into the partial,
//!       `wait_group<0>`, promotion into wave 0's main accumulators, then
//!       wave 1 (rows 128 + 64·wg..) into the same partial, release,
//!       promotion (64 + 64 main + 64 partial registers). Each B tile feeds
//!       256 rows: a quarter less operand traffic per FLOP than 128×128,
//!       and 14% faster at 8192³ on the H100.
//!     The waits tie the retired partial's registers as asm operands, so no
//!     read of it can be scheduled before the wait.
//! * Epilogue per consumer warpgroup: bf16 in 4 sub-tiles of 64×32 through
//!   64-byte-swizzled shared memory and TMA stores (double-buffered, drained
//!   while the next tile's main loop runs), as in `gemm_bf16.rs`.
//!   `_mca_3stage` (256×128, for K ≤ 2048) trades the fourth input stage
//!   for a ring of 8 sub-tiles per warpgroup, a whole tile: each wave's 4
//!   sub-tiles go out as one batch that waits only until the previous
//!   tile's stores have read the buffers it reuses
//!   (`StoreEpilogue::store_pipelined`) instead of each pair waiting for
//!   the pair before it (DeepGEMM's 3 stages and whole-tile D staging).
//! * `_c2`: clusters of 2 CTAs along M; each CTA loads half of the shared
//!   128-row B tile and multicasts it to both, so the empty barriers count
//!   both CTAs' consumer warpgroups (as in `gemm_bf16.rs`).
//! * `_mca` (256×128): clusters of 2 CTAs along N; the two horizontally
//!   adjacent tiles share each A tile, each CTA loads half of its 256 rows
//!   and multicasts it to both (`mcast_a_producer`), so per stage a CTA
//!   pulls 16 + 16 KiB of operands from L2 instead of 32 + 16; the
//!   schedule is `ClusterWork` over the transposed tile grid.
//! * Persistent grid: work unit `u` (a tile, or a cluster's tiles) goes to
//!   CTA (cluster) `u mod grid`, in grouped order (the host launches the
//!   fewest CTAs that take the units in as many waves as one per SM:
//!   `fp8::equal_waves_workers`).
//! * 128-row tiles whose last ≤ 64 rows lie past M (every tile at M = 64):
//!   the consumer warpgroup whose 64 rows are all past M passes its stages
//!   back unread (`pass_segment`) and skips the fixup and the epilogue, so
//!   the tile costs what a 64-row tile would.
//! * The producer prefetches each tile's B-scale rows into L2 when it
//!   starts the tile (`prefetch_tile_b_scales`), STAGES K blocks ahead of
//!   the consumers' reads.
//!
//! Assembled from the Hopper roles of `baton_kernel_roles::sm90` (their
//! docs state each role's barrier contract): the layout (`Fp8Smem`), then
//! setup (`init_then_sync`), the schedule (`ClusterWork`, `TileRows`) and
//! `dispatch_roles!` over `GEMM_ROLES` — `TmaProducer` with this kernel's
//! loads (A, A scales, B), no C-load, and per consumer warpgroup
//! `fp8_mainloop` (MMA + `promotion`), the stream-K fixup
//! (`stream_k_fixup_overlapped!` for one-wave tiles: the finalizer waits for
//! all contributors at once; `stream_k_fixup!` in turn for two-wave tiles)
//! and `StoreEpilogue` over the two D buffers (`NoC`).
//!
//! # Per-K output pipeline: Hopper vs Blackwell
//!
//! baton's `OutputKPipeline` (`MmaKStage` → `EpilogueKStage`) models the
//! Blackwell mapping: a single MMA warp issues `tcgen05.mma` into a TMEM
//! partial accumulator per K block, commits it to a per-K output stage, and
//! separate promotion/epilogue warpgroups `tcgen05.ld` the partial, scale it
//! and add it into their own main accumulators, then release the TMEM stage —
//! MMA and promotion overlap through the ring of per-K stages.
//!
//! On Hopper the `wgmma` accumulators live in the issuing warpgroup's
//! registers and cannot be handed to another warpgroup without a round trip
//! through shared memory (64 KiB per 128×128 fp32 partial per K block —
//! more bandwidth than the MMAs' own operands). So here the "per-K stage"
//! is the partial register array itself: producer and consumer of the
//! per-K handoff are the same warpgroup, `wgmma.wait_group<0>` is its `full`
//! wait and the next K block's first `wgmma` (after `wgmma.fence`) is its
//! `empty` side (with `_db`, a two-stage ring of partials in registers).
//! No `OutputKPipeline` barriers are needed and there are no separate
//! epilogue warps; the overlap MMA ↔ promotion comes from the register ring
//! and from the two consumer warpgroups sharing the tensor core, not from
//! an mbarrier stage ring.

use baton::arch::ptx::tma::{TensorMap, load_2d, prefetch_tensormap, store_wait_group};
use baton::arch::ptx::{dynamic_smem, thread_idx_x, warp_uniform};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{InputConsumer, InputTilePipeline, a_scale_floats};
use baton_kernel_roles::dispatch_roles;
use baton_kernel_roles::sm90::dispatch::{GEMM_ROLES, init_then_sync};
use baton_kernel_roles::sm90::epilogue::{NoC, SUB_COLS, SUB_ROWS, StoreEpilogue};
use baton_kernel_roles::sm90::fp8_a_scales::load_a_scales;
pub use baton_kernel_roles::sm90::mainloop_fp8::{BK, WAVE_M};
use baton_kernel_roles::sm90::mainloop_fp8::{
    Fp8Accumulators, Fp8Mma, Fp8N32, Fp8N56, Fp8N64, Fp8N88, Fp8N96, Fp8N128, Fp8N192, Fp8Payload,
    Fp8Scales, Fp8Stage, fp8_mainloop, pass_segment, pins_stage_descriptors,
    prefetch_tile_b_scales,
};
use baton_kernel_roles::sm90::producer::{TmaProducer, load_b_tile};
use baton_kernel_roles::sm90::schedule::{ClusterWork, TileRows};
use baton_kernel_roles::sm90::stage_descriptors::StageDescriptors;
use baton_kernel_roles::sm90::stream_k::StreamKFixup;
use baton_kernel_roles::sm90::tail_columns::store_tail_columns;
use baton_kernel_roles::trace::{self, Event};
use baton_kernel_roles::{stream_k_fixup, stream_k_fixup_overlapped};

/// Tiles along M grouped together for L2 reuse.
const GROUP_M: u32 = 8;

/// Contributors' partials a split unit's finalizer loads at a time
/// (`stream_k_fixup_overlapped!`): 4 for up to 32 accumulators per thread
/// (128×32, 128×64), else 1 (the BF16 kernels' 2 at 64 spills 4 bytes in
/// 128×128 with its two FP8 partials).
const fn fp8_fixup_batch(acc: usize) -> usize {
    if acc <= 32 { 4 } else { 1 }
}

type Payload<const BM: usize, const BN: usize> = Fp8Payload<BM, BN>;
type Stage<const BM: usize, const BN: usize> = Fp8Stage<BM, BN>;

pub use baton_kernels_abi::gemm_fp8::Fp8Smem;
use baton_kernels_abi::gemm_fp8::{self as abi};
use baton_kernels_abi::gemm_params::{GemmFp8Params, StreamKParams};

macro_rules! fp8_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $mma:ty, $bm:literal, $bn:literal, $acc:literal, $stages:literal, $dring:literal, $double:literal, $cluster:literal, $stream_k:literal $(, $mcast_a:literal)?) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            pub fn $name(p: GemmFp8Params) {
                let GemmFp8Params { b_scales, m, n, k, tail_rows, sa_ld, stream_k: StreamKParams { partials: sk_partials, flags: sk_flags, epoch: sk_epoch, schedule: sk_schedule }, d, d_ld, .. } = p;
                // The tensor maps stay in the parameter space (by value, no
                // copy): TMA reads them through their generic addresses,
                // each taken where it is used (two instructions) rather
                // than held in registers through the loops (the two-wave
                // kernels have none to spare).
                let at = |offset: usize| move || baton::entry_param_address!($name).wrapping_add(offset) as *const TensorMap;
                let (tma_a, tma_b, tma_sa, tma_d, tma_a_tail, tma_sa_tail) = (
                    at(core::mem::offset_of!(GemmFp8Params, tma_a)),
                    at(core::mem::offset_of!(GemmFp8Params, tma_b)),
                    at(core::mem::offset_of!(GemmFp8Params, tma_sa)),
                    at(core::mem::offset_of!(GemmFp8Params, tma_d)),
                    at(core::mem::offset_of!(GemmFp8Params, tma_a_tail)),
                    at(core::mem::offset_of!(GemmFp8Params, tma_sa_tail)),
                );
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<Fp8Smem<$bm, $bn, $stages, $dring, { abi::consumer_warpgroups($bm) }>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract. (The 64-row
                // kernels have no stream-K: their fixup is never used.)
                let sk = unsafe { StreamKFixup::<{ GEMM_ROLES.consumer_warpgroups }>::new(sk_partials, sk_flags, sk_epoch) };
                // SAFETY: forwarded to the kernel's contract.
                unsafe {
                    gemm::<$mma, $bm, $bn, $acc, $stages, $dring, { abi::consumer_warpgroups($bm) }, $double, $cluster, $stream_k, { false $(|| $mcast_a)? }, { $bm / 2 }, { $bn / 2 }, _>(
                        (tma_a, tma_b, tma_sa, tma_d),
                        (tma_a_tail, tma_sa_tail, tail_rows),
                        (b_scales, sa_ld), (d, d_ld), m, n, k, sk, sk_schedule,
                    )
                }
            }
        }
    };
}

fp8_entry!(
    /// Blockwise-scaled FP8 GEMM, 128×128×128 tiles, 6 stages
    /// (`wgmma.m64n128k32` e4m3, promotion per K block), one partial
    /// accumulator per warpgroup.
    ///
    /// Launch: grid = min(tiles, SMs) CTAs of 384 threads, with
    /// `size_of::<Fp8Smem<BM, BN, STAGES, DRING, WGS>>()` bytes of dynamic shared memory (the host's table;
    /// checked by a test against the PTX).
    ///
    /// # Safety
    /// The tensor maps (by value in the parameters, read in the parameter space) describe: with 128-byte swizzle, A
    /// (u8, dims {K, M}, box {128, 128}) and B (u8, dims {K, N}, box {128, 128});
    /// the A scales (f32, the vector of `(K/128 − 1)·sa_ld + M` floats of a
    /// `[K/128][sa_ld]` buffer as a one-row map with a 16-byte aligned
    /// base, box {132, 1}, no swizzle);
    /// with 64-byte swizzle, D (bf16, dims {N, M}, box {32, 64}). `b_scales`
    /// points at `⌈N/128⌉ · K/128` f32 in global memory; K is a positive
    /// multiple of 128. `tail_rows` is `M mod BM`; when it is not 0 the tail
    /// maps describe the same A with a box of `tail_rows` rows and the A
    /// scales with a box of `a_scale_box_floats(tail_rows mod 128)` floats
    /// (the last tile row's partial box; when `tail_rows mod 128` is 0 it
    /// is never read), otherwise they are never read.
    ///
    /// Stream-K (`stream_k.schedule` with stream-K workers: the host's
    /// `StreamKSchedule::launch_words` for this launch's units, K blocks and
    /// workers): `partials` then holds `grid · BM · BN` floats and `flags`
    /// `2 · grid` `u32`s (zeroed once), and `epoch ≠ 0` differs from the
    /// previous launch's on these buffers. With no stream-K workers
    /// (`StreamKParams::OFF`) they are never touched (may be null).
    abi::GEMM_128X128,
    baton_gemm_fp8_blockwise_128x128,
    Fp8N128, 128, 128, 64, 6, 2, false, 1, true
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_128x128`] with two partial accumulators per
    /// warpgroup: K block `kb + 1`'s MMAs run while `kb`'s partial is promoted
    /// (64 + 64 partial + 64 main registers per thread).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`].
    abi::GEMM_128X128_DB,
    baton_gemm_fp8_blockwise_128x128_db,
    Fp8N128, 128, 128, 64, 6, 2, true, 1, true
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_128x128_db`] in clusters of 2 CTAs along M:
    /// the two vertically adjacent tiles share each B tile, and each CTA
    /// TMA-loads half of it (64 rows) and multicasts it into both CTAs' stage —
    /// a quarter less L2 → SM traffic than two independent CTAs.
    ///
    /// Launch: clusters of (2, 1, 1), an even grid.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 64}.
    abi::GEMM_128X128_DB_C2,
    baton_gemm_fp8_blockwise_128x128_db_c2,
    Fp8N128, 128, 128, 64, 6, 2, true, 2, true
);

fp8_entry!(
    /// 128×64×128 tiles, 8 stages, two partial accumulators
    /// (`wgmma.m64n64k32`): twice the CTAs of the 128×128 kernels, for small M.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 64} and
    /// `size_of::<Fp8Smem<64, 8>>()` bytes of dynamic shared memory.
    abi::GEMM_128X64_DB,
    baton_gemm_fp8_blockwise_128x64_db,
    Fp8N64, 128, 64, 32, 8, 2, true, 1, true
);

fp8_entry!(
    /// 128×192×128 tiles, 5 stages, one partial accumulator
    /// (`wgmma.m64n192k32`: 96 main + 96 partial registers per thread):
    /// 17% less operand traffic per FLOP than 128×128. A tile straddles two
    /// 128-wide B-scale blocks, so promotion uses two B scales per K block.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 192} and
    /// `size_of::<Fp8Smem<192, 5>>()` bytes of dynamic shared memory.
    abi::GEMM_128X192,
    baton_gemm_fp8_blockwise_128x192,
    Fp8N192, 128, 192, 96, 5, 2, false, 1, true
);

fp8_entry!(
    /// 256×128×128 tiles, 4 stages: each consumer warpgroup computes two
    /// 64-row waves of the tile (rows `64·wg` and `128 + 64·wg`), one after
    /// the other into one partial accumulator (`wait_group<0>`, promotion
    /// into that wave's main accumulators: 64 + 64 main + 64 partial
    /// registers per thread); the other warpgroup's MMAs keep the tensor
    /// core busy during a promotion. A quarter less operand traffic per FLOP
    /// than 128×128 (each B tile feeds twice the rows). No stream-K: every
    /// tile whole, the stream-K arguments ignored (the schedule and fixup
    /// compiled out: 2.5–4 % faster at 4096×7168×16384 and 8192³ than with
    /// them, BENCHMARKS.md session 9); split-K and stream-K run
    /// [`baton_gemm_fp8_blockwise_256x128_sk`].
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with A's box {128, 256}, the
    /// A scales in two boxes and `size_of::<Fp8Smem<256, 128, 4>>()` bytes
    /// of dynamic shared memory.
    abi::GEMM_256X128,
    baton_gemm_fp8_blockwise_256x128,
    Fp8N128, 256, 128, 64, 4, 2, false, 1, false
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_256x128`] with stream-K and split-K: the
    /// fixup hands over both waves' accumulators (slots of 2 · 128 · 64
    /// floats).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x128`], with the stream-K contract
    /// of [`baton_gemm_fp8_blockwise_128x128`].
    abi::GEMM_256X128_SK,
    baton_gemm_fp8_blockwise_256x128_sk,
    Fp8N128, 256, 128, 64, 4, 2, false, 1, true
);

fp8_entry!(
    /// 128×256×128 tiles, 4 stages: [`baton_gemm_fp8_blockwise_256x128`]
    /// turned along N. Each consumer warpgroup computes its 64 rows in two
    /// 128-column waves (columns 0.. and 128.., each with its own B scale)
    /// into one partial accumulator, so each A tile feeds 256 columns: for
    /// small M with wide N, half the CTAs of 128×128 tiles and half the
    /// re-reads of A. Stream-K as [`baton_gemm_fp8_blockwise_256x128_sk`].
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 256} and
    /// `size_of::<Fp8Smem<128, 256, 4>>()` bytes of dynamic shared memory.
    abi::GEMM_128X256,
    baton_gemm_fp8_blockwise_128x256,
    Fp8N128, 128, 256, 64, 4, 2, false, 1, true
);

fp8_entry!(
    /// 128×96×128 tiles, 6 stages, two partial accumulators
    /// (`wgmma.m64n96k32`: 48 + 48 partial + 48 main registers): a width
    /// that is not a power of two, for wave counts (e.g. 128×24576: 256
    /// tiles, 2 waves on 132 SMs, as 128×128's 192). Tiles at offsets 64
    /// and 96 of a 128-wide B-scale block straddle two blocks: two B scales
    /// per K block, promotion split at column 64 or 32.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 96} and
    /// `size_of::<Fp8Smem<128, 96, 6>>()` bytes of dynamic shared memory.
    abi::GEMM_128X96_DB,
    baton_gemm_fp8_blockwise_128x96_db,
    Fp8N96, 128, 96, 48, 6, 2, true, 1, true
);

fp8_entry!(
    /// 128×32×128 tiles, 10 stages, two partial accumulators
    /// (`wgmma.m64n32k32`): four times the CTAs of 128-wide tiles, for
    /// small M with few columns (64×2112: 66 tiles instead of 33). Its
    /// stages are small (20.5 KiB), so it keeps 10 in flight where 128×64
    /// fits 8: a CTA's K blocks at small M stream from DRAM, and the bytes
    /// in flight per CTA set their rate.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 32} and
    /// `size_of::<Fp8Smem<128, 32, 10>>()` bytes of dynamic shared memory.
    abi::GEMM_128X32_DB,
    baton_gemm_fp8_blockwise_128x32_db,
    Fp8N32, 128, 32, 16, 10, 2, true, 1, true
);

fp8_entry!(
    /// 256×96×128 tiles, 4 stages: [`baton_gemm_fp8_blockwise_256x128`]
    /// 96 columns wide (48 + 48 main + 48 partial registers per thread),
    /// for wave counts: 4096×2112 is 352 tiles, 3 waves on 132 SMs, where
    /// 256×128 is 272 tiles, also 3 waves, with a third more columns each.
    /// Both waves of a tile that straddles two B-scale blocks promote with
    /// both scales. No stream-K (as [`baton_gemm_fp8_blockwise_256x128`]).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x128`], with B's box {128, 96} and
    /// `size_of::<Fp8Smem<256, 96, 4>>()` bytes of dynamic shared memory.
    abi::GEMM_256X96,
    baton_gemm_fp8_blockwise_256x96,
    Fp8N96, 256, 96, 48, 4, 2, false, 1, false
);

fp8_entry!(
    /// 256×88×128 tiles, 4 stages: [`baton_gemm_fp8_blockwise_256x96`] 88
    /// columns wide (44 + 44 main + 44 partial registers per thread), for
    /// wave counts: 4096×2112 is 384 tiles, 3 waves on 132 SMs with the
    /// last 120 of 132 busy (DeepGEMM's pick there), where 256×96 runs 352
    /// tiles in 3 waves of columns 9 % wider. A tile straddles two B-scale
    /// blocks at any 8-column group: the K loop is compiled once per split
    /// and chosen per tile (`two_wave_mainloop`; per-register selects ran
    /// 14 % slower). Each wave's first 64 columns leave through the
    /// TMA-store epilogue, its last 24 from registers (`d`, `d_ld`). No
    /// stream-K.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x128`], with B's box {128, 88},
    /// `size_of::<Fp8Smem<256, 88, 4>>()` bytes of dynamic shared memory,
    /// and `d` / `d_ld` D's base and row stride in elements (even).
    abi::GEMM_256X88,
    baton_gemm_fp8_blockwise_256x88,
    Fp8N88, 256, 88, 44, 4, 2, false, 1, false
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_256x128`] in clusters of 2 CTAs along N
    /// that share each A tile: the two horizontally adjacent tiles of a
    /// cluster have the same 256 rows of A, and each CTA TMA-loads half of
    /// them (128 rows) and multicasts it into both CTAs' stage — a third
    /// less L2 → SM operand traffic per CTA than 256×128 alone (A is 32 of
    /// a stage's 48 KiB of operands). The empty barriers count both CTAs'
    /// consumer warpgroups; each CTA still loads its own B tile and A
    /// scales. The ragged last tile row (and a tile row of a cluster whose
    /// second tile lies past N) loads its own A without multicast. No
    /// stream-K.
    ///
    /// Launch: clusters of (2, 1, 1), an even grid.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x128`], with A's box {128, 128}
    /// (half a tile row; the tail map's box keeps the tail's rows).
    abi::GEMM_256X128_MCA,
    baton_gemm_fp8_blockwise_256x128_mca,
    Fp8N128, 256, 128, 64, 4, 2, false, 2, false, true
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_256x128_mca`] with 3 input stages and a
    /// whole tile of D staging per consumer warpgroup (8 sub-tiles, not 2):
    /// each wave's sub-tiles go out as one batch that waits only until the
    /// previous tile's stores have read the buffers it reuses
    /// (`StoreEpilogue::store_pipelined`), so the stores drain under the
    /// next tile's main loop. For short K (the plan takes it up to K =
    /// 2048), where the epilogue's waits are a larger share of a tile.
    ///
    /// Launch: clusters of (2, 1, 1), an even grid.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x128_mca`], with
    /// `size_of::<Fp8Smem<256, 128, 3, 8>>()` bytes of dynamic shared memory.
    abi::GEMM_256X128_MCA_3STAGE,
    baton_gemm_fp8_blockwise_256x128_mca_3stage,
    Fp8N128, 256, 128, 64, 3, 8, false, 2, false, true
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_256x88`] in clusters of 2 CTAs along N
    /// sharing each A tile by TMA multicast, as
    /// [`baton_gemm_fp8_blockwise_256x128_mca`] (DeepGEMM's configuration
    /// at 4096×2112: `BM=256 BN=88 multicast=2A`). No stream-K.
    ///
    /// Launch: clusters of (2, 1, 1), an even grid.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_256x88`], with A's box {128, 128}.
    abi::GEMM_256X88_MCA,
    baton_gemm_fp8_blockwise_256x88_mca,
    Fp8N88, 256, 88, 44, 4, 2, false, 2, false, true
);

fp8_entry!(
    /// 64×128×128 tiles, 8 stages, two partial accumulators
    /// (`wgmma.m64n128k32`), one consumer warpgroup: 256 threads
    /// (`GEMM_ROLES` with one consumer warpgroup). For M ≤ 64, where a 128-row tile's second
    /// warpgroup has no rows and its stages carry 64 rows of A nobody reads
    /// (DeepGEMM's `BLOCK_M = 64`). A whole tile of D staging (4
    /// sub-tiles): a tile's stores drain under the next tile's main loop.
    /// Data-parallel: no stream-K (its schedule and fixup would grow the
    /// unrolled K loop by ~10 %), the stream-K arguments ignored.
    ///
    /// Launch: grid = min(tiles, SMs) CTAs of 256 threads.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with A's box {128, 64}, the
    /// A scales' whole box of `a_scale_box_floats(64)` = 68 floats and
    /// `size_of::<Fp8Smem<64, 128, 8, 4, 1>>()` bytes of dynamic shared
    /// memory.
    abi::GEMM_64X128_DB,
    baton_gemm_fp8_blockwise_64x128_db,
    Fp8N128, 64, 128, 64, 8, 4, true, 1, false
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_64x128_db`] 64 columns wide
    /// (`wgmma.m64n64k32`), 12 stages, a whole tile of D staging (2
    /// sub-tiles).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_64x128_db`], with B's box {128, 64}
    /// and `size_of::<Fp8Smem<64, 64, 12, 2, 1>>()` bytes of dynamic shared
    /// memory.
    abi::GEMM_64X64_DB,
    baton_gemm_fp8_blockwise_64x64_db,
    Fp8N64, 64, 64, 32, 12, 2, true, 1, false
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_64x128_db`] 56 columns wide
    /// (`wgmma.m64n56k32`), 12 stages: DeepGEMM's width at M = 64, N =
    /// 7168 (128 tiles on 132 SMs where 64 columns make 112 and 32 make
    /// 224). A tile straddles two B-scale blocks at six of sixteen offsets
    /// (promotion split per register at run time); its first 32 columns
    /// leave through a D sub-tile (a ring of 2), its last 24 from
    /// registers (`d`, `d_ld`).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_64x128_db`], with B's box {128, 56},
    /// `size_of::<Fp8Smem<64, 56, 12, 2, 1>>()` bytes of dynamic shared
    /// memory, and `d` / `d_ld` D's base and row stride in elements (even).
    abi::GEMM_64X56_DB,
    baton_gemm_fp8_blockwise_64x56_db,
    Fp8N56, 64, 56, 28, 12, 2, true, 1, false
);

fp8_entry!(
    /// [`baton_gemm_fp8_blockwise_64x128_db`] 32 columns wide
    /// (`wgmma.m64n32k32`), 12 stages, D staging of 2 sub-tiles (one per
    /// tile).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_64x128_db`], with B's box {128, 32}
    /// and `size_of::<Fp8Smem<64, 32, 12, 2, 1>>()` bytes of dynamic shared
    /// memory.
    abi::GEMM_64X32_DB,
    baton_gemm_fp8_blockwise_64x32_db,
    Fp8N32, 64, 32, 16, 12, 2, true, 1, false
);

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
    const DRING: usize,
    const WGS: usize,
    const DOUBLE: bool,
    const CLUSTER_M: u32,
    const STREAM_K: bool,
    const MCAST_A: bool,
    const HALF_M: usize,
    const HALF_N: usize,
    Map: Fn() -> *const TensorMap + Copy,
>(
    (tma_a, tma_b, tma_sa, tma_d): (Map, Map, Map, Map),
    (tma_a_tail, tma_sa_tail, tail_rows): (Map, Map, u32),
    (b_scales, sa_ld): (*const f32, u32),
    (d, d_ld): (*mut u16, u32),
    m: u32,
    n: u32,
    k: u32,
    fixup: StreamKFixup,
    sk_schedule: [u32; 4],
) {
    const {
        assert!(
            CLUSTER_M == 1 || (CLUSTER_M == 2 && (BN == 128 || MCAST_A)),
            "clusters: 128-wide B tiles shared by 2 CTAs, or A shared"
        );
        assert!(
            !MCAST_A || (CLUSTER_M == 2 && BM == 256 && !STREAM_K),
            "A multicast: 256-row tiles in 2-CTA clusters along N, data-parallel"
        );
        assert!(
            (BM <= 128 && BN <= 192 && !MCAST_A)
                || (BM == 256 && BN <= 128 && !DOUBLE && (CLUSTER_M == 1 || MCAST_A))
                || (BM == 128 && BN == 256 && ACC == 64 && !DOUBLE && CLUSTER_M == 1),
            "two-wave tiles (256x128, 128x256): one partial, one B scale per wave"
        );
        assert!(
            WGS == abi::consumer_warpgroups(BM)
                && (BM != 64 || (BN <= 128 && DOUBLE && CLUSTER_M == 1 && !STREAM_K)),
            "64-row tiles: one consumer warpgroup, two partials, data-parallel, no cluster"
        );
        assert!(
            BN % SUB_COLS == 0 || (BM != 128 && BN % 8 == 0 && BN < 128),
            "the epilogue stores whole 32-column sub-tiles (the rest from registers: 256- and 64-row tiles narrower than 128)"
        );
    };
    // Waves per consumer warpgroup: two 64-row waves (256-row tiles), two
    // 128-column waves (256-wide tiles), or one.
    let (m_waves, n_waves) = ((BM / WAVE_M as usize).max(1), if BN == 256 { 2 } else { 1 });
    let waves = m_waves * n_waves;
    // Columns of one wave.
    let wave_n = BN / n_waves;
    // Without stream-K every segment is a whole tile: the schedule's
    // stream-K region and the fixup compile away.
    let sk_schedule = if STREAM_K { sk_schedule } else { [0; 4] };
    // SAFETY: launched with size_of::<Fp8Smem<BM, BN, STAGES, DRING, WGS>>() of dynamic shared memory
    // (the kernel traps otherwise).
    let smem: SharedRef<'static, Fp8Smem<BM, BN, STAGES, DRING, WGS>> =
        unsafe { dynamic_smem::<Fp8Smem<BM, BN, STAGES, DRING, WGS>>() };
    let input = InputTilePipeline::<Payload<BM, BN>, STAGES>::new(
        smem_field!(smem, Fp8Smem<BM, BN, STAGES, DRING, WGS>, input),
        c"gemm-fp8-mainloop",
    );
    let d_tiles = smem_field!(smem, Fp8Smem<BM, BN, STAGES, DRING, WGS>, d_tiles);
    // Who runs what: 64-row tiles have one consumer warpgroup.
    let roles = GEMM_ROLES.with_consumer_warpgroups(WGS as u32);
    init_then_sync::<CLUSTER_M>(
        #[inline(always)]
        || {
            // Fetch the tensor maps into the descriptor cache while the
            // barriers are set up (the first TMA of each would wait for it).
            // SAFETY: the maps are valid per the kernel contract.
            unsafe {
                prefetch_tensormap(tma_a());
                prefetch_tensormap(tma_b());
                prefetch_tensormap(tma_sa());
                prefetch_tensormap(tma_d());
                if tail_rows != 0 {
                    prefetch_tensormap(tma_a_tail());
                    prefetch_tensormap(tma_sa_tail());
                }
            }
            // Empty barriers: one arrival per consumer warpgroup of every CTA
            // whose B multicast writes into the stage (the whole cluster).
            input.init(roles.consumer_warpgroups * CLUSTER_M);
        },
    );

    // Work units: CLUSTER_M vertically adjacent tiles sharing one B tile;
    // CTA `rank` of a cluster takes tile row `unit_row * CLUSTER_M + rank`
    // (a row past M loads no A and is clipped by the store).
    let (bm, bn) = (BM as u32, BN as u32);
    let n_blocks = n.div_ceil(128);
    // Rows of A (and of its scales) per tile row: `TileRows::a_rows`.
    let tiles_m = m.div_ceil(bm);
    let rows = TileRows {
        tiles_m,
        tail_rows,
        bm,
    };
    let k_blocks = k / BK;
    // Every role walks the same schedule (data-parallel units, then this
    // worker's stream-K share).
    // With A multicast a unit is CLUSTER_M horizontally adjacent tiles
    // sharing one A tile: the schedule of the transposed tile grid, whose
    // (row, column) is this CTA's (tile column, tile row).
    let tiles_n = n.div_ceil(bn);
    let work = if MCAST_A {
        ClusterWork::<CLUSTER_M>::new(tiles_n, tiles_m, k_blocks, GROUP_M, sk_schedule)
    } else {
        ClusterWork::<CLUSTER_M>::new(tiles_m, tiles_n, k_blocks, GROUP_M, sk_schedule)
    };
    let (sched, rank) = (work.sched, work.rank);
    // Unit → this CTA's (tile row, tile column).
    let tile_of = move |u: u32| {
        let (r, c) = work.tile_of(u);
        if MCAST_A { (c, r) } else { (r, c) }
    };

    dispatch_roles!(roles, c_load_active: false,
        // TMA producer: A, its scales (its loaded rows) and B (or this
        // CTA's multicast half) per stage; the full barrier expects
        // Payload::TMA_BYTES, or the trimmed count.
        producer => {
          if MCAST_A {
            mcast_a_producer::<BM, HALF_M, BN, STAGES, CLUSTER_M, _>(input, work, rows, (tiles_n, n_blocks, b_scales, sa_ld), (tma_a, tma_b, tma_sa), (tma_a_tail, tma_sa_tail));
          } else {
            TmaProducer { input, work, rows }.run(#[inline(always)]
                |t| {
                // SAFETY: b_scales holds ⌈N/128⌉ · K/128 floats (contract).
                unsafe { prefetch_tile_b_scales::<BN>(b_scales, t.tn * bn, n_blocks, k_blocks) };
                let trimmed_bytes = t.a_rows * BK + bn * BK + 4 * a_scale_floats(t.a_rows);
                (trimmed_bytes, #[inline(always)]
                move |st, bar, kb| {
                    let map_a = if t.a_rows == bm { tma_a() } else { tma_a_tail() };
                    let kc = (kb * BK) as i32;
                    // SAFETY: maps per the kernel contract; the stage is
                    // ours and its full barrier expects these bytes.
                    unsafe {
                        if t.a_rows != 0 {
                            load_2d(
                                map_a,
                                smem_field!(st, Stage<BM, BN>, a),
                                bar,
                                kc,
                                (t.tm * bm) as i32,
                            );
                            load_a_scales::<BM, BN, { BK as usize }, _>(st, bar, (tma_sa, tma_sa_tail), t.a_rows, t.tm * bm, kb, sa_ld);
                        }
                        load_b_tile::<u8, BN, HALF_N, { BK as usize }, CLUSTER_M>(
                            tma_b(),
                            smem_field!(st, Stage<BM, BN>, b),
                            bar,
                            kc,
                            t.tn * bn,
                            rank,
                        );
                    }
                })
            })
          }
        },
        // No C: D = A·B.
        c_load => {},
        // Consumer warpgroup `wg`: MMA + promotion, stream-K fixup, epilogue.
        consumer(wg) => {
            // (usize, as the inline original: the same descriptor
            // arithmetic, and so the same main loop.)
            // The two-wave data-parallel kernels (256×BN, no stream-K) take
            // `wg` through `warp_uniform`: ptxas then proves the stage
            // descriptors warp-uniform and builds them on the uniform
            // datapath (256x128: 66 → 15 `R2UR`s in the kernel; ncu at
            // 4096×7168×16384 had ~33 `R2UR` + their `IMAD`s per warp and
            // K block between the full-barrier wait and the first `wgmma`,
            // where DeepGEMM has ~20 uniform instructions). So do the `_db`
            // kernels whose main loop pins the stage descriptors
            // (`pins_stage_descriptors`: every `_db` width): their K loop's
            // stage index is per-thread (stream-K's schedule: ptxas keeps
            // the loop's counters in vector registers), so that loop builds
            // each stage's descriptors in one copy of the K block per
            // stage of the ring (`StageDescriptors::at_pinned`, the ring
            // unrolled: `rotates_stages`), off the uniform stage-0
            // descriptors. The other kernels keep the plain index (and
            // main's PTX): 128x256 would spill 4 bytes.
            // One consumer warpgroup (64-row tiles): its index is 0, so
            // its descriptors are constants.
            let wg = if WGS == 1 {
                0
            } else if (BM == 256 && !STREAM_K) || (DOUBLE && pins_stage_descriptors(BN)) {
                warp_uniform(wg)
            } else {
                wg
            } as usize;
            let tid = thread_idx_x() % 128;
            let signaller = tid == 0;
            let (warp, lane) = (tid / 32, tid % 32);
            // This thread's accumulator rows within the warpgroup: `row`, `row + 8`.
            let row = warp * 16 + lane / 4;
            let scale_row = wg as u32 * 64 + row;
            let mut consumer: InputConsumer<'_, Payload<BM, BN>, STAGES> = input.consumer();
            // `zeroed` lowers to a memset that SROA splits into registers.
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut p0: [f32; ACC] = unsafe { core::mem::zeroed() };
            // SAFETY: as above.
            let mut p1: [f32; ACC] = unsafe { core::mem::zeroed() };
            // This warpgroup's 64 rows of A (64 rows × BK bytes further).
            let st0 = input.stage(0);
            // The D buffer the next epilogue sub-tile writes: the ring of
            // `DRING` in order across sub-tiles, waves and tiles.
            let mut d_next = 0u32;
            let descs = StageDescriptors::new(
                smem_field!(st0, Stage<BM, BN>, a).addr() + (wg * 64 * BK as usize) as u32,
                smem_field!(st0, Stage<BM, BN>, b).addr(),
                core::mem::size_of::<Stage<BM, BN>>() as u32,
            );
            for seg in work.segments() {
                let (tm, tn) = tile_of(seg.unit);
                // 128-row tiles: a warpgroup whose 64 rows all lie past M
                // (the last tile row holds ≤ 64 rows, e.g. M = 64) passes
                // its stages back and skips the fixup and the epilogue
                // (warpgroup-uniform; its store would be clipped whole).
                // The two-wave 256-row kernels keep one code path.
                if BM == 128 && tm * bm + wg as u32 * 64 >= m {
                    pass_segment::<BM, BN, STAGES, CLUSTER_M>(&mut consumer, seg.k_begin, seg.k_end, signaller);
                    continue;
                }
                // This tile's rows of B scales: one 128-wide n-block when BN
                // divides 128; a tile that straddles (96 or 192 wide) at
                // column c0 = BN·tn covers n-block c0/128 up to column
                // 128 − c0 mod 128 of the tile and the next n-block after
                // it (clamped to the last n-block: columns past N are
                // clipped by the store); `split_q` counts its 8-column
                // groups before the next block.
                let c0 = tn * bn;
                // (With A multicast a cluster's second tile may lie past N:
                // its B-scale row is clamped too, its store clipped.)
                let b_lo = if MCAST_A { (c0 / 128).min(n_blocks - 1) } else { c0 / 128 };
                let b_hi = (c0 / 128 + 1).min(n_blocks - 1);
                let split_q = (128 - c0 % 128) / 8;
                // SAFETY: b_lo, b_hi < ⌈N/128⌉: in bounds per the contract.
                let bs_row = unsafe { b_scales.add((b_lo * k_blocks) as usize) };
                // SAFETY: as above.
                let bs_row_hi = unsafe { b_scales.add((b_hi * k_blocks) as usize) };
                // SAFETY: all-zero is a valid [f32; ACC].
                let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
                // The second wave's main accumulators (two-wave tiles;
                // unused, and so eliminated, otherwise).
                // SAFETY: all-zero is a valid [f32; ACC].
                let mut acc_hi: [f32; ACC] = unsafe { core::mem::zeroed() };
                // SAFETY: k_end ≤ K/128 (contract); the B-scale rows are in
                // bounds (above), the A-scale rows < BM.
                unsafe {
                    fp8_mainloop::<M, BM, BN, ACC, STAGES, DOUBLE, CLUSTER_M>(
                        &mut consumer,
                        descs,
                        Fp8Scales {
                            scale_row,
                            sa_ld,
                            bs_row,
                            bs_row_hi,
                        },
                        seg.k_begin,
                        seg.k_end,
                        Fp8Accumulators {
                            acc: &mut acc,
                            acc_hi: &mut acc_hi,
                            p0: &mut p0,
                            p1: &mut p1,
                        },
                        split_q,
                        signaller,
                    )
                };

                // Stream-K fixup: a contributor hands its partial to the
                // unit's finalizer and has no epilogue (`continue`); a
                // finalizer of a split unit adds the contributors' partials
                // first: one-wave tiles wait for all of them at once and
                // load `fp8_fixup_batch(ACC)` partials at a time (the same sum
                // in the same order as in turn, as the BF16 kernels);
                // two-wave tiles hand over both waves' accumulators, in
                // turn.
                if !STREAM_K {
                    // Every segment is a whole tile (above).
                } else if waves == 1 && fp8_fixup_batch(ACC) == 4 {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC, 4);
                } else if waves == 1 {
                    stream_k_fixup_overlapped!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC, 1);
                } else {
                    stream_k_fixup!(@parts fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, [acc, acc_hi], ACC, 2);
                }

                // Epilogue: per wave, wave_n / 32 sub-tiles of 64 rows × 32
                // columns (an even count: the two D buffers alternate
                // across waves too).
                let epilogue = StoreEpilogue {
                    bufs: d_tiles.at(wg),
                    map_d: tma_d(),
                    wg: wg as u32,
                    tid,
                };
                baton::unroll!(W in [0, 1] {
                  if (W as usize) < waves {
                    let acc = if W == 0 { &acc } else { &acc_hi };
                    let (wm, wn) = if m_waves == 2 { (W, 0) } else { (0, W) };
                    let origin = |j: u32| {
                        (
                            (tn * bn + wn * 128) as i32 + (j as usize * SUB_COLS) as i32,
                            (tm * bm + wm * WAVE_M) as i32 + (wg * SUB_ROWS) as i32,
                        )
                    };
                    let subtiles = (wave_n / SUB_COLS) as u32;
                    // SAFETY: D map per the kernel contract. A 256-row
                    // or 64-row kernel whose ring holds a whole tile
                    // (`DRING`: 256x128_mca_3stage, the 64-row kernels)
                    // writes each wave as one batch
                    // that waits only for the buffers it reuses
                    // (`store_pipelined`: the previous tile's stores
                    // drain under this tile's main loop); the other
                    // 256-row kernels write their ring of 2 as one batch
                    // (the 128×256 kernel spills 8 bytes with batches).
                    unsafe {
                        if (BM == 256 || WGS == 1) && DRING >= waves * subtiles as usize {
                            epilogue.store_pipelined(acc, 1.0, &mut NoC, d_next, subtiles, origin)
                        } else if BM == 256 {
                            epilogue.store(acc, 1.0, &mut NoC, d_next, subtiles, origin)
                        } else {
                            epilogue.store_one_at_a_time(acc, 1.0, &mut NoC, d_next, subtiles, origin)
                        }
                    };
                    d_next = (d_next + subtiles) % DRING as u32;
                    // Columns past the last whole sub-tile (256×88: the
                    // last 24 of each wave) from registers.
                    if wave_n % SUB_COLS != 0 {
                        let (row0, col0) = (tm * bm + wm * WAVE_M + wg as u32 * SUB_ROWS as u32, tn * bn + wn * 128);
                        // SAFETY: d is D's base, d_ld its row stride
                        // (even: TMA's 16-byte rule), n even (the
                        // contract); these columns are this tile's.
                        unsafe { store_tail_columns::<ACC>(acc, tid, d, d_ld, (row0, col0), (m, n)) };
                    }
                  }
                });
            }
            if signaller {
                trace::stamp_consumer0(Event::LastStoreIssued, false);
                store_wait_group::<0>();
                trace::stamp_consumer0(Event::Exit, false);
            }
        },
    );
}

/// The TMA producer of the A-multicast kernels (`MCAST_A`): per K block of
/// every segment of the (transposed) schedule it acquires the stage, arrives
/// on its `full` barrier expecting the stage's bytes in this CTA — all of A
/// (half from this CTA's multicast, half from the peer's), its own B tile
/// (none for a tile past N) and A scales — and issues its loads. A whole
/// tile row of A comes as two halves of `HALF = BM / 2` rows, CTA `rank`
/// loading half `rank` into both CTAs' stage (the peer's `empty` arrivals,
/// counted by the barrier's init, keep the stage free in both); the ragged
/// last tile row loads its rows of A itself (both CTAs of a cluster share
/// the tile row, so both take the same branch). Drains at the end, so no
/// multicast or remote arrival targets a CTA that exited.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn mcast_a_producer<
    'a,
    const BM: usize,
    const HALF: usize,
    const BN: usize,
    const STAGES: usize,
    const CLUSTER: u32,
    Map: Fn() -> *const TensorMap + Copy,
>(
    input: InputTilePipeline<'a, Payload<BM, BN>, STAGES>,
    work: ClusterWork<CLUSTER>,
    rows: TileRows,
    (tiles_n, n_blocks, b_scales, sa_ld): (u32, u32, *const f32, u32),
    (tma_a, tma_b, tma_sa): (Map, Map, Map),
    (tma_a_tail, tma_sa_tail): (Map, Map),
) {
    const {
        assert!(
            CLUSTER <= 2 && 2 * HALF == BM,
            "A in two halves over a 2-CTA cluster"
        )
    };
    let (bm, bn) = (BM as u32, BN as u32);
    let mut producer = input.producer();
    for seg in work.segments() {
        let (tn, tm) = work.tile_of(seg.unit);
        let a_rows = rows.a_rows(tm);
        let b_rows = if tn < tiles_n { bn } else { 0 };
        let bytes = a_rows * BK + b_rows * BK + 4 * a_scale_floats(a_rows);
        // SAFETY: b_scales holds ⌈N/128⌉ · K/128 floats (the kernel
        // contract); a tile past N reads the clamped last row.
        unsafe { prefetch_tile_b_scales::<BN>(b_scales, tn * bn, n_blocks, work.sched.k_blocks()) };
        for kb in seg.k_begin..seg.k_end {
            let stage = producer.acquire();
            stage.arrive_expect_tx_bytes(bytes);
            let (st, bar) = (stage.tiles(), stage.barrier());
            let kc = (kb * BK) as i32;
            // SAFETY: maps per the kernel contract (A's box {BK, HALF}, the
            // tail maps' boxes the tail's rows); the stage is free in both
            // CTAs (its empty barrier counts both CTAs' consumers) and its
            // full barrier expects these bytes here, the peer's half of A
            // included.
            unsafe {
                if a_rows == bm {
                    load_b_tile::<u8, BM, HALF, { BK as usize }, CLUSTER>(
                        tma_a(),
                        smem_field!(st, Stage<BM, BN>, a),
                        bar,
                        kc,
                        tm * bm,
                        work.rank,
                    );
                } else {
                    load_2d(
                        tma_a_tail(),
                        smem_field!(st, Stage<BM, BN>, a),
                        bar,
                        kc,
                        (tm * bm) as i32,
                    );
                }
                load_a_scales::<BM, BN, { BK as usize }, _>(
                    st,
                    bar,
                    (tma_sa, tma_sa_tail),
                    a_rows,
                    tm * bm,
                    kb,
                    sa_ld,
                );
                if b_rows != 0 {
                    load_2d(
                        tma_b(),
                        smem_field!(st, Stage<BM, BN>, b),
                        bar,
                        kc,
                        (tn * bn) as i32,
                    );
                }
            }
        }
    }
    producer.drain();
}
