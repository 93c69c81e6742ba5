//! Blackwell (sm_100a) block-scaled GEMM, MXFP8 or NVFP4:
//! `D = alpha·(A·SFA)·(B·SFB)ᵀ + beta·C`, persistent and warp-specialized,
//! accumulators in tensor memory — the structure of the BF16 kernel
//! ([`gemm_sm100`](crate::gemm_sm100)) with scale factors added.
//!
//! * A: M×K, B: N×K, K-major ("TN"): e4m3 bytes ([`Mxfp8`]) or e2m1 packed
//!   two per byte, element 0 in the low nibble ([`Nvfp4`]); their scale
//!   factors (ue8m0 per 32 K / ue4m3 per 16 K) in the tcgen05 atom layout of
//!   [`baton::block_scale`] (`baton_runtime::block_scaled` quantizes into
//!   it); C, D: M×N row-major bf16; f32 accumulation. No per-tensor scale
//!   beyond `alpha`.
//! * CTA tile [`BM`] × [`BN`] = 128 × 128, [`BK_BYTES`] = 128 bytes of K per
//!   row and stage (128 e4m3 / 256 e2m1: one 128-byte swizzle atom), four
//!   `tcgen05.mma.cta_group::1` per stage (K = 32 `kind::mxf8f6f4
//!   .scale_vec::1X` / K = 64 `kind::mxf4nvf4.scale_vec::4X`). [`WARPS`] = 8:
//!
//! | warp | role | waits on | signals |
//! |---|---|---|---|
//! | 0 | TMA producer (one lane): A, B, SFA, SFB per stage | input `empty[s]` | input `full[s]` (`arrive.expect_tx` of the payload's bytes) |
//! | 1 | MMA issuer (one lane); TMEM alloc/dealloc (whole warp) | input `full[s]`, accumulator `empty[a]` | input `empty[s]` and accumulator `full[a]`, each by one `tcgen05.commit` |
//! | 2 | C loader (one lane, only when beta ≠ 0) | C `empty[c]` | C `full[c]` (TMA) |
//! | 3 | idle | — | — |
//! | 4–7 | epilogue warpgroup (128 threads = 128 TMEM lanes) | accumulator `full[a]`, C `full[c]` | accumulator `empty[a]`, C `empty[c]` |
//!
//! * Main loop: `InputTilePipeline` over the format's stage payload
//!   ([`Mxfp8TilePayload`] / [`Nvfp4TilePayload`]: A, B 128-byte swizzle;
//!   SFA, SFB as 3-D TMA boxes of whole 512-byte SF atoms,
//!   `block_scale::SfLayout::tma_dims`), [`STAGES`] stages.
//! * Scale factors: the MMA thread copies stage `s`'s SF atoms into **its
//!   own TMEM slot** `s` (`tcgen05.cp.32x128b.warpx4`, one per atom: row
//!   `r`'s word to column `+ r / 32` of every lane partition, where the MMA
//!   reads it), then issues the stage's MMAs. A slot is rewritten only
//!   after the input stage came back around, i.e. after the commit of the
//!   MMAs that read it completed — no reliance on `tcgen05` ordering
//!   between an MMA and a later copy. A copy and the MMAs one thread
//!   issues after it execute in order (PTX ISA, tcgen05 memory consistency
//!   model, "Implicitly pipelined tcgen05 instructions": `tcgen05.cp` →
//!   `tcgen05.mma`).
//! * Accumulators: [`TmemOutputPipeline`] of [`ACC_STAGES`] = 2 stages of
//!   [`BN`] f32 columns (TMEM columns `0..256`; SF slots from
//!   [`SF_TMEM_BASE`]); the epilogue of tile `t` overlaps the main loop of
//!   `t + 1`.
//! * Epilogue as the BF16 kernel's: 32-column sub-tiles, `tcgen05.ld
//!   .32x32b.x32`, `alpha·acc (+ beta·C)`, bf16 into a 64-byte-swizzled
//!   staging buffer, TMA store; TMA clips ragged M/N and zero-fills ragged
//!   loads — ragged K reads zero elements (times zero-filled or padding
//!   scales: 0 either way).
//! * Persistent grid, grouped rasterization, teardown as the BF16 kernel.
//!
//! Shapes: K a multiple of 32 elements (MXFP8) / 32 (NVFP4: 16-byte row
//! pitch), N a multiple of 8 (C/D row pitch), `k ≥ 1`.

use crate::ctx::WarpCtx;
use crate::epilogue::{EpilogueIo, TileWalk, c_load_role, epilogue_role};
use crate::gemm_sm100::{alloc_tmem, operand_desc};
use crate::smem_io::ld_u32;
use baton::arch::current::fence_barrier_init;
use baton::arch::current::tma::{TensorMap, load_2d, load_3d};
use baton::arch::tcgen05_desc::{
    BlockScaledDescriptor, BlockScaledType, ScaleType, SmemDescriptor, SmemLayout,
};
use baton::arch::tmem_addr::TmemAddr;
use baton::block_scale::{BlockScaleFormat, Mxfp8, Nvfp4, SF_ATOM_BYTES, SF_ATOM_COLS};
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::PipelineBarriers;
use baton::protocol::tile_scheduler::GroupedRaster;
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tile_pipeline::{
    BlockScaledStage, BlockScaledTilePayload, InputTilePipeline, InputTileStorage,
    Mxfp8TilePayload, Nvfp4TilePayload, Tile, TilePayload, TmemOutputPipeline,
};

use baton::arch::tcgen05 as tc;

/// CTA tile rows (M): the MMA's M, one TMEM lane per row.
pub const BM: u32 = 128;
/// CTA tile columns (N): the MMA's N, f32 TMEM columns per accumulator stage.
pub const BN: u32 = 128;
/// Bytes of K per row and input stage (one 128-byte swizzle atom).
pub const BK_BYTES: u32 = 128;
/// Input stages (MXFP8 5 × 33 KiB, NVFP4 5 × 36 KiB).
pub const STAGES: usize = 5;
/// Accumulator stages in TMEM (2 × 128 columns).
pub const ACC_STAGES: usize = 2;
/// Warps per CTA (see the role table).
pub const WARPS: u32 = 8;
/// Threads per CTA.
pub const THREADS: u32 = WARPS * 32;
/// The first of the four epilogue warps.
pub const EPILOGUE_WARP: u32 = 4;
/// TMEM columns allocated (accumulators, then the SF slots; a power of two).
pub const TMEM_COLS: u32 = 512;
/// First TMEM column of the scale-factor slots (after the accumulators).
pub const SF_TMEM_BASE: u32 = ACC_STAGES as u32 * BN;
/// MMAs per stage: [`BK_BYTES`] / 32 bytes of K per MMA.
pub const MMAS_PER_STAGE: u32 = BK_BYTES / 32;

const PRODUCER_WARP: u32 = 0;
const MMA_WARP: u32 = 1;
const C_LOAD_WARP: u32 = 2;

/// A block-scaled operand format the kernel runs: how many SF columns a
/// stage holds and which MMA consumes them.
pub trait ScaledFormat: BlockScaleFormat {
    /// SF columns per stage (`BK_BYTES · ELEMS_PER_BYTE / VEC`): 4 (MXFP8),
    /// 16 (NVFP4).
    const SFK: usize;
    /// K elements per stage.
    const BK: u32 = BK_BYTES * Self::ELEMS_PER_BYTE as u32;
    /// SF columns one MMA consumes (its K / `VEC`): 1 (MXFP8), 4 (NVFP4).
    const SF_PER_MMA: u32 = Self::BK / MMAS_PER_STAGE / Self::VEC as u32;
    /// Transaction bytes of one stage from the format's payload type (its
    /// compile-time shape checks included).
    const STAGE_BYTES: u32;
    /// The instruction descriptor, [`BM`] × [`BN`].
    const IDESC: BlockScaledDescriptor;

    /// Issues one block-scaled MMA, `D (+)= (A·SFA)·(B·SFB)ᵀ`; `sf_id` is the
    /// byte of the SF words it reads (its first SF column mod 4).
    ///
    /// # Safety
    /// As `tcgen05::mma::mma_mxf8f6f4_ss` / `mma_mxf4nvf4_ss`.
    unsafe fn mma(
        d: TmemAddr,
        a: SmemDescriptor,
        b: SmemDescriptor,
        sf_id: u32,
        sfa: TmemAddr,
        sfb: TmemAddr,
        accumulate: bool,
    );
}

impl ScaledFormat for Mxfp8 {
    const SFK: usize = 4;
    const STAGE_BYTES: u32 =
        Mxfp8TilePayload::<{ BM as usize }, { BN as usize }, { BK_BYTES as usize }, 4>::TMA_BYTES;
    const IDESC: BlockScaledDescriptor =
        BlockScaledDescriptor::mxf8f6f4(BlockScaledType::E4m3, BlockScaledType::E4m3, BM, BN);

    #[inline(always)]
    unsafe fn mma(
        d: TmemAddr,
        a: SmemDescriptor,
        b: SmemDescriptor,
        sf_id: u32,
        sfa: TmemAddr,
        sfb: TmemAddr,
        accumulate: bool,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            tc::mma::mma_mxf8f6f4_ss(
                d,
                a,
                b,
                Self::IDESC.with_scale_ids(sf_id, sf_id),
                sfa,
                sfb,
                accumulate,
            )
        }
    }
}

impl ScaledFormat for Nvfp4 {
    const SFK: usize = 16;
    const STAGE_BYTES: u32 =
        Nvfp4TilePayload::<{ BM as usize }, { BN as usize }, { BK_BYTES as usize }, 16>::TMA_BYTES;
    const IDESC: BlockScaledDescriptor = BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, BM, BN);

    #[inline(always)]
    unsafe fn mma(
        d: TmemAddr,
        a: SmemDescriptor,
        b: SmemDescriptor,
        _sf_id: u32,
        sfa: TmemAddr,
        sfb: TmemAddr,
        accumulate: bool,
    ) {
        // SAFETY: forwarded to the caller (scale_vec::4X: ids 0).
        unsafe { tc::mma::mma_mxf4nvf4_ss(d, a, b, Self::IDESC, sfa, sfb, accumulate) }
    }
}

/// The stage payload for `SFK` SF columns (the format's payload type has
/// the same stage; [`ScaledFormat::STAGE_BYTES`] carries its checks).
pub type Payload<const SFK: usize> = BlockScaledTilePayload<
    u8,
    u8,
    u8,
    { BM as usize },
    { BN as usize },
    { BK_BYTES as usize },
    SFK,
>;
/// One input stage: A, B, SFA, SFB.
pub type Stage<const SFK: usize> =
    BlockScaledStage<u8, u8, u8, { BM as usize }, { BN as usize }, { BK_BYTES as usize }, SFK>;
pub use crate::epilogue::{SUB_COLS, SubTile};

/// Shared memory of the kernel for `SFK` SF columns per stage
/// ([`Mxfp8GemmSmem`], [`Nvfp4GemmSmem`]).
#[repr(C)]
pub struct BlockScaledGemmSmem<const SFK: usize> {
    input: InputTileStorage<Payload<SFK>, STAGES>,
    /// D staging buffers.
    d_tiles: [SubTile; 2],
    /// C stages of the `EpiLoadPipeline`.
    c_tiles: [SubTile; 2],
    acc_bars: PipelineBarriers<ACC_STAGES>,
    c_bars: PipelineBarriers<2>,
    /// Where `tcgen05.alloc` writes the TMEM base address (word 0).
    tmem_base: Tile<u32, 1, 4>,
}

/// Shared memory of the MXFP8 kernel.
pub type Mxfp8GemmSmem = BlockScaledGemmSmem<4>;
/// Shared memory of the NVFP4 kernel.
pub type Nvfp4GemmSmem = BlockScaledGemmSmem<16>;

/// Dynamic shared memory of the MXFP8 kernel (the host launches with this).
pub const MXFP8_SMEM_BYTES: usize = core::mem::size_of::<Mxfp8GemmSmem>();
/// Dynamic shared memory of the NVFP4 kernel.
pub const NVFP4_SMEM_BYTES: usize = core::mem::size_of::<Nvfp4GemmSmem>();

/// TMEM columns of one SF slot: SFA then SFB, 4 columns per SF atom (BM =
/// BN = 128: one row block each, `SFK / 4` K atoms).
const fn sf_slot_cols(sfk: usize) -> u32 {
    2 * (sfk / SF_ATOM_COLS) as u32 * 4
}

const _: () = assert!(BM == 128 && BN == 128, "one SF row block per operand");
const _: () = assert!(
    MXFP8_SMEM_BYTES <= 227 * 1024 && NVFP4_SMEM_BYTES <= 227 * 1024,
    "sm100 block-scaled GEMM exceeds 227 KiB of shared memory"
);
const _: () = assert!(
    SF_TMEM_BASE + STAGES as u32 * sf_slot_cols(4) <= TMEM_COLS
        && SF_TMEM_BASE + STAGES as u32 * sf_slot_cols(16) <= TMEM_COLS,
    "accumulators and SF slots exceed the TMEM allocation"
);

#[cfg(not(target_arch = "nvptx64"))]
impl<const SFK: usize> Default for BlockScaledGemmSmem<SFK> {
    fn default() -> Self {
        Self {
            input: InputTileStorage::new(),
            d_tiles: [Tile::new(), Tile::new()],
            c_tiles: [Tile::new(), Tile::new()],
            acc_bars: PipelineBarriers::new(),
            c_bars: PipelineBarriers::new(),
            tmem_base: Tile::new(),
        }
    }
}

/// The kernel's arguments (what the GPU entry point receives).
#[derive(Clone, Copy, Debug)]
pub struct BlockScaledGemmArgs {
    /// A elements: u8, dims {K bytes, M}, box {128, 128}, 128-byte swizzle
    /// (`QuantizedMatrix::data_map(.., 128, BK)`).
    pub tma_a: *const TensorMap,
    /// B elements: as A over N rows.
    pub tma_b: *const TensorMap,
    /// SFA: u8, the 3-D SF view `[256, 2·k_atoms, row blocks]`, box `[256,
    /// SFK / 2, 1]`, no swizzle (`QuantizedMatrix::sf_map(.., 128, BK)`).
    pub tma_sfa: *const TensorMap,
    /// SFB: as SFA over N rows.
    pub tma_sfb: *const TensorMap,
    /// C: bf16, dims {N, M}, box {32, 128}, 64-byte swizzle (read only when
    /// `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D: as C.
    pub tma_d: *const TensorMap,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// K in elements (≥ 1).
    pub k: u32,
    /// Tile rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
}

// SAFETY: the maps are read-only descriptors shared by every warp (the GPU
// passes them as pointers to global memory; the CPU test keeps them alive
// for the run).
unsafe impl Sync for BlockScaledGemmArgs {}
// SAFETY: as above.
unsafe impl Send for BlockScaledGemmArgs {}

/// Output tiles of an `m × n` problem.
///
/// ```
/// assert_eq!(baton_kernel_roles::gemm_sm100_block_scaled::tiles(200, 129), 4);
/// ```
pub const fn tiles(m: u32, n: u32) -> u32 {
    m.div_ceil(BM) * n.div_ceil(BN)
}

/// Descriptor of one 512-byte SF atom at shared address `addr` as
/// `tcgen05.cp.32x128b` reads it: 32 rows of 16 contiguous bytes, no
/// swizzle (8-row groups 128 bytes apart).
#[inline(always)]
fn sf_atom_desc(addr: u32) -> SmemDescriptor {
    SmemDescriptor::new(addr, SmemLayout::Interleave, 0, 128)
}

/// The MXFP8 kernel: [`gemm_block_scaled`]`::<Mxfp8, 4, _>`.
///
/// # Safety
/// As [`gemm_block_scaled`].
#[inline(always)]
pub unsafe fn gemm_mxfp8<W: WarpCtx>(
    w: &W,
    smem: SharedRef<'_, Mxfp8GemmSmem>,
    args: &BlockScaledGemmArgs,
    cta: u32,
    grid: u32,
) {
    // SAFETY: forwarded.
    unsafe { gemm_block_scaled::<Mxfp8, 4, W>(w, smem, args, cta, grid) }
}

/// The NVFP4 kernel: [`gemm_block_scaled`]`::<Nvfp4, 16, _>`.
///
/// # Safety
/// As [`gemm_block_scaled`].
#[inline(always)]
pub unsafe fn gemm_nvfp4<W: WarpCtx>(
    w: &W,
    smem: SharedRef<'_, Nvfp4GemmSmem>,
    args: &BlockScaledGemmArgs,
    cta: u32,
    grid: u32,
) {
    // SAFETY: forwarded.
    unsafe { gemm_block_scaled::<Nvfp4, 16, W>(w, smem, args, cta, grid) }
}

/// The whole kernel for format `F` (`SFK` = `F::SFK`, checked at compile
/// time), as run by one thread (GPU) or warp (CPU) of CTA `cta` of a
/// persistent grid of `grid` CTAs.
///
/// # Safety
/// `smem` is this CTA's [`BlockScaledGemmSmem`], fresh (zeroed on the GPU,
/// `default` on the CPU), shared by exactly [`WARPS`] warps that all call
/// this with the same `args`, `cta` and `grid`; the tensor maps describe
/// A, B, SFA, SFB, C, D as [`BlockScaledGemmArgs`] says, for format `F`;
/// `k ≥ 1`, `group_m ≥ 1`.
#[inline(always)]
pub unsafe fn gemm_block_scaled<F: ScaledFormat, const SFK: usize, W: WarpCtx>(
    w: &W,
    smem: SharedRef<'_, BlockScaledGemmSmem<SFK>>,
    args: &BlockScaledGemmArgs,
    cta: u32,
    grid: u32,
) {
    const {
        assert!(
            F::SFK == SFK,
            "SFK must be the format's SF columns per stage"
        );
        assert!(F::STAGE_BYTES == Payload::<SFK>::TMA_BYTES);
    }
    let input = InputTilePipeline::<Payload<SFK>, STAGES>::new(
        smem_field!(smem, BlockScaledGemmSmem<SFK>, input),
        c"sm100-bs-gemm-mainloop",
    );
    let mut c_pipe = EpiLoadPipeline::<2>::new(
        smem_field!(smem, BlockScaledGemmSmem<SFK>, c_bars),
        c"sm100-bs-gemm-c",
    );
    let acc_bars = smem_field!(smem, BlockScaledGemmSmem<SFK>, acc_bars);
    let d_tiles = smem_field!(smem, BlockScaledGemmSmem<SFK>, d_tiles);
    let c_tiles = smem_field!(smem, BlockScaledGemmSmem<SFK>, c_tiles);
    let tmem_slot = smem_field!(smem, BlockScaledGemmSmem<SFK>, tmem_base);
    let warp = w.warp();

    // 1. Barriers (one elected thread) and TMEM (the MMA warp).
    if warp == PRODUCER_WARP {
        w.elect(|| {
            // Input `empty`: one commit per stage. Accumulator: `full` one
            // commit, `empty` every epilogue thread (TmemOutputPipeline).
            // C: one TMA producer, every epilogue thread.
            input.init(1);
            TmemOutputPipeline::<ACC_STAGES, BN>::new(acc_bars, TmemAddr(0), c"sm100-bs-gemm-acc")
                .init();
            c_pipe.init_barriers(1, 128);
            fence_barrier_init();
        });
    }
    if warp == MMA_WARP {
        // SAFETY: the whole warp, converged; it deallocates at the end.
        unsafe { alloc_tmem(tmem_slot) };
    }
    tc::fence_before_thread_sync();
    w.sync_cta();
    tc::fence_after_thread_sync();
    // SAFETY: written by the allocation, published by the barrier above.
    let tmem = TmemAddr(unsafe { ld_u32(tmem_slot, 0) });
    let acc = TmemOutputPipeline::<ACC_STAGES, BN>::new(acc_bars, tmem, c"sm100-bs-gemm-acc");

    let raster = GroupedRaster::new(args.m.div_ceil(BM), args.n.div_ceil(BN), args.group_m);
    let tiles = raster.units();
    let walk = TileWalk { raster, cta, grid };
    let io = EpilogueIo {
        tma_c: args.tma_c,
        tma_d: args.tma_d,
        alpha: args.alpha,
        beta: args.beta,
        c_tiles,
        d_tiles,
    };
    let k_blocks = args.k.div_ceil(F::BK);
    // SF coordinate step per stage in the 3-D SF view (two 256-byte rows
    // per 4-column atom).
    let sf_c1_per_stage = (SFK / 2) as i32;

    if warp == PRODUCER_WARP {
        w.elect(|| {
            let mut producer = input.producer();
            let mut t = cta;
            while t < tiles {
                let (tm, tn) = raster.coords(t);
                for kb in 0..k_blocks {
                    let stage = producer.acquire();
                    stage.arrive_expect_tx();
                    let st = stage.tiles();
                    let (kc, bar) = ((kb * BK_BYTES) as i32, stage.barrier());
                    let sf_c1 = kb as i32 * sf_c1_per_stage;
                    // SAFETY: maps per the contract; the stage is ours and
                    // its full barrier expects the payload's bytes.
                    unsafe {
                        load_2d(
                            args.tma_a,
                            smem_field!(st, Stage<SFK>, a),
                            bar,
                            kc,
                            (tm * BM) as i32,
                        );
                        load_2d(
                            args.tma_b,
                            smem_field!(st, Stage<SFK>, b),
                            bar,
                            kc,
                            (tn * BN) as i32,
                        );
                        load_3d(
                            args.tma_sfa,
                            smem_field!(st, Stage<SFK>, sfa),
                            bar,
                            0,
                            sf_c1,
                            tm as i32,
                        );
                        load_3d(
                            args.tma_sfb,
                            smem_field!(st, Stage<SFK>, sfb),
                            bar,
                            0,
                            sf_c1,
                            tn as i32,
                        );
                    }
                }
                t += grid;
            }
            producer.drain();
        });
    } else if warp == MMA_WARP {
        w.elect(|| {
            let mut consumer = input.consumer();
            let mut acc_producer = acc.producer();
            let atoms = (SFK / SF_ATOM_COLS) as u32;
            let mut t = cta;
            while t < tiles {
                // A free accumulator stage (the epilogue drained it).
                let acc_stage = acc_producer.acquire_stage();
                let d = acc_stage.tmem();
                for kb in 0..k_blocks {
                    let stage = consumer.acquire_stage();
                    let st = stage.tiles();
                    // This input stage's SF slot: SFA atoms, then SFB atoms.
                    let slot = tmem.offset(0, SF_TMEM_BASE + stage.index() * sf_slot_cols(SFK));
                    let (sfa_smem, sfb_smem) = (
                        tc::smem_addr(smem_field!(st, Stage<SFK>, sfa)),
                        tc::smem_addr(smem_field!(st, Stage<SFK>, sfb)),
                    );
                    for atom in 0..atoms {
                        let off = atom * SF_ATOM_BYTES as u32;
                        // SAFETY: the stage is loaded (waited); the slot is
                        // read only by this stage's MMAs, issued below, and
                        // was last read by MMAs of this stage's previous
                        // use, complete before the stage came back.
                        unsafe {
                            tc::tmem::cp_32x128b_warpx4(
                                slot.offset(0, 4 * atom),
                                sf_atom_desc(sfa_smem + off),
                            );
                            tc::tmem::cp_32x128b_warpx4(
                                slot.offset(0, 4 * (atoms + atom)),
                                sf_atom_desc(sfb_smem + off),
                            );
                        }
                    }
                    let a = operand_desc(tc::smem_addr(smem_field!(st, Stage<SFK>, a)));
                    let b = operand_desc(tc::smem_addr(smem_field!(st, Stage<SFK>, b)));
                    for kk in 0..MMAS_PER_STAGE {
                        // The MMA's first SF column: its atom's 4 TMEM
                        // columns, byte `sf % 4` of each word.
                        let sf = kk * F::SF_PER_MMA;
                        let (col, id) = (4 * (sf / 4), sf % 4);
                        // SAFETY: the stage is loaded and released only by
                        // the commit below, after these MMAs; the SF copies
                        // were issued before them by this thread; `d` is a
                        // stage the epilogue released.
                        unsafe {
                            F::mma(
                                d,
                                a.advance(kk * 32),
                                b.advance(kk * 32),
                                id,
                                slot.offset(0, col),
                                slot.offset(0, 4 * atoms + col),
                                kb > 0 || kk > 0,
                            )
                        };
                    }
                    // SAFETY: one thread; the stage's `empty` counts 1.
                    unsafe { tc::mma::commit(stage.barrier()) };
                    stage.release_without_signal();
                }
                // The accumulator is complete when every MMA above is.
                acc_stage.commit(|bar| {
                    // SAFETY: one thread; `full[a]` counts this one commit.
                    unsafe { tc::mma::commit(bar) }
                });
                t += grid;
            }
            // Every accumulator stage released before TMEM is freed.
            acc_producer.drain();
        });
    } else if warp == C_LOAD_WARP {
        // SAFETY: the C map per the kernel contract; `c_pipe`'s stages are
        // `io.c_tiles`, its barriers initialized above (one producer).
        unsafe { c_load_role::<W, BN>(w, &mut c_pipe, &io, walk) };
    } else if warp >= EPILOGUE_WARP {
        // SAFETY: the maps per the kernel contract; the MMA warp commits
        // `acc`'s stages in this walk's tile order; C comes from the C-load
        // warp's `c_pipe`.
        unsafe {
            epilogue_role::<W, BN, ACC_STAGES>(w, warp, EPILOGUE_WARP, &acc, &mut c_pipe, &io, walk)
        };
    }

    // Teardown: no thread reads or writes TMEM any more.
    tc::fence_before_thread_sync();
    w.sync_cta();
    if warp == MMA_WARP {
        tc::fence_after_thread_sync();
        // SAFETY: the allocating warp, converged, after every TMEM access
        // (barrier above; the MMA thread drained the accumulator ring); the
        // columns it allocated.
        unsafe { tc::tmem::dealloc::<TMEM_COLS>(tmem) };
    }
}
