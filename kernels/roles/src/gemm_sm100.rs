//! Blackwell (sm_100a) BF16 GEMM: `D = alpha·A·Bᵀ + beta·C`, persistent and
//! warp-specialized, accumulators in tensor memory.
//!
//! * A: M×K row-major bf16; B: N×K row-major bf16 (K-major, "TN"); C, D: M×N
//!   row-major bf16; fp32 accumulation (as the Hopper kernel,
//!   `kernels/src/gemm_bf16.rs`).
//! * CTA tile [`BM`] × [`BN`] × [`BK`] = 128 × 256 × 64, [`WARPS`] = 8 warps:
//!
//! | warp | role | waits on | signals |
//! |---|---|---|---|
//! | 0 | TMA producer (one lane) | input `empty[s]` | input `full[s]` (`arrive.expect_tx`, TMA completes the bytes) |
//! | 1 | MMA issuer (one lane); TMEM alloc/dealloc (whole warp) | input `full[s]`, accumulator `empty[a]` | input `empty[s]` and accumulator `full[a]`, each by one `tcgen05.commit` |
//! | 2 | C loader (one lane, only when beta ≠ 0) | C `empty[c]` | C `full[c]` (TMA) |
//! | 3 | idle | — | — |
//! | 4–7 | epilogue warpgroup (128 threads = 128 TMEM lanes = 128 rows) | accumulator `full[a]`, C `full[c]` | accumulator `empty[a]`, C `empty[c]` (every thread) |
//!
//! * Main loop: `InputTilePipeline<StandardTilePayload>` with [`STAGES`]
//!   stages (128-byte swizzle, K-major); its `empty` count is 1 — the MMA
//!   warp's `tcgen05.commit` arrives once the MMAs that read the stage are
//!   done. Four `tcgen05.mma.cta_group::1.kind::f16` (M 128, N 256, K 16)
//!   per stage.
//! * Accumulators: a [`TmemOutputPipeline`] of [`ACC_STAGES`] = 2 stages
//!   of [`BN`] f32 TMEM columns (all 512), so the MMA warp starts tile
//!   `t + 1` while the epilogue drains tile `t`; `full` count 1 (a
//!   commit), `empty` count 128 (every epilogue thread, after its last
//!   `tcgen05.ld` of the stage); the MMA thread drains the ring before the
//!   columns are freed.
//! * Epilogue, in [`BN`] / 32 sub-tiles of 128 rows × 32 columns: each thread
//!   loads its row's 32 columns from TMEM (`tcgen05.ld.32x32b.x32`), adds
//!   `beta·C` from the C stage (`EpiLoadPipeline`, TMA, 64-byte swizzle),
//!   packs bf16 into a 64-byte-swizzled staging buffer; one thread
//!   TMA-stores it (two buffers, `cp.async.bulk.wait_group.read` before
//!   reuse). TMA clips ragged edges and zero-fills ragged loads.
//! * Persistent grid: CTA `c` of `grid` takes tiles `c, c + grid, …` in
//!   grouped order ([`GroupedRaster`]); every role walks the same list.
//! * Teardown: every thread fences (`tcgen05.fence::before_thread_sync`),
//!   a CTA barrier, and warp 1 frees the TMEM columns.

use crate::ctx::WarpCtx;
use crate::epilogue::{EpilogueIo, TileWalk, c_load_role, epilogue_role};
use crate::smem_io::ld_u32;
use baton::arch::current::fence_barrier_init;
use baton::arch::current::tma::{TensorMap, load_2d};
use baton::arch::tcgen05_desc::{
    AccType, F16Type, InstrDescriptor, Major, SmemDescriptor, SmemLayout,
};
use baton::arch::tmem_addr::TmemAddr;
use baton::epi_load::EpiLoadPipeline;
use baton::pipeline::PipelineBarriers;
use baton::protocol::tile_scheduler::GroupedRaster;
use baton::smem::SharedRef;
use baton::smem_field;
use baton::tensor_map::Swizzle;
use baton::tile_pipeline::{
    InputTilePipeline, InputTileStorage, StandardStage, StandardTilePayload, Tile,
    TmemOutputPipeline,
};

use baton::arch::tcgen05 as tc;

/// CTA tile rows (M): one `cta_group::1` MMA's M, one TMEM lane per row.
pub const BM: u32 = 128;
/// CTA tile columns (N): the MMA's N, f32 TMEM columns per accumulator stage.
pub const BN: u32 = 256;
/// K per input stage: 64 bf16 = one 128-byte swizzle atom per row.
pub const BK: u32 = 64;
/// Input stages (4 × 48 KiB).
pub const STAGES: usize = 4;
/// Accumulator stages in TMEM (2 × 256 columns = all 512).
pub const ACC_STAGES: usize = 2;
/// Warps per CTA (see the role table).
pub const WARPS: u32 = 8;
/// Threads per CTA.
pub const THREADS: u32 = WARPS * 32;
/// The first of the four epilogue warps (a warpgroup: warp `w` reads TMEM
/// lanes `32·(w % 4)..`).
pub const EPILOGUE_WARP: u32 = 4;
/// TMEM columns allocated.
pub const TMEM_COLS: u32 = 512;

const PRODUCER_WARP: u32 = 0;
/// The accumulator ring's name in hang reports.
const ACC_NAME: &core::ffi::CStr = c"sm100-gemm-accumulator";
const MMA_WARP: u32 = 1;
const C_LOAD_WARP: u32 = 2;

type Payload = StandardTilePayload<u16, u16, { BM as usize }, { BN as usize }, { BK as usize }>;
type Stage = StandardStage<u16, u16, { BM as usize }, { BN as usize }, { BK as usize }>;
pub use crate::epilogue::{SUB_COLS, SubTile};

/// Shared memory of the kernel.
#[repr(C)]
pub struct GemmSmem {
    input: InputTileStorage<Payload, STAGES>,
    /// D staging buffers.
    d_tiles: [SubTile; 2],
    /// C stages of the `EpiLoadPipeline`.
    c_tiles: [SubTile; 2],
    acc_bars: PipelineBarriers<ACC_STAGES>,
    c_bars: PipelineBarriers<2>,
    /// Where `tcgen05.alloc` writes the TMEM base address (word 0).
    tmem_base: Tile<u32, 1, 4>,
}

/// Dynamic shared memory the kernel needs (the host launches with this).
pub const SMEM_BYTES: usize = core::mem::size_of::<GemmSmem>();

const _: () = assert!(
    SMEM_BYTES <= 227 * 1024,
    "sm100 BF16 GEMM exceeds 227 KiB of shared memory"
);

#[cfg(not(target_arch = "nvptx64"))]
impl Default for GemmSmem {
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
pub struct GemmArgs {
    /// A: bf16, dims {K, M}, box {64, 128}, 128-byte swizzle.
    pub tma_a: *const TensorMap,
    /// B: bf16, dims {K, N}, box {64, 256}, 128-byte swizzle.
    pub tma_b: *const TensorMap,
    /// C: bf16, dims {N, M}, box {32, 128}, 64-byte swizzle (read only
    /// when `beta ≠ 0`).
    pub tma_c: *const TensorMap,
    /// D: as C.
    pub tma_d: *const TensorMap,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// Columns of A and B (≥ 1).
    pub k: u32,
    /// Tile rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of A·Bᵀ.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
}

// SAFETY: the maps are read-only descriptors shared by every warp (the GPU
// passes them as pointers to global memory; the CPU test keeps them alive
// for the run).
unsafe impl Sync for GemmArgs {}
// SAFETY: as above.
unsafe impl Send for GemmArgs {}

/// Output tiles of an `m × n` problem.
pub const fn tiles(m: u32, n: u32) -> u32 {
    m.div_ceil(BM) * n.div_ceil(BN)
}

/// Packs two f32 into a bf16x2 word (round to nearest even; NaN stays NaN),
/// `lo` in the low half (the element at the lower address).
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: pure conversion.
        unsafe {
            core::arch::asm!("cvt.rn.bf16x2.f32 {r}, {h}, {l};", r = out(reg32) r, h = in(reg32) hi, l = in(reg32) lo, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        fn bf16(x: f32) -> u32 {
            let b = x.to_bits();
            if x.is_nan() {
                return (b >> 16) | 0x40;
            }
            (b + 0x7fff + ((b >> 16) & 1)) >> 16
        }
        bf16(lo) | (bf16(hi) << 16)
    }
}

/// Byte offset of the bf16 pair `pair` (columns `2·pair`, `2·pair + 1`) of
/// row `row` in a 64-byte-swizzled sub-tile (rows of 64 bytes).
#[inline(always)]
pub(crate) fn sub_tile_offset(row: u32, pair: u32) -> u32 {
    Swizzle::B64.apply((row * 64 + pair * 4) as usize) as u32
}

/// K-major, 128-byte-swizzled operand descriptor at shared address `addr`
/// (8-row groups 1024 bytes apart).
#[inline(always)]
pub(crate) fn operand_desc(addr: u32) -> SmemDescriptor {
    SmemDescriptor::new(addr, SmemLayout::Swizzle128B, 16, 1024)
}

/// The shared-memory address a descriptor names: the GPU's shared-window
/// address; on the CPU the offset into the simulated CTA's shared memory,
/// which the simulated MMA resolves (`arch::tcgen05::smem_addr`).
#[inline(always)]
fn smem_addr<T>(r: SharedRef<'_, T>) -> u32 {
    tc::smem_addr(r)
}

/// `tcgen05.alloc` of [`TMEM_COLS`] columns, the address into word 0 of
/// `slot`, then `relinquish_alloc_permit`.
///
/// # Safety
/// The whole allocating warp, converged; it later deallocates.
#[inline(always)]
pub(crate) unsafe fn alloc_tmem(slot: SharedRef<'_, Tile<u32, 1, 4>>) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: forwarded to the caller.
    unsafe {
        tc::tmem::alloc::<TMEM_COLS>(SharedRef::from_addr(slot.addr()));
        tc::tmem::relinquish_alloc_permit();
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: word 0 of the tile is interior-mutable (the tile's cell) and
    // this CTA's, written before the barrier that publishes it.
    unsafe {
        let word = slot
            .get()
            .with_mut_ptr(|p| SharedRef::from_ref(&*(p as *const u32)));
        tc::tmem::alloc::<TMEM_COLS>(word);
        tc::tmem::relinquish_alloc_permit();
    }
}

/// The whole kernel, as run by one thread (GPU) or warp (CPU) of CTA `cta`
/// of a persistent grid of `grid` CTAs.
///
/// # Safety
/// `smem` is this CTA's [`GemmSmem`], fresh (zeroed on the GPU, `default`
/// on the CPU), shared by exactly [`WARPS`] warps that all call this with
/// the same `args`, `cta` and `grid`; the tensor maps describe A, B, C, D
/// as [`GemmArgs`] says; `k ≥ 1`, `group_m ≥ 1`.
#[inline(always)]
pub unsafe fn gemm_bf16<W: WarpCtx>(
    w: &W,
    smem: SharedRef<'_, GemmSmem>,
    args: &GemmArgs,
    cta: u32,
    grid: u32,
) {
    let input = InputTilePipeline::<Payload, STAGES>::new(
        smem_field!(smem, GemmSmem, input),
        c"sm100-gemm-mainloop",
    );
    let acc_bars = smem_field!(smem, GemmSmem, acc_bars);
    let mut c_pipe =
        EpiLoadPipeline::<2>::new(smem_field!(smem, GemmSmem, c_bars), c"sm100-gemm-c");
    let d_tiles = smem_field!(smem, GemmSmem, d_tiles);
    let c_tiles = smem_field!(smem, GemmSmem, c_tiles);
    let tmem_slot = smem_field!(smem, GemmSmem, tmem_base);
    let warp = w.warp();

    // 1. Barriers (one elected thread) and TMEM (the MMA warp).
    if warp == PRODUCER_WARP {
        w.elect(|| {
            // Input `empty`: one commit per stage. Accumulator: `full` one
            // commit, `empty` every epilogue thread. C: one TMA producer,
            // every epilogue thread.
            input.init(1);
            TmemOutputPipeline::<ACC_STAGES, BN>::new(acc_bars, TmemAddr(0), ACC_NAME).init();
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
    let acc = TmemOutputPipeline::<ACC_STAGES, BN>::new(acc_bars, tmem, ACC_NAME);

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
    let k_blocks = args.k.div_ceil(BK);

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
                    let (kc, bar) = ((kb * BK) as i32, stage.barrier());
                    // SAFETY: maps per the contract; the stage is ours and
                    // its full barrier expects Payload::TMA_BYTES.
                    unsafe {
                        load_2d(
                            args.tma_a,
                            smem_field!(st, Stage, a),
                            bar,
                            kc,
                            (tm * BM) as i32,
                        );
                        load_2d(
                            args.tma_b,
                            smem_field!(st, Stage, b),
                            bar,
                            kc,
                            (tn * BN) as i32,
                        );
                    }
                }
                t += grid;
            }
            producer.drain();
        });
    } else if warp == MMA_WARP {
        w.elect(|| {
            let idesc =
                InstrDescriptor::f16(F16Type::Bf16, AccType::F32, BM, BN, Major::K, Major::K);
            let mut consumer = input.consumer();
            let mut acc_producer = acc.producer();
            let mut t = cta;
            while t < tiles {
                // A free accumulator stage (the epilogue drained it).
                let acc_stage = acc_producer.acquire_stage();
                let d = acc_stage.tmem();
                for kb in 0..k_blocks {
                    let stage = consumer.acquire_stage();
                    let st = stage.tiles();
                    let a = operand_desc(smem_addr(smem_field!(st, Stage, a)));
                    let b = operand_desc(smem_addr(smem_field!(st, Stage, b)));
                    for kk in 0..BK / 16 {
                        // SAFETY: the stage is loaded (waited) and released
                        // only by the commit below, after these MMAs; `d`
                        // is a stage the epilogue released.
                        unsafe {
                            tc::mma::mma_f16_ss(
                                d,
                                a.advance(kk * 32),
                                b.advance(kk * 32),
                                idesc,
                                kb > 0 || kk > 0,
                            )
                        };
                    }
                    // SAFETY: one thread; the barrier is the stage's
                    // `empty`, whose count is 1.
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
