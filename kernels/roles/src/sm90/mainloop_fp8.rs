//! The blockwise-scaled FP8 `wgmma` main loops of a Hopper GEMM consumer
//! warpgroup (DeepSeek-V3 style): per K block (128) of a segment, 4 ×
//! `wgmma.m64nNk32` e4m3 into a fresh partial accumulator, the stage
//! released once they retired, then [promotion](super::promotion) into the
//! main accumulators with the block's A-row and B-block scales.
//!
//! On Hopper the partial lives in the issuing warpgroup's registers, so the
//! "per-K stage" between MMA and promotion is the partial register array
//! itself: `wgmma.wait_group` is its `full` wait and the next K block's
//! first `wgmma` (after `wgmma.fence`) its `empty` side; with two partials
//! (`DOUBLE`) a two-stage ring in registers.

use super::fp8_a_scales::a_scale_offset;
use super::mainloop_bf16::release_stage;
use super::promotion::{promote, promote_tile, straddles_scale_blocks};
use super::stage_descriptors::StageDescriptors;
use super::wgmma_wait::{
    wait_group_tied_16, wait_group_tied_28, wait_group_tied_32, wait_group_tied_44,
    wait_group_tied_48, wait_group_tied_64, wait_group_tied_96, wait_group_tied_128,
};
use baton::arch::ptx::ld_shared_u32;
use baton::arch::ptx::wgmma::{
    self, SplitDescriptor,
    ops::{
        mma_m64n32k32_f32_e4m3, mma_m64n56k32_f32_e4m3, mma_m64n64k32_f32_e4m3,
        mma_m64n88k32_f32_e4m3, mma_m64n96k32_f32_e4m3, mma_m64n128k32_f32_e4m3,
        mma_m64n192k32_f32_e4m3, mma_m64n256k32_f32_e4m3,
    },
};
use baton::pipeline::PendingRelease;
use baton::smem_field;
use baton::tile_pipeline::{
    A_SCALE_BOX_STRIDE, BlockwiseFP8PaddedStage, BlockwiseFP8PaddedTilePayload, InputConsumer,
};
use core::arch::asm;

/// K per stage (fp8 elements = bytes), also the scale block along K.
pub const BK: u32 = 128;
/// Rows (M) of one `wgmma` wave of the two consumer warpgroups (64 each);
/// a 256-row tile is two waves.
pub const WAVE_M: u32 = 128;

/// [`two_wave_mainloop`]'s `SPLIT` when the promotion chooses its B-scale
/// split per K block ([`promote_tile`]).
pub const RUNTIME_SPLIT: u32 = u32::MAX;

/// The input payload of an FP8 GEMM with `BM × BN` tiles.
pub type Fp8Payload<const BM: usize, const BN: usize> =
    BlockwiseFP8PaddedTilePayload<BM, BN, { BK as usize }>;
/// One stage of [`Fp8Payload`]: A, B and the A-scale boxes of one K block.
pub type Fp8Stage<const BM: usize, const BN: usize> =
    BlockwiseFP8PaddedStage<BM, BN, { BK as usize }>;

/// `ld.global.nc.f32`: a read-only global load.
///
/// # Safety
/// `p` is a valid global address of an f32 that nothing writes during the
/// kernel.
///
/// ```ignore
/// let sb = unsafe { ld_global_nc_f32(b_scales.add(kb as usize)) };
/// ```
#[inline(always)]
pub unsafe fn ld_global_nc_f32(p: *const f32) -> f32 {
    let r: f32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("ld.global.nc.f32 {r}, [{p}];", r = out(reg32) r, p = in(reg64) p as u64, options(pure, readonly, nostack))
    };
    r
}

/// `prefetch.global.L2`: brings the 128-byte line holding `p` into L2.
///
/// # Safety
/// `p` is a global address (a prefetch of any address does not fault, but
/// the state space must be global).
///
/// ```ignore
/// unsafe { prefetch_l2(b_scales.add(row * k_blocks) as *const u8) };
/// ```
#[inline(always)]
pub unsafe fn prefetch_l2(p: *const u8) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("prefetch.global.L2 [{p}];", p = in(reg64) p as u64, options(nostack, preserves_flags))
    };
}

/// Prefetches into L2 the B-scale rows (`K/128` floats each, global,
/// read-only) that a tile of `BN` columns at column `c0` reads: the
/// 128-wide n-blocks `c0 / 128 ..= (c0 + BN − 1) / 128`, clamped to the
/// last one. Called by the producer when it starts a tile, up to STAGES K
/// blocks before the consumers' first `ld.global.nc` of these rows: after
/// an L2 flush (and for each new tile column) a row's lines are DRAM
/// misses, one every 8 K blocks along the row, which the consumers' one
/// block of look-ahead hides only in part; prefetched, those loads hit L2.
/// DeepGEMM gets the same effect by copying the tile's B scales into
/// shared memory at the start of each tile.
///
/// # Safety
/// `b_scales` points at `n_blocks · k_blocks` floats of global memory;
/// `n_blocks ≥ 1`.
///
/// ```ignore
/// unsafe { prefetch_tile_b_scales::<128>(b_scales, tn * 128, n_blocks, k_blocks) };
/// ```
#[inline(always)]
pub unsafe fn prefetch_tile_b_scales<const BN: usize>(
    b_scales: *const f32,
    c0: u32,
    n_blocks: u32,
    k_blocks: u32,
) {
    let last = n_blocks - 1;
    let (lo, hi) = ((c0 / 128).min(last), ((c0 + BN as u32 - 1) / 128).min(last));
    let mut row = lo;
    while row <= hi {
        // SAFETY: row < n_blocks (clamped): the row is in bounds.
        let start = unsafe { b_scales.add((row * k_blocks) as usize) } as u64;
        let end = start + 4 * k_blocks as u64;
        let mut line = start & !127;
        while line < end {
            // SAFETY: a line of the row (global memory, per the contract).
            unsafe { prefetch_l2(line as *const u8) };
            line += 128;
        }
        row += 1;
    }
}

/// One FP8 `wgmma` shape: a warpgroup's 64 × N block, `ACC = N / 2` fp32
/// accumulators per thread, K = 32.
///
/// ```ignore
/// unsafe { Fp8N128::mma(&mut partial, da, db, false) };
/// Fp8N128::wait::<0>(&mut partial);
/// ```
pub trait Fp8Mma<const ACC: usize> {
    /// Issues one `wgmma.mma_async` (no fence, no commit).
    ///
    /// # Safety
    /// As [`mma_m64n128k32_f32_e4m3`].
    unsafe fn mma(acc: &mut [f32; ACC], a: u64, b: u64, accumulate: bool);
    /// `wgmma.wait_group N` (N = 0 or 1) with `acc` (the partial whose MMAs
    /// it retires) tied as an in-out operand: LLVM cannot hoist reads of
    /// `acc` above the wait.
    fn wait<const N: u32>(acc: &mut [f32; ACC]);
}

/// `wgmma.m64n256k32` e4m3 (128 accumulators).
pub struct Fp8N256;
/// `wgmma.m64n192k32` e4m3 (96 accumulators).
pub struct Fp8N192;
/// `wgmma.m64n128k32` e4m3 (64 accumulators).
pub struct Fp8N128;
/// `wgmma.m64n96k32` e4m3 (48 accumulators): 96-wide tiles, which
/// straddle two 128-wide B-scale blocks at two of every four tile offsets
/// (columns 64.. and 96.. of a block).
pub struct Fp8N96;
/// `wgmma.m64n88k32` e4m3 (44 accumulators): 88-wide tiles (DeepGEMM's
/// width for 4096×2112: 3 waves of 256×88 on 132 SMs), which straddle two
/// B-scale blocks at any 8-column group.
pub struct Fp8N88;
/// `wgmma.m64n64k32` e4m3 (32 accumulators).
pub struct Fp8N64;
/// `wgmma.m64n56k32` e4m3 (28 accumulators): 56-wide tiles (DeepGEMM's
/// width at M = 64, N = 7168: 128 tiles of 64×56 on 132 SMs), which
/// straddle two B-scale blocks at six of every sixteen tile offsets.
pub struct Fp8N56;
/// `wgmma.m64n32k32` e4m3 (16 accumulators): the narrowest tiles, for small
/// M (four times the CTAs of 128-wide tiles).
pub struct Fp8N32;

macro_rules! fp8_mma {
    ($shape:ty, $acc:literal, $mma:ident, $wait:ident) => {
        impl Fp8Mma<$acc> for $shape {
            #[inline(always)]
            unsafe fn mma(acc: &mut [f32; $acc], a: u64, b: u64, accumulate: bool) {
                // SAFETY: forwarded.
                unsafe { $mma(acc, a, b, accumulate) }
            }
            #[inline(always)]
            fn wait<const N: u32>(acc: &mut [f32; $acc]) {
                $wait::<N>(acc)
            }
        }
    };
}
fp8_mma!(Fp8N256, 128, mma_m64n256k32_f32_e4m3, wait_group_tied_128);
fp8_mma!(Fp8N192, 96, mma_m64n192k32_f32_e4m3, wait_group_tied_96);
fp8_mma!(Fp8N128, 64, mma_m64n128k32_f32_e4m3, wait_group_tied_64);
fp8_mma!(Fp8N96, 48, mma_m64n96k32_f32_e4m3, wait_group_tied_48);
fp8_mma!(Fp8N88, 44, mma_m64n88k32_f32_e4m3, wait_group_tied_44);
fp8_mma!(Fp8N64, 32, mma_m64n64k32_f32_e4m3, wait_group_tied_32);
fp8_mma!(Fp8N56, 28, mma_m64n56k32_f32_e4m3, wait_group_tied_28);
fp8_mma!(Fp8N32, 16, mma_m64n32k32_f32_e4m3, wait_group_tied_16);

/// Issues the 4 `wgmma.m64nNk32` of one K block (128) into `acc`,
/// overwriting it (scale-d = 0 on the first): fence, 4 MMAs, commit.
///
/// ```ignore
/// mma_k_block::<Fp8N128, 64>(&mut partial, descs.at(stage.index()));
/// ```
#[inline(always)]
pub fn mma_k_block<M: Fp8Mma<ACC>, const ACC: usize>(
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

/// Where a consumer thread's scales come from in one tile: its two A-row
/// scales from each stage (`a_scales[off + scale_row]`, `[off + scale_row
/// + 8]`, and with 256-row tiles the next wave's from the second box, at
/// [`A_SCALE_BOX_STRIDE`] + the same), the tile's B scales from global
/// memory (`bs_row[kb]`, and `bs_row_hi[kb]` for the columns past the
/// tile's first 128-wide B-scale block). `off = (kb · sa_ld) mod 4` is the
/// place of the wave's first scale in the 16-byte granule its box starts
/// on ([`a_scale_box_start`](baton::tile_pipeline::a_scale_box_start):
/// the tile's first row is a multiple of 4, so only `kb · sa_ld` counts,
/// and it is the same for both waves).
///
/// ```ignore
/// let scales = Fp8Scales { scale_row: wg * 64 + row, sa_ld, bs_row, bs_row_hi };
/// ```
#[derive(Clone, Copy)]
pub struct Fp8Scales {
    /// This thread's first accumulator row in the tile (`64·wg + row`).
    pub scale_row: u32,
    /// Floats between the A scales of consecutive K blocks.
    pub sa_ld: u32,
    /// The tile's first B-scale row (`K/128` floats, global, read-only).
    pub bs_row: *const f32,
    /// The next B-scale row (clamped to the last), for columns past the
    /// first block.
    pub bs_row_hi: *const f32,
}

/// The accumulators an FP8 main loop writes: the tile's main
/// accumulators (`acc`, and `acc_hi` for a two-wave tile's second wave)
/// and the partials the MMAs write (`p0`, and `p1` with `DOUBLE`).
///
/// ```ignore
/// let accs = Fp8Accumulators { acc: &mut acc, acc_hi: &mut acc_hi, p0: &mut p0, p1: &mut p1 };
/// ```
pub struct Fp8Accumulators<'r, const ACC: usize> {
    /// Main accumulators (wave 0).
    pub acc: &'r mut [f32; ACC],
    /// Main accumulators of wave 1 (two-wave tiles only).
    pub acc_hi: &'r mut [f32; ACC],
    /// First partial.
    pub p0: &'r mut [f32; ACC],
    /// Second partial (`DOUBLE` only).
    pub p1: &'r mut [f32; ACC],
}

/// Whether the `DOUBLE` main loop of `BN`-wide tiles builds its stage
/// descriptors per stage of the ring ([`StageDescriptors::at_pinned`]; the
/// kernel then takes its warpgroup index through `warp_uniform`, so that
/// the stage-0 descriptors are warp-uniform), and with an even ring runs
/// one copy of the K block per stage ([`rotates_stages`]). The one source
/// of this choice for the kernels and the main loop.
///
/// Measured on the H100 (BENCHMARKS.md, session 13 FP8, L2 flushed, main
/// and this form interleaved in one call), with the stage chosen per K
/// block by a `match`: 128×32 tiles +1.4 to +2.1 % (64/128 × 4096 × 7168,
/// 128 × 2112 × 7168; `wgmma.m64n32k32` is short, so the `R2UR`s between a
/// K block's four `wgmma`s idled the tensor core); 128×64, 128×96 and
/// 128×128 tiles within ±1 %, so they kept the per-thread index. Session
/// 26 (H200, DeepGEMM's method, base / new alternating, best of two) with
/// the ring unrolled instead of the `match` (whose constant-bank load and
/// indirect branch held 120 of 1507 stall samples at 64×4096×7168): every
/// `_db` width, 128×32 +3.1 to +4.4 % (4 rows), the others −0.7 to +2.0 %
/// (8 rows, geometric mean +0.5 %).
///
/// ```ignore
/// let wg = if pins_stage_descriptors(BN) { warp_uniform(wg) } else { wg };
/// ```
pub const fn pins_stage_descriptors(bn: usize) -> bool {
    bn <= 128
}

/// Acquires K block `kb`'s stage, reads its scales (A from the stage, B
/// from global memory: consumed only after the MMAs) and issues its MMAs
/// into `p`. The stage's scales are read before its MMAs are issued; it
/// is handed back (the returned release) once they retired.
///
/// `pinned` (a constant at every call): the stage's descriptors are built
/// per stage of the ring ([`StageDescriptors::at_pinned`] in one copy of
/// the K block per stage, selected by the stage index before the wait),
/// on the uniform datapath when `descs` is warp-uniform; otherwise from
/// the per-thread stage index ([`StageDescriptors::at`]).
///
/// # Safety
/// `kb < K/128`; `scales` per [`Fp8Scales`] (in bounds).
#[inline(always)]
unsafe fn issue<
    'a,
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
>(
    consumer: &mut InputConsumer<'a, Fp8Payload<BM, BN>, STAGES>,
    descs: StageDescriptors,
    sc: Fp8Scales,
    kb: u32,
    p: &mut [f32; ACC],
    pinned: bool,
    sb: Option<[f32; 2]>,
) -> (PendingRelease<'a>, (f32, f32, f32, f32)) {
    // This K block's A scales of this thread's rows: `off` on in the box
    // (once here, not in each pinned copy below).
    let sc = Fp8Scales {
        scale_row: sc.scale_row + a_scale_offset(kb, sc.sa_ld),
        ..sc
    };
    if !pinned {
        // SAFETY: forwarded.
        return unsafe {
            issue_on::<M, BM, BN, ACC, STAGES>(consumer, |stage| descs.at(stage), sc, kb, p, sb)
        };
    }
    const { assert!(STAGES <= 12, "pinned stage descriptors: at most 12 stages") };
    // One copy of the K block per stage of the ring (the stage index a
    // constant in each: its full barrier, A scales and descriptors at
    // immediate offsets), chosen before the full-barrier wait: from the
    // wait to the first `wgmma` only the descriptors' two `R2UR`s (their
    // `IADD`s run during the wait) and the scale loads remain.
    macro_rules! at {
        ($s:literal) => {
            // SAFETY: forwarded.
            unsafe {
                let pinned = descs.at_pinned($s);
                issue_on::<M, BM, BN, ACC, STAGES>(consumer, move |_| pinned, sc, kb, p, sb)
            }
        };
    }
    match consumer.index() {
        0 => at!(0),
        1 if STAGES > 1 => at!(1),
        2 if STAGES > 2 => at!(2),
        3 if STAGES > 3 => at!(3),
        4 if STAGES > 4 => at!(4),
        5 if STAGES > 5 => at!(5),
        6 if STAGES > 6 => at!(6),
        7 if STAGES > 7 => at!(7),
        8 if STAGES > 8 => at!(8),
        9 if STAGES > 9 => at!(9),
        10 if STAGES > 10 => at!(10),
        11 if STAGES > 11 => at!(11),
        // SAFETY: a consumer's stage index is < STAGES (`PipelineState`).
        _ => unsafe { core::hint::unreachable_unchecked() },
    }
}

/// [`issue`] with the stage's descriptors from `stage_descs` (called with
/// the acquired stage's index after the wait), `sc.scale_row` already
/// offset by the K block's box offset.
///
/// # Safety
/// As [`issue`].
#[inline(always)]
unsafe fn issue_on<
    'a,
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
>(
    consumer: &mut InputConsumer<'a, Fp8Payload<BM, BN>, STAGES>,
    stage_descs: impl FnOnce(u32) -> (SplitDescriptor, SplitDescriptor),
    sc: Fp8Scales,
    kb: u32,
    p: &mut [f32; ACC],
    sb: Option<[f32; 2]>,
) -> (PendingRelease<'a>, (f32, f32, f32, f32)) {
    let stage = consumer.acquire_stage();
    let st = stage.tiles();
    let sa = smem_field!(st, Fp8Stage<BM, BN>, a_scales).addr();
    // (`issue` added the box offset to `scale_row`.)
    let row = sc.scale_row;
    // The B scales: loaded ahead by the caller (`sb`), or here.
    let [sb_lo, sb_hi] = match sb {
        Some(sb) => sb,
        // SAFETY: kb < K/128 and the rows in bounds (contract).
        None => unsafe { b_scales_at::<BN>(sc, kb) },
    };
    // SAFETY: the stage is full (waited); off + rows < 132.
    let scales = unsafe {
        (
            f32::from_bits(ld_shared_u32(sa + 4 * row)),
            f32::from_bits(ld_shared_u32(sa + 4 * (row + 8))),
            sb_lo,
            sb_hi,
        )
    };
    mma_k_block::<M, ACC>(p, stage_descs(stage.index()));
    (stage.defer_release(), scales)
}

/// K block `kb`'s B scales of a `BN`-wide tile (`ld.global.nc`): from
/// the tile's first B-scale row (`bs_row`), and from the next row
/// (`bs_row_hi`) for a width that straddles two 128-wide blocks (0.0
/// otherwise).
///
/// # Safety
/// `kb < K/128`; `sc`'s B-scale rows per [`Fp8Scales`] (in bounds).
///
/// ```ignore
/// let [lo, hi] = unsafe { b_scales_at::<96>(sc, kb) };
/// ```
#[inline(always)]
unsafe fn b_scales_at<const BN: usize>(sc: Fp8Scales, kb: u32) -> [f32; 2] {
    // SAFETY: forwarded.
    unsafe {
        [
            ld_global_nc_f32(sc.bs_row.add(kb as usize)),
            if straddles_scale_blocks(BN) {
                ld_global_nc_f32(sc.bs_row_hi.add(kb as usize))
            } else {
                0.0
            },
        ]
    }
}

/// How many K blocks ahead of its use [`rotated_double_mainloop`] loads a
/// block's B scales (global memory, L2 hits after the producer's
/// prefetch): the `ld.global.nc` of block `kb + ahead` is issued with
/// block `kb`'s MMAs, so its L2 latency (hundreds of cycles under load)
/// runs under `ahead` blocks of MMAs instead of one (ncu at
/// 64×32768×512: half of the consumer's stall cycles waited on L1TEX).
/// Narrow tiles' blocks are short, so they look further ahead (the
/// 64×128 kernel's 232-register budget allows 3 at 128 wide). Measured
/// (H100, session 29 call 2, DeepGEMM's method, the plan before and after
/// in one call): 64×32768×512 +4.5 %, 64×7168×2048 +1.8 %, 64×2112×7168,
/// 64×7168×16384, 128×2112×7168 +0.5 to +0.9 %, 64×24576×1536 and
/// 64×4096×7168 ±0.2 %.
///
/// ```ignore
/// assert_eq!(b_scales_ahead(32), 8);
/// ```
pub const fn b_scales_ahead(bn: usize) -> usize {
    if bn <= 64 {
        8
    } else if bn <= 96 {
        4
    } else {
        3
    }
}
const _: () = assert!(b_scales_ahead(32) <= 8 && b_scales_ahead(128) <= 8);

/// The main loop of a two-wave tile (256×BN: `BM == 256`; 128×256:
/// `BN == 256`), as [`fp8_mainloop`] describes it, with the promotion's
/// B-scale split `SPLIT` (8-column groups before the next B-scale block)
/// compiled in, or chosen per K block from `split_q` when `SPLIT ==`
/// [`RUNTIME_SPLIT`] (`promote_tile`).
///
/// # Safety
/// As [`fp8_mainloop`].
///
/// ```ignore
/// unsafe { two_wave_mainloop::<Fp8N88, 256, 88, 44, 4, 1, 5>(consumer, descs, sc, (kb0, kb1), accs, 5, tid == 0) };
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn two_wave_mainloop<
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
    const SPLIT: u32,
>(
    consumer: &mut InputConsumer<'_, Fp8Payload<BM, BN>, STAGES>,
    descs: StageDescriptors,
    sc: Fp8Scales,
    (k_begin, k_end): (u32, u32),
    accs: Fp8Accumulators<'_, ACC>,
    split_q: u32,
    signaller: bool,
) {
    let Fp8Accumulators {
        acc, acc_hi, p0, ..
    } = accs;
    let (m_waves, n_waves) = (BM / WAVE_M as usize, if BN == 256 { 2 } else { 1 });
    let scale_row = sc.scale_row;
    // The 256-row tiles' promotion: the compiled split, or `promote_tile`.
    let promote_rows = |acc: &mut [f32; ACC], p: &[f32; ACC], scales| {
        if SPLIT == RUNTIME_SPLIT {
            promote_tile::<ACC, BN>(acc, p, scales, split_q)
        } else {
            promote::<ACC, SPLIT>(acc, p, scales)
        }
    };
    // Per K block: wave 0's MMAs, promotion, wave 1's MMAs into the
    // same partial, stage release, promotion. Wave 1 is the next 128
    // rows of A (256-row tiles) or the next 128 rows of B with the next
    // n-block's B scale (256-wide tiles). All scales are read before
    // the stage goes back.
    //
    // The B scales (global memory) are loaded one K block ahead: the
    // load's latency (a DRAM miss after an L2 flush, for the first
    // tile of a column) runs under this block's MMAs and promotions
    // instead of before wave 0's promotion. (The last block loads its
    // own scales again.)
    let b_scales_of = |kb: u32| {
        // SAFETY: called with kb < k_end ≤ K/128 (contract); b_hi <
        // ⌈N/128⌉.
        unsafe {
            [
                ld_global_nc_f32(sc.bs_row.add(kb as usize)),
                if n_waves == 2 || straddles_scale_blocks(BN) {
                    ld_global_nc_f32(sc.bs_row_hi.add(kb as usize))
                } else {
                    0.0
                },
            ]
        }
    };
    let mut sb_next = b_scales_of(k_begin);
    for kb in k_begin..k_end {
        let sb = sb_next;
        sb_next = b_scales_of((kb + 1).min(k_end - 1));
        let stage = consumer.acquire_stage();
        let st = stage.tiles();
        let sa = smem_field!(st, Fp8Stage<BM, BN>, a_scales).addr();
        let row = scale_row + a_scale_offset(kb, sc.sa_ld);
        // SAFETY: the stage is full (waited); each box's off + rows <
        // 132, the second box A_SCALE_BOX_STRIDE floats on.
        let a = unsafe {
            if m_waves == 2 {
                [
                    ld_shared_u32(sa + 4 * row),
                    ld_shared_u32(sa + 4 * (row + 8)),
                    ld_shared_u32(sa + 4 * (row + A_SCALE_BOX_STRIDE)),
                    ld_shared_u32(sa + 4 * (row + A_SCALE_BOX_STRIDE + 8)),
                ]
                .map(f32::from_bits)
            } else {
                let a = [
                    ld_shared_u32(sa + 4 * row),
                    ld_shared_u32(sa + 4 * (row + 8)),
                ]
                .map(f32::from_bits);
                [a[0], a[1], a[0], a[1]]
            }
        };
        let (da, db) = descs.at(stage.index());
        // 256-row tiles: both waves cover the tile's BN columns (and
        // the same B-scale split, when BN straddles two blocks);
        // 256-wide tiles: each wave is one 128-wide block.
        let wave1 = if m_waves == 2 {
            (da.advance(WAVE_M * BK), db)
        } else {
            (da, db.advance(128 * BK))
        };
        mma_k_block::<M, ACC>(p0, (da, db));
        M::wait::<0>(p0);
        if m_waves == 2 {
            promote_rows(acc, p0, (a[0], a[1], sb[0], sb[1]));
        } else {
            promote_tile::<ACC, 128>(acc, p0, (a[0], a[1], sb[0], 0.0), split_q);
        }
        mma_k_block::<M, ACC>(p0, wave1);
        M::wait::<0>(p0);
        // In 2-CTA clusters both arrivals go in one asm block with
        // immediate ranks (`release_pair_if`): `release_stage`'s two
        // remote arrivals hold the ranks in registers, and under the
        // two-wave budget (both waves' accumulators and the partial
        // live) that spilled 428 bytes (256×128 sharing A).
        if CLUSTER_M == 2 {
            stage.defer_release().release_pair_if(signaller);
        } else {
            release_stage::<CLUSTER_M>(stage.defer_release(), signaller);
        }
        if m_waves == 2 {
            promote_rows(acc_hi, p0, (a[2], a[3], sb[0], sb[1]));
        } else {
            promote_tile::<ACC, 128>(acc_hi, p0, (a[2], a[3], sb[1], 0.0), split_q);
        }
    }
}

/// The FP8 main loop of one segment (K blocks `k_begin..k_end`, at least
/// one) into `accs.acc` (and `accs.acc_hi`), which hold the tile's sum so
/// far (zero at a segment start).
///
/// * two-wave tiles (256×BN: `BM == 256`; 128×256: `BN == 256`): per K
///   block, wave 0's MMAs into `p0`, `wait_group<0>`, promotion into
///   `acc`, wave 1's MMAs (the next 128 rows of A, or the next 128 rows of
///   B with the next block's B scale) into `p0`, `wait_group<0>`, stage
///   release, promotion into `acc_hi`; a 256×BN tile whose BN columns
///   straddle two B-scale blocks promotes both waves with both scales
///   (`split_q`);
/// * `DOUBLE`: K block `kb + 1`'s MMAs are in flight (`wait_group<1>`)
///   while `kb`'s partial is promoted; the partials alternate `p0`, `p1`,
///   one copy of the K block per stage of the (even) ring
///   ([`rotated_double_mainloop`]; [`rotates_stages`] must hold);
/// * otherwise: MMAs into `p0`, `wait_group<0>`, release, promotion (the
///   other warpgroup's MMAs cover the promotion).
///
/// Protocol contract (`InputTilePipeline`, consumer side): per K block it
/// waits on the stage's `full` barrier, reads the stage's A scales before
/// issuing the MMAs, and releases the stage once `wait_group` retired
/// them — one arrival per warpgroup on the `empty` barrier of every CTA of
/// the cluster ([`release_stage`]), by `signaller`. On return every MMA has
/// retired.
///
/// # Safety
/// `k_end ≤ K/128`; `scales` per [`Fp8Scales`].
///
/// ```ignore
/// unsafe { fp8_mainloop::<Fp8N128, 128, 128, 64, 6, true, 1>(&mut consumer, descs, scales, seg.k_begin, seg.k_end, accs, split_q, tid == 0) };
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn fp8_mainloop<
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
    const DOUBLE: bool,
    const CLUSTER_M: u32,
>(
    consumer: &mut InputConsumer<'_, Fp8Payload<BM, BN>, STAGES>,
    descs: StageDescriptors,
    sc: Fp8Scales,
    k_begin: u32,
    k_end: u32,
    accs: Fp8Accumulators<'_, ACC>,
    split_q: u32,
    signaller: bool,
) {
    let (m_waves, n_waves) = (BM / WAVE_M as usize, if BN == 256 { 2 } else { 1 });
    let waves = m_waves * n_waves;
    if waves == 2 {
        // A width whose tiles straddle two B-scale blocks at any 8-column
        // group (88): the whole K loop compiled once per split (as
        // DeepGEMM's `outer_launch_k_iterations`), chosen once per tile,
        // so the promotion needs no per-register select (run-time selects
        // cost 14 % at 4096×2112×7168, session 25). Other widths choose
        // their promotion per K block (`promote_tile`).
        macro_rules! loop_at {
            ($split:expr) => {
                // SAFETY: forwarded.
                unsafe {
                    two_wave_mainloop::<M, BM, BN, ACC, STAGES, CLUSTER_M, { $split }>(
                        consumer,
                        descs,
                        sc,
                        (k_begin, k_end),
                        accs,
                        split_q,
                        signaller,
                    )
                }
            };
        }
        if BN % 32 != 0 && straddles_scale_blocks(BN) {
            let groups = (ACC / 4) as u32;
            match split_q {
                1 if groups > 1 => loop_at!(1),
                2 if groups > 2 => loop_at!(2),
                3 if groups > 3 => loop_at!(3),
                4 if groups > 4 => loop_at!(4),
                5 if groups > 5 => loop_at!(5),
                6 if groups > 6 => loop_at!(6),
                7 if groups > 7 => loop_at!(7),
                8 if groups > 8 => loop_at!(8),
                9 if groups > 9 => loop_at!(9),
                10 if groups > 10 => loop_at!(10),
                11 if groups > 11 => loop_at!(11),
                // No straddle (split_q ≥ groups): one B scale.
                _ => loop_at!(32),
            }
        } else {
            loop_at!(RUNTIME_SPLIT)
        }
        return;
    }
    let Fp8Accumulators { acc, p0, p1, .. } = accs;
    // Two partials run the ring unrolled: every `_db` kernel's width pins
    // its descriptors and its ring is even.
    const {
        assert!(
            !DOUBLE || rotates_stages(BN, STAGES),
            "two partials: BN ≤ 128 and an even ring of at most 12 stages"
        )
    };
    if DOUBLE {
        // The loop compiled for the first K block's stage parity.
        macro_rules! rotated {
            ($parity:literal) => {
                // SAFETY: forwarded; $parity is the consumer's stage mod 2.
                unsafe {
                    rotated_double_mainloop::<M, BM, BN, ACC, STAGES, CLUSTER_M, $parity>(
                        consumer,
                        descs,
                        sc,
                        (k_begin, k_end),
                        (acc, p0, p1),
                        split_q,
                        signaller,
                    )
                }
            };
        }
        if consumer.index() % 2 == 0 {
            rotated!(0)
        } else {
            rotated!(1)
        }
    } else {
        for kb in k_begin..k_end {
            // SAFETY: kb < k_end ≤ K/128 (contract).
            let (pending, scales) = unsafe {
                issue::<M, BM, BN, ACC, STAGES>(consumer, descs, sc, kb, p0, false, None)
            };
            M::wait::<0>(p0);
            release_stage::<CLUSTER_M>(pending, signaller);
            promote_tile::<ACC, BN>(acc, p0, scales, split_q);
        }
    }
}

/// Whether a `DOUBLE` main loop of `BN`-wide tiles with `STAGES` stages
/// can run as [`rotated_double_mainloop`] (the `DOUBLE` form of
/// [`fp8_mainloop`], which requires it): the pinned descriptors
/// ([`pins_stage_descriptors`]) and an even ring (the partials alternate
/// with the K blocks, so each stage's copy keeps its partial from one
/// round to the next) of at most 12 stages (the copies unrolled).
///
/// ```ignore
/// const { assert!(!DOUBLE || rotates_stages(BN, STAGES)) };
/// ```
pub const fn rotates_stages(bn: usize, stages: usize) -> bool {
    pins_stage_descriptors(bn) && stages % 2 == 0 && stages <= 12
}

/// The `DOUBLE` main loop ([`fp8_mainloop`]) with the ring unrolled: one
/// copy of the K block per stage, in ring order, each falling through to
/// the next (the last back to the first), so a copy's stage index — its
/// full barrier, A scales and pinned descriptors — is a constant and no
/// K block dispatches on the index (the `match` of [`issue`] costs a
/// constant-bank load and an indirect branch per K block: 120 of 1507
/// stall samples at 64×4096×7168, session 26). Only the segment's first
/// K block dispatches; later copies before the first block's successor
/// in the first round are skipped by one compare each. K block `k_begin +
/// j` goes into `p0` when j is even, `p1` when odd; with an even ring a
/// stage's copy always sees the same parity of j, fixed by the first
/// block's stage: `PARITY` (its stage mod 2).
///
/// Protocol contract: as [`fp8_mainloop`].
///
/// # Safety
/// As [`fp8_mainloop`]; `PARITY` is the consumer's stage index mod 2.
///
/// ```ignore
/// unsafe { rotated_double_mainloop::<Fp8N32, 128, 32, 16, 10, 1, 0>(consumer, descs, sc, (kb0, kb1), (acc, p0, p1), split_q, tid == 0) };
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn rotated_double_mainloop<
    M: Fp8Mma<ACC>,
    const BM: usize,
    const BN: usize,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
    const PARITY: u32,
>(
    consumer: &mut InputConsumer<'_, Fp8Payload<BM, BN>, STAGES>,
    descs: StageDescriptors,
    sc: Fp8Scales,
    (k_begin, k_end): (u32, u32),
    (acc, p0, p1): (&mut [f32; ACC], &mut [f32; ACC], &mut [f32; ACC]),
    split_q: u32,
    signaller: bool,
) {
    // (`rotates_stages` holds: `fp8_mainloop` checks it for `DOUBLE`
    // kernels; the other kernels' instantiations are never called.)
    // The B scales of the next `ahead` K blocks, in order (`window[0]` is
    // the next block's); past the segment's last block, its scales again.
    // (A constant after inlining: the window's unused entries compile
    // away.)
    let ahead = b_scales_ahead(BN);
    let last = k_end - 1;
    let mut window = [[0.0f32; 2]; 8];
    baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6, 7] {
        if (J as usize) < ahead {
            // SAFETY (each load): min(·, last) < K/128 (contract).
            window[J as usize] = unsafe { b_scales_at::<BN>(sc, (k_begin + J).min(last)) };
        }
    });
    // Block `kb`'s B scales, and block `kb + ahead`'s load issued.
    let mut next_b_scales = |kb: u32| {
        let sb = window[0];
        baton::unroll!(J in [0, 1, 2, 3, 4, 5, 6] {
            if (J as usize) + 1 < ahead {
                window[J as usize] = window[J as usize + 1];
            }
        });
        // SAFETY: as above.
        window[ahead - 1] = unsafe { b_scales_at::<BN>(sc, (kb + ahead as u32).min(last)) };
        sb
    };
    // K block k_begin (j = 0, p0) at the ring's current stage: dispatched.
    let sb = next_b_scales(k_begin);
    // SAFETY: k_begin < k_end ≤ K/128 (contract).
    let (mut pending, mut scales) = unsafe {
        issue::<M, BM, BN, ACC, STAGES>(consumer, descs, sc, k_begin, p0, true, Some(sb))
    };
    if k_begin + 1 >= k_end {
        M::wait::<0>(p0);
        release_stage::<CLUSTER_M>(pending, signaller);
        promote_tile::<ACC, BN>(acc, p0, scales, split_q);
        return;
    }
    let mut kb = k_begin + 1;
    // The copies before K block k_begin + 1's stage are skipped in the
    // first round only.
    let mut first = consumer.index();
    loop {
        baton::unroll!(S in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] {
          if (S as usize) < STAGES && S >= first {
            // SAFETY: the copies run in ring order from the consumer's
            // stage (`first`), one stage per K block.
            unsafe { core::hint::assert_unchecked(consumer.index() == S) };
            // K block kb's partial (j = kb − k_begin ≡ S + PARITY mod 2)
            // and the previous block's, in flight.
            let (cur, prev) = if (S + PARITY) % 2 == 0 { (&mut *p0, &mut *p1) } else { (&mut *p1, &mut *p0) };
            let sc_kb = Fp8Scales {
                scale_row: sc.scale_row + a_scale_offset(kb, sc.sa_ld),
                ..sc
            };
            let pinned = descs.at_pinned(S);
            let sb = next_b_scales(kb);
            // SAFETY: kb < k_end ≤ K/128 (contract).
            let (next_pending, next_scales) = unsafe {
                issue_on::<M, BM, BN, ACC, STAGES>(consumer, move |_| pinned, sc_kb, kb, cur, Some(sb))
            };
            M::wait::<1>(prev);
            release_stage::<CLUSTER_M>(pending, signaller);
            promote_tile::<ACC, BN>(acc, prev, scales, split_q);
            (pending, scales) = (next_pending, next_scales);
            kb += 1;
            if kb >= k_end {
                M::wait::<0>(cur);
                release_stage::<CLUSTER_M>(pending, signaller);
                promote_tile::<ACC, BN>(acc, cur, scales, split_q);
                return;
            }
          }
        });
        first = 0;
    }
}

/// The main loop of a consumer warpgroup whose 64 rows of the tile all lie
/// past M (a 128-row tile over the last ≤ 64 rows of A, e.g. M = 64): it
/// hands each of the segment's stages back without reading it — no MMAs,
/// no promotion (their result would be clipped by the store) — so the
/// other warpgroup has the tensor core to itself. The caller skips the
/// stream-K fixup and the epilogue for the tile too (both warpgroup-local:
/// the contributor and the finalizer of a unit take the same branch, and
/// the flags carry the launch's epoch).
///
/// Protocol contract (`InputTilePipeline`, consumer side): per K block it
/// waits on the stage's `full` barrier (so the consumer's stage and phase
/// advance as in [`fp8_mainloop`]) and releases it at once — one arrival
/// per warpgroup on the `empty` barrier of every CTA of the cluster
/// ([`release_stage`]), by `signaller`.
///
/// ```ignore
/// pass_segment::<128, 64, 8, 1>(&mut consumer, seg.k_begin, seg.k_end, tid == 0);
/// ```
#[inline(always)]
pub fn pass_segment<const BM: usize, const BN: usize, const STAGES: usize, const CLUSTER_M: u32>(
    consumer: &mut InputConsumer<'_, Fp8Payload<BM, BN>, STAGES>,
    k_begin: u32,
    k_end: u32,
    signaller: bool,
) {
    for _ in k_begin..k_end {
        let stage = consumer.acquire_stage();
        release_stage::<CLUSTER_M>(stage.defer_release(), signaller);
    }
}
