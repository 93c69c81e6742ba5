//! The BF16 `wgmma` main loops of a Hopper GEMM consumer warpgroup
//! (cooperative: 64 rows of a tile; ping-pong: a whole 128-row tile, see
//! [`bf16_pingpong_mainloop`]). Cooperative, per K
//! block (64) of a segment, 4 × `wgmma.m64nNk16` into the warpgroup's
//! register accumulators, the stage released once `wait_group<1>` retired
//! the MMAs that read it.

use super::stage_descriptors::StageDescriptors;
use crate::trace::{self, Event};
use baton::arch::ptx::wgmma::{
    self, SplitDescriptor,
    ops::{
        mma_m64n16k16_f32_bf16, mma_m64n32k16_f32_bf16, mma_m64n64k16_f32_bf16,
        mma_m64n128k16_f32_bf16, mma_m64n128k16_f32_bf16_t, mma_m64n160k16_f32_bf16,
        mma_m64n192k16_f32_bf16, mma_m64n224k16_f32_bf16, mma_m64n256k16_f32_bf16,
        mma_m64n256k16_f32_bf16_t,
    },
};
use baton::pipeline::PendingRelease;
use baton::tile_pipeline::{InputConsumer, TilePayload};

/// One BF16 `wgmma` shape: a warpgroup's 64 × N block, `ACC = N / 2` fp32
/// accumulators per thread, K = 16.
///
/// ```ignore
/// unsafe { Bf16N256::mma(&mut acc, da, db, true) };
/// ```
pub trait Bf16Mma<const ACC: usize> {
    /// Issues one `wgmma.mma_async` (no fence, no commit).
    ///
    /// # Safety
    /// As [`mma_m64n256k16_f32_bf16`].
    unsafe fn mma(acc: &mut [f32; ACC], a: u64, b: u64, accumulate: bool);

    /// Bytes between the A descriptors of consecutive K steps (16) of a
    /// stage: 32 in a K-major 128-byte row, 16 rows of 128 bytes (2048)
    /// when A is MN-major.
    const A_K_STEP: u32 = 32;
    /// As [`A_K_STEP`](Self::A_K_STEP), for B.
    const B_K_STEP: u32 = 32;
}

/// Bytes between the descriptors of consecutive K steps (16 bf16) of one
/// operand: 32 along a K-major 128-byte row, or 16 rows of 128 bytes when
/// the operand is MN-major (`trans == 1`).
const fn k_step_bytes(trans: u32) -> u32 {
    if trans == 1 { 16 * 128 } else { 32 }
}

/// `wgmma.m64n256k16` bf16 with A (`TA = 1`) and/or B (`TB = 1`) MN-major
/// in shared memory (`imm-trans-a` / `imm-trans-b`; descriptors by
/// `descriptor_mn_major`).
pub struct Bf16N256T<const TA: u32, const TB: u32>;
/// `wgmma.m64n128k16` bf16 with MN-major operands, as [`Bf16N256T`].
pub struct Bf16N128T<const TA: u32, const TB: u32>;

impl<const TA: u32, const TB: u32> Bf16Mma<128> for Bf16N256T<TA, TB> {
    const A_K_STEP: u32 = k_step_bytes(TA);
    const B_K_STEP: u32 = k_step_bytes(TB);
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n256k16_f32_bf16_t::<TA, TB>(acc, a, b, accumulate) }
    }
}
impl<const TA: u32, const TB: u32> Bf16Mma<64> for Bf16N128T<TA, TB> {
    const A_K_STEP: u32 = k_step_bytes(TA);
    const B_K_STEP: u32 = k_step_bytes(TB);
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n128k16_f32_bf16_t::<TA, TB>(acc, a, b, accumulate) }
    }
}

/// `wgmma.m64n256k16` bf16 (128 accumulators).
pub struct Bf16N256;
/// `wgmma.m64n224k16` bf16 (112 accumulators).
pub struct Bf16N224;
/// `wgmma.m64n192k16` bf16 (96 accumulators).
pub struct Bf16N192;
/// `wgmma.m64n160k16` bf16 (80 accumulators).
pub struct Bf16N160;
/// `wgmma.m64n128k16` bf16 (64 accumulators).
pub struct Bf16N128;
/// `wgmma.m64n64k16` bf16 (32 accumulators).
pub struct Bf16N64;
/// `wgmma.m64n32k16` bf16 (16 accumulators; swap-AB small M).
pub struct Bf16N32;
/// `wgmma.m64n16k16` bf16 (8 accumulators; swap-AB small M).
pub struct Bf16N16;

impl Bf16Mma<128> for Bf16N256 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n256k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<112> for Bf16N224 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 112], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n224k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<96> for Bf16N192 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 96], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n192k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<80> for Bf16N160 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 80], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n160k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<64> for Bf16N128 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n128k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<32> for Bf16N64 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 32], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n64k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<16> for Bf16N32 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 16], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n32k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl Bf16Mma<8> for Bf16N16 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 8], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n16k16_f32_bf16(acc, a, b, accumulate) }
    }
}

/// Issues the 4 `wgmma`s of one K block (64) for this warpgroup's 64 rows
/// (fence, 4 MMAs, commit); `accumulate == false` starts the tile.
///
/// ```ignore
/// mma_k_block::<Bf16N256, 128>(&mut acc, descs.at(stage.index()), false);
/// ```
#[inline(always)]
pub fn mma_k_block<M: Bf16Mma<ACC>, const ACC: usize>(
    acc: &mut [f32; ACC],
    (da, db): (SplitDescriptor, SplitDescriptor),
    accumulate: bool,
) {
    wgmma::fence();
    baton::unroll!(KK in [0, 1, 2, 3] {
        // SAFETY: the stage is loaded (waited) and stays unreleased until
        // wait_group retires these MMAs; `acc` is not touched meanwhile.
        unsafe { M::mma(acc, da.advance(KK * M::A_K_STEP).join(), db.advance(KK * M::B_K_STEP).join(), accumulate || KK > 0) };
    });
    wgmma::commit_group();
}

/// Hands a retired input stage back: to this CTA's `empty` barrier, or in
/// 2-CTA clusters to both CTAs' (each CTA's half of B was multicast into
/// the stage of both, so both producers wait for both CTAs' consumers).
/// One arrival per warpgroup (by `signaller`) and CTA. CTA-scope remote
/// arrivals suffice: the stage was only read, and the MMAs that read it
/// have retired.
///
/// ```ignore
/// release_stage::<CLUSTER_M>(stage.defer_release(), tid == 0);
/// ```
#[inline(always)]
pub fn release_stage<const CLUSTER_M: u32>(pending: PendingRelease<'_>, signaller: bool) {
    if CLUSTER_M > 1 {
        pending.release_multicast_if(super::producer::cluster_mask::<CLUSTER_M>(), signaller);
    } else {
        pending.release_if(signaller);
    }
}

/// The BF16 main loop of one segment of `k_blocks ≥ 1` K blocks into `acc`
/// (overwritten: the first K block starts it).
///
/// Protocol contract (`InputTilePipeline`, consumer side): per K block it
/// waits on the stage's `full` barrier (the producer's TMA bytes), issues
/// its MMAs, and releases the previous K block's stage once
/// `wgmma.wait_group<1>` retired the MMAs that read it — one arrival per
/// warpgroup on the `empty` barrier of every CTA of the cluster
/// ([`release_stage`]); the last stage after `wait_group<0>`. On return
/// every MMA has retired and `acc` holds the segment's sum.
///
/// ```ignore
/// bf16_mainloop::<Bf16N256, _, 128, STAGES, CLUSTER_M>(&mut consumer, descs, seg.len(), &mut acc, tid == 0);
/// ```
#[inline(always)]
pub fn bf16_mainloop<
    'a,
    M: Bf16Mma<ACC>,
    P: TilePayload,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
>(
    consumer: &mut InputConsumer<'a, P, STAGES>,
    descs: StageDescriptors,
    k_blocks: u32,
    acc: &mut [f32; ACC],
    signaller: bool,
) {
    // K block kb's MMAs stay in flight while kb-1's stage is handed back.
    let stage = consumer.acquire_stage();
    trace::stamp_consumer0(Event::FirstFull, true);
    mma_k_block::<M, ACC>(acc, descs.at(stage.index()), false);
    let mut pending: PendingRelease<'a> = stage.defer_release();
    for _ in 1..k_blocks {
        let stage = consumer.acquire_stage();
        mma_k_block::<M, ACC>(acc, descs.at(stage.index()), true);
        wgmma::wait_group::<1>();
        release_stage::<CLUSTER_M>(pending, signaller);
        pending = stage.defer_release();
    }
    wgmma::wait_group::<0>();
    trace::stamp_consumer0(Event::LastMainloopDone, false);
    release_stage::<CLUSTER_M>(pending, signaller);
}

/// Issues the 8 `wgmma`s of one K block (64) for a warpgroup that owns a
/// whole 128-row tile (the ping-pong schedule): per K step of 16, rows
/// 0..64 into `top` (A descriptor `da_top`) and rows 64..128 into `bottom`
/// (`da_bottom`), both against the same B (`db`); fence first, one commit
/// group for all 8. `accumulate == false` starts the tile.
///
/// ```ignore
/// mma_k_block_128::<Bf16N128, 64>(&mut top, &mut bottom, top_descs.at(s), bottom_descs.at(s).0, false);
/// ```
#[inline(always)]
pub fn mma_k_block_128<M: Bf16Mma<ACC>, const ACC: usize>(
    top: &mut [f32; ACC],
    bottom: &mut [f32; ACC],
    (da_top, db): (SplitDescriptor, SplitDescriptor),
    da_bottom: SplitDescriptor,
    accumulate: bool,
) {
    wgmma::fence();
    baton::unroll!(KK in [0, 1, 2, 3] {
        // SAFETY: the stage is loaded (waited) and stays unreleased until
        // wait_group retires these MMAs; the accumulators are not touched
        // meanwhile.
        unsafe {
            M::mma(top, da_top.advance(KK * M::A_K_STEP).join(), db.advance(KK * M::B_K_STEP).join(), accumulate || KK > 0);
            M::mma(bottom, da_bottom.advance(KK * M::A_K_STEP).join(), db.advance(KK * M::B_K_STEP).join(), accumulate || KK > 0);
        }
    });
    wgmma::commit_group();
}

/// The ping-pong main loop of one tile of `k_blocks ≥ 1` K blocks, for a
/// warpgroup that owns the whole 128-row tile: rows 0..64 accumulate into
/// `top`, rows 64..128 into `bottom` (both overwritten).
///
/// Protocol contract (`InputTilePipeline`, consumer side, one consuming
/// warpgroup per stage): per K block it waits on the stage's `full`
/// barrier, issues its 8 MMAs, and releases the previous K block's stage
/// once `wgmma.wait_group<1>` retired the MMAs that read it — one arrival
/// (by `signaller`) on the `empty` barrier of every CTA of the cluster
/// ([`release_stage`]). It returns with the **last K block's MMAs still in
/// flight** and that stage still owed: the caller hands the tensor cores to
/// the other warpgroup first (its main-loop turn ends when the last MMAs
/// are issued, as in CUTLASS's ping-pong), then calls
/// [`finish_pingpong_mainloop`].
///
/// ```ignore
/// let pending = bf16_pingpong_mainloop::<Bf16N128, _, 64, STAGES, 1>(&mut consumer, top_descs, bottom_descs, k_blocks, &mut top, &mut bottom, tid == 0);
/// order.arrive(); // main-loop turn over
/// finish_pingpong_mainloop::<1>(pending, tid == 0);
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn bf16_pingpong_mainloop<
    'a,
    M: Bf16Mma<ACC>,
    P: TilePayload,
    const ACC: usize,
    const STAGES: usize,
    const CLUSTER_M: u32,
>(
    consumer: &mut InputConsumer<'a, P, STAGES>,
    top_descs: StageDescriptors,
    bottom_descs: StageDescriptors,
    k_blocks: u32,
    top: &mut [f32; ACC],
    bottom: &mut [f32; ACC],
    signaller: bool,
) -> PendingRelease<'a> {
    let stage = consumer.acquire_stage();
    trace::stamp_consumer0(Event::FirstFull, true);
    let s = stage.index();
    mma_k_block_128::<M, ACC>(top, bottom, top_descs.at(s), bottom_descs.at(s).0, false);
    let mut pending: PendingRelease<'a> = stage.defer_release();
    for _ in 1..k_blocks {
        let stage = consumer.acquire_stage();
        let s = stage.index();
        mma_k_block_128::<M, ACC>(top, bottom, top_descs.at(s), bottom_descs.at(s).0, true);
        wgmma::wait_group::<1>();
        release_stage::<CLUSTER_M>(pending, signaller);
        pending = stage.defer_release();
    }
    pending
}

/// Ends a [`bf16_pingpong_mainloop`]: waits for its last MMAs
/// (`wgmma.wait_group<0>`) and releases their stage. Afterwards the
/// accumulators hold the tile's sum.
///
/// ```ignore
/// finish_pingpong_mainloop::<CLUSTER_M>(pending, tid == 0);
/// ```
#[inline(always)]
pub fn finish_pingpong_mainloop<const CLUSTER_M: u32>(
    pending: PendingRelease<'_>,
    signaller: bool,
) {
    wgmma::wait_group::<0>();
    trace::stamp_consumer0(Event::LastMainloopDone, false);
    release_stage::<CLUSTER_M>(pending, signaller);
}
