//! Hopper blockwise-scaled FP8 GEMM (DeepSeek-V3 style):
//! `D = (A ⊙ Sa) · (B ⊙ Sb)ᵀ`, persistent and warp-specialized.
//!
//! * A: M×K e4m3 row-major (K-major); B: N×K e4m3 (K-major); D: M×N bf16
//!   row-major; fp32 accumulation.
//! * Scales (f32): `Sa` is `[K/128, M]` (M contiguous, one scale per row of A
//!   and 128-wide K block); `Sb` is `[⌈N/128⌉, K/128]` (one scale per 128×128
//!   block of B).
//! * CTA tile BM×BN×128 (128 fp8 = 128 bytes of K per row: exactly one
//!   128-byte swizzle atom): 128×128 with 6 stages, 128×64 with 8
//!   stages (twice the CTAs, for small M; BN divides 128, so a tile has one
//!   B scale per K block), 128×192 with 5 stages (one partial; a tile
//!   straddles two B-scale blocks), or 256×128 with 4 stages (each consumer
//!   warpgroup computes two 64-row waves, see below; the fastest per FLOP),
//!   of `InputTilePipeline<BlockwiseFP8TilePayload<BM, BN, 128>>`, 384
//!   threads:
//!   - warpgroup 0 (registers released to 40): warp 0's elected lane is the
//!     producer. Per stage it TMA-loads A (128×128 bytes), B (BN×128 bytes)
//!     and the stage's 128 A scales (`a_scales: Tile<f32, 1, 128>`) onto one
//!     `full` barrier whose expect-tx count is the payload's `TMA_BYTES`.
//!     The A scales come through a rank-2 map over `[K/128, M4]` (box
//!     {128, 1} at (m0, kb)), where `M4` is the row pitch in floats: M when
//!     M is a multiple of 4, otherwise the host passes a zero-padded copy
//!     (TMA needs 16-byte row strides; it also faults on a rank-1 box that
//!     starts at an address that is not 16-byte aligned). The ragged last
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
//!       (3 × BN/2 accumulator registers per thread);
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
//! * `_c2`: clusters of 2 CTAs along M; each CTA loads half of the shared
//!   128-row B tile and multicasts it to both, so the empty barriers count
//!   both CTAs' consumer warpgroups (as in `gemm_bf16.rs`).
//! * Persistent grid: work unit `u` (a tile, or a cluster's tiles) goes to
//!   CTA (cluster) `u mod grid`, in grouped order.
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

use crate::gemm_common::{
    ClusterWork, StageDescriptors, StreamKFixup, a_rows_loaded, load_b_tile, pack_bf16x2,
    release_stage, stream_k_fixup, swizzled64,
};
use baton::arch::sm90::tma::{
    TensorMap, load_2d, prefetch_tensormap, store_2d, store_commit_group, store_wait_group,
    store_wait_group_read,
};
use baton::arch::sm90::wgmma::{
    self, SplitDescriptor,
    ops::{mma_m64n64k32_f32_e4m3, mma_m64n128k32_f32_e4m3, mma_m64n192k32_f32_e4m3},
};
use baton::arch::sm90::{
    cluster_sync, dynamic_smem, elect_one, fence_proxy_async_shared, ld_shared_u32,
    named_barrier_sync, st_shared_u32, sync_threads, thread_idx_x, warp_idx,
};
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{InputConsumer, InputTilePipeline};
use core::arch::asm;

use baton_kernels_abi::gemm_fp8::{self as abi, Fp8Smem, Payload, SUB_COLS, SUB_ROWS, Stage};
pub use baton_kernels_abi::gemm_fp8::{BK, WAVE_M};
use baton_kernels_abi::gemm_params::{GemmFp8Params, StreamKParams};
const CONSUMER_WARPGROUPS: u32 = 2;
/// Tiles along M grouped together for L2 reuse.
const GROUP_M: u32 = 8;

/// `ld.global.nc.f32`: a read-only global load.
///
/// # Safety
/// `p` is a valid global address of an f32 that nothing writes during the
/// kernel.
#[inline(always)]
unsafe fn ld_global_nc_f32(p: *const f32) -> f32 {
    let r: f32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("ld.global.nc.f32 {r}, [{p}];", r = out(reg32) r, p = in(reg64) p as u64, options(pure, readonly, nostack))
    };
    r
}

/// `fma.rn.f32`: `a · b + c` with one rounding.
#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    let r: f32;
    // SAFETY: pure arithmetic.
    unsafe {
        asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    r
}

/// Promotion of one K block: `acc += partial × a_scale[row] × b_scale`,
/// with `scales = (a_scale[row], a_scale[row + 8], b_scale_lo, b_scale_hi)`;
/// registers 4Q + 2H (+1) of a `wgmma` accumulator hold row + 8H, columns
/// 8Q + 2(lane % 4) (+1). Columns from `8 · SPLIT` on lie in the next
/// 128-wide B-scale block (`b_scale_hi`): a 192-wide tile straddles two
/// (SPLIT = 16 or 8, by the tile's offset); `SPLIT ≥ ACC / 4`: one block.
#[inline(always)]
fn promote<const ACC: usize, const SPLIT: u32>(
    acc: &mut [f32; ACC],
    partial: &[f32; ACC],
    (sa0, sa1, sb_lo, sb_hi): (f32, f32, f32, f32),
) {
    let (s0, s1) = (sa0 * sb_lo, sa1 * sb_lo);
    let (h0, h1) = if (SPLIT as usize) < ACC / 4 {
        (sa0 * sb_hi, sa1 * sb_hi)
    } else {
        (s0, s1)
    };
    baton::unroll!(Q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] {
        if (Q as usize) < ACC / 4 {
            let (r0, r1) = if Q < SPLIT { (s0, s1) } else { (h0, h1) };
            baton::unroll!(R in [0, 1, 2, 3] {
                let i = (4 * Q + R) as usize;
                acc[i] = fma(partial[i], if R < 2 { r0 } else { r1 }, acc[i]);
            });
        }
    });
}

/// Promotes with the tile's B-scale split: `split_q` is 16 or 8 for a
/// 192-wide tile at an even or odd tile column, anything for BN ≤ 128
/// (one B-scale block per tile). A warp-uniform branch picks a promotion
/// compiled for that split, so no per-register select is needed.
#[inline(always)]
fn promote_tile<const ACC: usize, const BN: usize>(
    acc: &mut [f32; ACC],
    partial: &[f32; ACC],
    scales: (f32, f32, f32, f32),
    split_q: u32,
) {
    if BN <= 128 {
        promote::<ACC, 32>(acc, partial, scales);
    } else if split_q == 16 {
        promote::<ACC, 16>(acc, partial, scales);
    } else {
        promote::<ACC, 8>(acc, partial, scales);
    }
}

macro_rules! wait_group_tied {
    ($n:literal, $acc:ident, [$($i:literal),*]) => {
        // SAFETY: warpgroup-collective wait; `acc` is tied so that no read
        // of it is scheduled before the wait.
        unsafe {
            asm!(
                concat!("wgmma.wait_group.sync.aligned ", $n, "; //", $(" {", stringify!($i), "}"),*),
                $(inout(reg32) $acc[$i]),*,
                options(nostack)
            )
        }
    };
}

/// One FP8 `wgmma` shape: a warpgroup's 64 × N block, `ACC = N / 2` fp32
/// accumulators per thread, K = 32.
trait Fp8Mma<const ACC: usize> {
    /// # Safety
    /// As [`mma_m64n128k32_f32_e4m3`].
    unsafe fn mma(acc: &mut [f32; ACC], a: u64, b: u64, accumulate: bool);
    /// `wgmma.wait_group N` (N = 0 or 1) with `acc` (the partial whose MMAs
    /// it retires) tied as an in-out operand: LLVM cannot hoist reads of
    /// `acc` above the wait.
    fn wait<const N: u32>(acc: &mut [f32; ACC]);
}

struct N192;
struct N128;
struct N64;

impl Fp8Mma<64> for N128 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n128k32_f32_e4m3(acc, a, b, accumulate) }
    }
    #[inline(always)]
    fn wait<const N: u32>(acc: &mut [f32; 64]) {
        if N == 0 {
            wait_group_tied!(
                0,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                    62, 63
                ]
            );
        } else {
            wait_group_tied!(
                1,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                    62, 63
                ]
            );
        }
    }
}

impl Fp8Mma<96> for N192 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 96], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n192k32_f32_e4m3(acc, a, b, accumulate) }
    }
    #[inline(always)]
    fn wait<const N: u32>(acc: &mut [f32; 96]) {
        if N == 0 {
            wait_group_tied!(
                0,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                    62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81,
                    82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95
                ]
            );
        } else {
            wait_group_tied!(
                1,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                    62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81,
                    82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95
                ]
            );
        }
    }
}

impl Fp8Mma<32> for N64 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 32], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n64k32_f32_e4m3(acc, a, b, accumulate) }
    }
    #[inline(always)]
    fn wait<const N: u32>(acc: &mut [f32; 32]) {
        if N == 0 {
            wait_group_tied!(
                0,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31
                ]
            );
        } else {
            wait_group_tied!(
                1,
                acc,
                [
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31
                ]
            );
        }
    }
}

/// Issues the 4 `wgmma.m64nNk32` of one K block (128) into `acc`,
/// overwriting it (scale-d = 0 on the first).
#[inline(always)]
fn mma_k_block<M: Fp8Mma<ACC>, const ACC: usize>(
    acc: &mut [f32; ACC],
    (da, db): (SplitDescriptor, SplitDescriptor),
) {
    wgmma::fence();
    baton::unroll!(KK in [0, 1, 2, 3] {
        // SAFETY: the stage is loaded (waited) and stays unreleased until
        // wait_group retires these MMAs; `acc` is not touched meanwhile.
        unsafe { M::mma(acc, da.advance(KK * 32).join(), db.advance(KK * 32).join(), KK > 0) };
    });
    wgmma::commit_group();
}

macro_rules! fp8_entry {
    ($(#[$doc:meta])* $spec:path, $name:ident, $mma:ty, $bm:literal, $bn:literal, $acc:literal, $stages:literal, $double:literal, $cluster:literal) => {
        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            pub fn $name(p: GemmFp8Params) {
                let GemmFp8Params { tma_a, tma_b, tma_sa, tma_d, tma_a_tail, tma_sa_tail, b_scales, m, n, k, tail_rows, stream_k: StreamKParams { partials: sk_partials, flags: sk_flags, epoch: sk_epoch, min_segment: sk_min_segment, extra_waves: sk_extra_waves } } = p;
                const { assert!($spec.dynamic_smem_bytes as usize == core::mem::size_of::<Fp8Smem<$bm, $bn, $stages>>(), "the spec's shared memory is not this entry's layout") };
                // SAFETY: forwarded to the kernel's contract.
                let sk = unsafe { StreamKFixup::new(sk_partials, sk_flags, sk_epoch) };
                // SAFETY: forwarded to the kernel's contract.
                unsafe {
                    gemm::<$mma, $bm, $bn, $acc, $stages, $double, $cluster>(
                        (tma_a, tma_b, tma_sa, tma_d),
                        (tma_a_tail, tma_sa_tail, tail_rows),
                        b_scales, m, n, k, sk, (sk_min_segment, sk_extra_waves),
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
    /// `size_of::<Fp8Smem<BM, BN, STAGES>>()` bytes of dynamic shared memory (the host's table;
    /// checked by a test against the PTX).
    ///
    /// # Safety
    /// The tensor maps (in global memory) describe: with 128-byte swizzle, A
    /// (u8, dims {K, M}, box {128, 128}) and B (u8, dims {K, N}, box {128, 128});
    /// the A scales (f32, dims {M4, K/128} with M4 ≥ M a multiple of 4 and
    /// zeros in columns M.., box {128, 1}, no swizzle);
    /// with 64-byte swizzle, D (bf16, dims {N, M}, box {32, 64}). `b_scales`
    /// points at `⌈N/128⌉ · K/128` f32 in global memory; K is a positive
    /// multiple of 128. `tail_rows` is `M mod BM`; when it is not 0 the tail
    /// maps describe the same A and A scales with boxes of `tail_rows` rows
    /// and `tail_rows` rounded up to 4 floats (the last tile row loads only
    /// those), otherwise they are never read.
    ///
    /// Stream-K (`sk_min_segment > 0`): the units left after the last full
    /// wave (+ `sk_extra_waves` full waves) are split along K across all
    /// workers
    /// (`StreamKSchedule`), segments of at least `sk_min_segment` K blocks;
    /// `sk_partials` then holds `2 · grid · 64 · BN` floats and `sk_flags`
    /// `2 · grid` `u32`s (zeroed once), and `sk_epoch ≠ 0` differs from the
    /// previous launch's on these buffers. With `sk_min_segment == 0` they are
    /// never touched (may be null).
    abi::GEMM_128X128,
    baton_gemm_fp8_blockwise_128x128,
    N128, 128, 128, 64, 6, false, 1
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
    N128, 128, 128, 64, 6, true, 1
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
    N128, 128, 128, 64, 6, true, 2
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
    N64, 128, 64, 32, 8, true, 1
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
    N192, 128, 192, 96, 5, false, 1
);

fp8_entry!(
    /// 256×128×128 tiles, 4 stages: each consumer warpgroup computes two
    /// 64-row waves of the tile (rows `64·wg` and `128 + 64·wg`), one after
    /// the other into one partial accumulator (`wait_group<0>`, promotion
    /// into that wave's main accumulators: 64 + 64 main + 64 partial
    /// registers per thread); the other warpgroup's MMAs keep the tensor
    /// core busy during a promotion. A quarter less operand traffic per FLOP
    /// than 128×128 (each B tile feeds twice the rows). No stream-K (the
    /// stream-K arguments are ignored: every tile whole).
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with A's box {128, 256}, the
    /// A scales' box {256, 1} and `size_of::<Fp8Smem<256, 128, 4>>()` bytes
    /// of dynamic shared memory.
    abi::GEMM_256X128,
    baton_gemm_fp8_blockwise_256x128,
    N128, 256, 128, 64, 4, false, 1
);

fp8_entry!(
    /// 128×256×128 tiles, 4 stages: [`baton_gemm_fp8_blockwise_256x128`]
    /// turned along N. Each consumer warpgroup computes its 64 rows in two
    /// 128-column waves (columns 0.. and 128.., each with its own B scale)
    /// into one partial accumulator, so each A tile feeds 256 columns: for
    /// small M with wide N, half the CTAs of 128×128 tiles and half the
    /// re-reads of A. No stream-K.
    ///
    /// # Safety
    /// As [`baton_gemm_fp8_blockwise_128x128`], with B's box {128, 256} and
    /// `size_of::<Fp8Smem<128, 256, 4>>()` bytes of dynamic shared memory.
    abi::GEMM_128X256,
    baton_gemm_fp8_blockwise_128x256,
    N128, 128, 256, 64, 4, false, 1
);

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
    const DOUBLE: bool,
    const CLUSTER_M: u32,
>(
    (tma_a, tma_b, tma_sa, tma_d): (
        *const TensorMap,
        *const TensorMap,
        *const TensorMap,
        *const TensorMap,
    ),
    (tma_a_tail, tma_sa_tail, tail_rows): (*const TensorMap, *const TensorMap, u32),
    b_scales: *const f32,
    m: u32,
    n: u32,
    k: u32,
    fixup: StreamKFixup,
    (sk_min_segment, sk_extra_waves): (u32, u32),
) {
    const {
        assert!(
            CLUSTER_M == 1 || (CLUSTER_M == 2 && BN == 128),
            "clusters: 128-wide B tiles shared by 2 CTAs"
        );
        assert!(
            (BM == 128 && BN <= 192)
                || (BM == 256 && BN <= 128 && !DOUBLE && CLUSTER_M == 1)
                || (BM == 128 && BN == 256 && ACC == 64 && !DOUBLE && CLUSTER_M == 1),
            "two-wave tiles (256x128, 128x256): one partial, one B scale per wave"
        );
    };
    // Waves per consumer warpgroup: two 64-row waves (256-row tiles), two
    // 128-column waves (256-wide tiles), or one.
    let (m_waves, n_waves) = (BM / WAVE_M as usize, if BN == 256 { 2 } else { 1 });
    let waves = m_waves * n_waves;
    // Columns of one wave.
    let wave_n = BN / n_waves;
    // Stream-K splits 128-row tiles only.
    let (sk_min_segment, sk_extra_waves) = if waves == 1 {
        (sk_min_segment, sk_extra_waves)
    } else {
        (0, 0)
    };
    // SAFETY: launched with size_of::<Fp8Smem<BM, BN, STAGES>>() of dynamic shared memory
    // (the kernel traps otherwise).
    let smem: SharedRef<'static, Fp8Smem<BM, BN, STAGES>> =
        unsafe { dynamic_smem::<Fp8Smem<BM, BN, STAGES>>() };
    let input = InputTilePipeline::<Payload<BM, BN>, STAGES>::new(
        smem_field!(smem, Fp8Smem<BM, BN, STAGES>, input),
        c"gemm-fp8-mainloop",
    );
    let d_tiles = smem_field!(smem, Fp8Smem<BM, BN, STAGES>, d_tiles);
    if thread_idx_x() == 0 {
        // Fetch the tensor maps into the descriptor cache while the
        // barriers are set up (the first TMA of each would wait for it).
        // SAFETY: the maps are valid per the kernel contract.
        unsafe {
            prefetch_tensormap(tma_a);
            prefetch_tensormap(tma_b);
            prefetch_tensormap(tma_sa);
            prefetch_tensormap(tma_d);
            if tail_rows != 0 {
                prefetch_tensormap(tma_a_tail);
                prefetch_tensormap(tma_sa_tail);
            }
        }
        // Empty barriers: one arrival per consumer warpgroup of every CTA
        // whose B multicast writes into the stage (the whole cluster).
        input.init(CONSUMER_WARPGROUPS * CLUSTER_M);
    }
    if CLUSTER_M > 1 {
        // Peers arrive on and multicast into our barriers: they must all be
        // initialized cluster-wide first.
        cluster_sync();
    } else {
        sync_threads();
    }

    // Work units: CLUSTER_M vertically adjacent tiles sharing one B tile;
    // CTA `rank` of a cluster takes tile row `unit_row * CLUSTER_M + rank`
    // (a row past M loads no A and is clipped by the store).
    let (bm, bn) = (BM as u32, BN as u32);
    let n_blocks = n.div_ceil(128);
    // Rows of A (and of its scales, rounded up to 4 floats: 16 bytes for
    // TMA) per tile row: `a_rows_loaded`.
    let tiles_m = m.div_ceil(bm);
    let k_blocks = k / BK;
    // Every role walks the same schedule (data-parallel units, then this
    // worker's stream-K share).
    let work = ClusterWork::<CLUSTER_M>::new(
        tiles_m,
        n.div_ceil(bn),
        k_blocks,
        GROUP_M,
        (sk_min_segment, sk_extra_waves),
    );
    let (sched, rank) = (work.sched, work.rank);
    let warpgroup = warp_idx() / 4;

    if warpgroup == 0 {
        wgmma::setmaxnreg_dec::<40>();
        if warp_idx() == 0 && elect_one() {
            let mut producer = input.producer();
            for seg in work.segments() {
                let (tm, tn) = work.tile_of(seg.unit);
                let a_rows = a_rows_loaded(tm, tiles_m, tail_rows, bm);
                let (map_a, map_sa) = if a_rows == bm {
                    (tma_a, tma_sa)
                } else {
                    (tma_a_tail, tma_sa_tail)
                };
                let trimmed_bytes = a_rows * BK + bn * BK + 4 * a_rows.next_multiple_of(4);
                for kb in seg.k_begin..seg.k_end {
                    let stage = producer.acquire();
                    if a_rows == bm {
                        stage.arrive_expect_tx();
                    } else {
                        stage.arrive_expect_tx_bytes(trimmed_bytes);
                    }
                    let st = stage.tiles();
                    let (kc, bar) = ((kb * BK) as i32, stage.barrier());
                    // SAFETY: maps per the kernel contract; the stage is ours
                    // and its full barrier expects Payload::TMA_BYTES (with
                    // a trimmed A: trimmed_bytes).
                    unsafe {
                        if a_rows != 0 {
                            load_2d(
                                map_a,
                                smem_field!(st, Stage<BM, BN>, a),
                                bar,
                                kc,
                                (tm * bm) as i32,
                            );
                            load_2d(
                                map_sa,
                                smem_field!(st, Stage<BM, BN>, a_scales),
                                bar,
                                (tm * bm) as i32,
                                kb as i32,
                            );
                        }
                        load_b_tile::<u8, BN, 64, { BK as usize }, CLUSTER_M>(
                            tma_b,
                            smem_field!(st, Stage<BM, BN>, b),
                            bar,
                            kc,
                            tn * bn,
                            rank,
                        );
                    }
                }
            }
            producer.drain();
        }
    } else {
        wgmma::setmaxnreg_inc::<232>();
        let wg = (warpgroup - 1) as usize;
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
        let descs = StageDescriptors::new(
            smem_field!(st0, Stage<BM, BN>, a).addr() + (wg * 64 * BK as usize) as u32,
            smem_field!(st0, Stage<BM, BN>, b).addr(),
            core::mem::size_of::<Stage<BM, BN>>() as u32,
        );
        for seg in work.segments() {
            let (tm, tn) = work.tile_of(seg.unit);
            // This tile's rows of B scales: one 128-wide n-block when BN
            // divides 128; a 192-wide tile at column c0 = 192·tn covers
            // n-block c0/128 up to column 128 − c0 mod 128 (128 or 64) of
            // the tile and the next n-block after it (clamped to the last
            // n-block: columns past N are clipped by the store).
            let c0 = tn * bn;
            let (b_lo, b_hi) = (c0 / 128, (c0 / 128 + 1).min(n_blocks - 1));
            let split_q = (128 - c0 % 128) / 8;
            // SAFETY: b_lo, b_hi < ⌈N/128⌉: in bounds per the contract.
            let bs_row = unsafe { b_scales.add((b_lo * k_blocks) as usize) };
            // SAFETY: as above.
            let bs_row_hi = unsafe { b_scales.add((b_hi * k_blocks) as usize) };
            // SAFETY: as above.
            let mut acc: [f32; ACC] = unsafe { core::mem::zeroed() };
            // Acquires K block `kb`'s stage, reads its scales (A from the
            // stage, B from global memory: consumed only after the MMAs) and
            // issues its MMAs into `$p`.
            macro_rules! issue {
                ($p:ident, $kb:expr) => {{
                    let stage = consumer.acquire_stage();
                    let st = stage.tiles();
                    let sa = smem_field!(st, Stage<BM, BN>, a_scales).addr();
                    // SAFETY: the stage is full (waited); rows < 128; kb <
                    // K/128 (contract).
                    let scales = unsafe {
                        (
                            f32::from_bits(ld_shared_u32(sa + 4 * scale_row)),
                            f32::from_bits(ld_shared_u32(sa + 4 * (scale_row + 8))),
                            ld_global_nc_f32(bs_row.add($kb as usize)),
                            if BN > 128 {
                                ld_global_nc_f32(bs_row_hi.add($kb as usize))
                            } else {
                                0.0
                            },
                        )
                    };
                    mma_k_block::<M, ACC>(&mut $p, descs.at(stage.stage()));
                    // The stage's scales were read before its MMAs were
                    // issued; it is handed back once they retired.
                    (stage.defer_release(), scales)
                }};
            }
            // The second wave's main accumulators (two-wave tiles; unused,
            // and so eliminated, otherwise).
            // SAFETY: all-zero is a valid [f32; ACC].
            let mut acc_hi: [f32; ACC] = unsafe { core::mem::zeroed() };
            if waves == 2 {
                // Per K block: wave 0's MMAs, promotion, wave 1's MMAs into
                // the same partial, stage release, promotion. Wave 1 is the
                // next 128 rows of A (256-row tiles) or the next 128 rows of
                // B with the next n-block's B scale (256-wide tiles). All
                // scales are read before the stage goes back.
                for kb in seg.k_begin..seg.k_end {
                    let stage = consumer.acquire_stage();
                    let st = stage.tiles();
                    let sa = smem_field!(st, Stage<BM, BN>, a_scales).addr();
                    // SAFETY: the stage is full (waited); rows < BM; kb <
                    // K/128 (contract); b_hi < ⌈N/128⌉.
                    let (sb, a) = unsafe {
                        (
                            [
                                ld_global_nc_f32(bs_row.add(kb as usize)),
                                if n_waves == 2 {
                                    ld_global_nc_f32(bs_row_hi.add(kb as usize))
                                } else {
                                    0.0
                                },
                            ],
                            if m_waves == 2 {
                                [
                                    ld_shared_u32(sa + 4 * scale_row),
                                    ld_shared_u32(sa + 4 * (scale_row + 8)),
                                    ld_shared_u32(sa + 4 * (scale_row + WAVE_M)),
                                    ld_shared_u32(sa + 4 * (scale_row + WAVE_M + 8)),
                                ]
                                .map(f32::from_bits)
                            } else {
                                let a = [
                                    ld_shared_u32(sa + 4 * scale_row),
                                    ld_shared_u32(sa + 4 * (scale_row + 8)),
                                ]
                                .map(f32::from_bits);
                                [a[0], a[1], a[0], a[1]]
                            },
                        )
                    };
                    let (da, db) = descs.at(stage.stage());
                    let (wave1, sb1) = if m_waves == 2 {
                        ((da.advance(WAVE_M * BK), db), sb[0])
                    } else {
                        ((da, db.advance(128 * BK)), sb[1])
                    };
                    mma_k_block::<M, ACC>(&mut p0, (da, db));
                    M::wait::<0>(&mut p0);
                    promote_tile::<ACC, 128>(&mut acc, &p0, (a[0], a[1], sb[0], 0.0), split_q);
                    mma_k_block::<M, ACC>(&mut p0, wave1);
                    M::wait::<0>(&mut p0);
                    release_stage::<CLUSTER_M>(stage.defer_release(), signaller);
                    promote_tile::<ACC, 128>(&mut acc_hi, &p0, (a[2], a[3], sb1, 0.0), split_q);
                }
            } else if DOUBLE {
                // K block kb + 1's MMAs are in flight while kb's partial is
                // promoted; the partials alternate between p0 and p1.
                let (mut pending, mut scales) = issue!(p0, seg.k_begin);
                let mut kb = seg.k_begin + 1;
                loop {
                    if kb >= seg.k_end {
                        M::wait::<0>(&mut p0);
                        release_stage::<CLUSTER_M>(pending, signaller);
                        promote_tile::<ACC, BN>(&mut acc, &p0, scales, split_q);
                        break;
                    }
                    let (next_pending, next_scales) = issue!(p1, kb);
                    M::wait::<1>(&mut p0);
                    release_stage::<CLUSTER_M>(pending, signaller);
                    promote_tile::<ACC, BN>(&mut acc, &p0, scales, split_q);
                    (pending, scales) = (next_pending, next_scales);
                    kb += 1;
                    if kb >= seg.k_end {
                        M::wait::<0>(&mut p1);
                        release_stage::<CLUSTER_M>(pending, signaller);
                        promote_tile::<ACC, BN>(&mut acc, &p1, scales, split_q);
                        break;
                    }
                    let (next_pending, next_scales) = issue!(p0, kb);
                    M::wait::<1>(&mut p1);
                    release_stage::<CLUSTER_M>(pending, signaller);
                    promote_tile::<ACC, BN>(&mut acc, &p1, scales, split_q);
                    (pending, scales) = (next_pending, next_scales);
                    kb += 1;
                }
            } else {
                for kb in seg.k_begin..seg.k_end {
                    let (pending, scales) = issue!(p0, kb);
                    M::wait::<0>(&mut p0);
                    release_stage::<CLUSTER_M>(pending, signaller);
                    promote_tile::<ACC, BN>(&mut acc, &p0, scales, split_q);
                }
            }

            // Stream-K fixup: a contributor hands its partial to the unit's
            // finalizer and has no epilogue (`continue`); a finalizer of a
            // split unit adds the contributors' partials first.
            if waves == 1 {
                stream_k_fixup!(fixup, sched, seg, CLUSTER_M, rank, wg as u32, tid, acc, ACC);
            }

            // Epilogue: per wave, wave_n / 32 sub-tiles of 64 rows × 32
            // columns (an even count: the buffers alternate across waves too).
            let d_buf = d_tiles.at(wg);
            baton::unroll!(W in [0, 1] {
              if (W as usize) < waves {
                let acc = if W == 0 { &acc } else { &acc_hi };
                baton::unroll!(J in [0, 1, 2, 3, 4, 5] {
                  if (J as usize) < wave_n / SUB_COLS {
                    let buf = d_buf.at((J % 2) as usize);
                    // Buffer J%2 is free once the store issued from it two
                    // sub-tiles ago has finished reading it.
                    if signaller {
                        store_wait_group_read::<1>();
                    }
                    named_barrier_sync(1 + wg as u32, 128);
                    baton::unroll!(Q in [0, 1, 2, 3] {
                        baton::unroll!(H in [0, 1] {
                            // Registers 16J + 4Q + 2H (+1): row + 8H, columns
                            // 8Q + 2(lane % 4) (+1) of sub-tile J.
                            let i = (16 * J + 4 * Q + 2 * H) as usize;
                            let r = row + 8 * H;
                            let off = swizzled64(r, 4 * Q + lane % 4);
                            // SAFETY: buffer J%2 is free (barrier above); in bounds.
                            unsafe { st_shared_u32(buf.addr() + off, pack_bf16x2(acc[i], acc[i + 1])) };
                        });
                    });
                    fence_proxy_async_shared();
                    named_barrier_sync(1 + wg as u32, 128);
                    if signaller {
                        let (wm, wn) = if m_waves == 2 { (W, 0) } else { (0, W) };
                        let col = (tn * bn + wn * 128) as i32 + (J as usize * SUB_COLS) as i32;
                        let r0 = (tm * bm + wm * WAVE_M) as i32 + (wg * SUB_ROWS) as i32;
                        // SAFETY: D map per the contract; the buffer holds the
                        // finished sub-tile (fenced for the async proxy).
                        unsafe { store_2d(tma_d, buf, col, r0) };
                        store_commit_group();
                    }
                  }
                });
              }
            });
        }
        if signaller {
            store_wait_group::<0>();
        }
    }
}
