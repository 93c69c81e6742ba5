//! The sm_100a smoke kernels: one `tcgen05.mma` (BF16 → f32, M = 128, N = 32,
//! K = 16) from shared memory into tensor memory, read back by `tcgen05.ld`
//! ([`baton_sm100_smoke`]), the multicast `tcgen05.commit` to a CTA pair
//! ([`baton_sm100_commit_pair`]), and the CTA-pair (`cta_group::2`) MMA
//! ([`baton_sm100_pair_mma`]). Together they exercise every wrapper of
//! `baton::arch::sm100` in the order a real kernel uses them. Built only into `baton_sm100a.ptx`
//! (cargo feature `sm100`, `tools/build-ptx.sh`), **assembled by ptxas but
//! never run**: no Blackwell GPU has been available.
//!
//! [`baton_sm100_smoke`] launch: grid (1,1,1), block (128,1,1), at least
//! `size_of::<Sm100SmokeLayout>()` of dynamic shared memory. `a`: 128 × 16 bf16
//! row-major (`A[m][k]`), `b`: 32 × 16 bf16 row-major (`B[n][k]`, i.e. Bᵀ),
//! both as raw bits; `out`: 128 rows of 64 f32 bit patterns:
//! `out[m][n] = out[m][32 + n] = Σ_k A[m][k]·B[n][k]` for `n < 32` (the
//! second copy read back with the narrower `tcgen05.ld` widths).
//!
//! 1. All threads stage A and B into shared memory in the no-swizzle
//!    K-major core-matrix layout (8 rows × 16 bytes per core matrix; leading
//!    byte offset 128 between the two core matrices of a row group, stride
//!    byte offset 256 between row groups), then
//!    `fence.proxy.async.shared::cta` so the tensor core sees the stores.
//! 2. Warp 0 allocates 32 TMEM columns (address into shared memory) and
//!    relinquishes the permit; thread 0 initializes the MMA barrier (count 1).
//!    `tcgen05.fence::before_thread_sync`, block barrier,
//!    `tcgen05.fence::after_thread_sync`; everyone reads the TMEM address.
//! 3. One lane of warp 0 issues the MMA and commits it to the barrier.
//! 4. Every warp waits on the barrier, fences, loads its 32 rows × 32
//!    columns (`32x32b.x32`, then again as x16 + x8 + x4 + x2 + x1 + x1) and
//!    stores them.
//! 5. Fence, block barrier, and warp 0 frees the columns.

use crate::smem_io::{ld_shared_u32, st_shared_u32};
use baton::arch::ptx::{self as arch, BarrierRef};
use baton::arch::sm100::mma::{
    AccType, F16Type, InstrDescriptor, Major, SmemDescriptor, SmemLayout, commit, commit_multicast,
    commit_pair_multicast, mma_f16_ss, mma_f16_ss_pair,
};
use baton::arch::sm100::tmem::{self, TmemAddr};
use baton::arch::sm100::{fence_after_thread_sync, fence_before_thread_sync};
use baton::protocol::diag::{Role, WaitSite};
use baton::smem_field;
use baton_kernels_abi::sm100_smoke as abi;
pub use baton_kernels_abi::sm100_smoke::{
    BlockScaledParams, CommitPairLayout, CommitPairParams, MmaSmokeParams, PairMmaLayout,
    SM100_SMOKE_K, SM100_SMOKE_M, SM100_SMOKE_N, Sm100BlockScaledLayout, Sm100SmokeLayout,
};

/// TMEM columns allocated (the minimum allocation; N = 32 f32 columns).
const TMEM_COLS: u32 = 32;
/// Core-matrix offsets of the no-swizzle K-major layout.
const LEADING_BYTES: u32 = 128;
const STRIDE_BYTES: u32 = 256;

/// Word index (of 4 bytes) in the core-matrix layout of the bf16 pair at
/// row `r`, columns `2 * kp, 2 * kp + 1` (K = 16: two core matrices per
/// 8-row group).
#[inline(always)]
fn core_matrix_word(r: usize, kp: usize) -> usize {
    let byte = (r / 8) * STRIDE_BYTES as usize
        + (kp / 4) * LEADING_BYTES as usize
        + (r % 8) * 16
        + (kp % 4) * 4;
    byte / 4
}

baton::kernel! {
    #[spec(abi::SMOKE)]
    /// See the module documentation.
    ///
    /// # Safety
    /// `a` holds 128 × 16 and `b` 32 × 16 readable bf16 values, `out` 128 × 64
    /// writable words, in device memory; launched as the module documentation
    /// says, on an sm_100a GPU.
    pub fn baton_sm100_smoke(p: MmaSmokeParams) {
        let MmaSmokeParams { out, a, b } = p;
        if arch::block_dim_x() != SM100_SMOKE_M as u32 {
            arch::trap();
        }
        // SAFETY: this kernel is the only user of the block's dynamic shared
        // memory; block barriers and the MMA barrier order its accesses.
        let smem = unsafe { arch::dynamic_smem::<Sm100SmokeLayout>() };
        let sa = smem_field!(smem, Sm100SmokeLayout, a);
        let sb = smem_field!(smem, Sm100SmokeLayout, b);
        let bar = BarrierRef::new(smem_field!(smem, Sm100SmokeLayout, bar));
        let tmem_slot = smem_field!(smem, Sm100SmokeLayout, tmem_addr);
        let tid = arch::thread_idx_x() as usize;
        let warp = arch::warp_idx();
        const WORDS_PER_ROW: usize = SM100_SMOKE_K / 2;

        // 1. Stage A (8 words per thread) and B (2 words per thread).
        for i in 0..WORDS_PER_ROW {
            let w = tid * WORDS_PER_ROW + i;
            // SAFETY: w < 128 * 8, a holds 128 rows of 8 words.
            let v = unsafe { a.add(w).read_volatile() };
            st_shared_u32(
                sa.at(core_matrix_word(w / WORDS_PER_ROW, w % WORDS_PER_ROW)),
                v,
            );
        }
        for i in 0..2 {
            let w = tid * 2 + i;
            // SAFETY: w < 256 = 32 rows of 8 words of b.
            let v = unsafe { b.add(w).read_volatile() };
            st_shared_u32(
                sb.at(core_matrix_word(w / WORDS_PER_ROW, w % WORDS_PER_ROW)),
                v,
            );
        }
        arch::fence_proxy_async_shared();

        // 2. TMEM allocation and the barrier.
        if warp == 0 {
            // SAFETY: the whole of warp 0, converged; it deallocates below.
            unsafe {
                tmem::alloc::<TMEM_COLS>(tmem_slot);
                tmem::relinquish_alloc_permit();
            }
        }
        if tid == 0 {
            // SAFETY: one thread, before the block barrier below.
            unsafe { bar.init(1) };
            arch::fence_barrier_init();
        }
        fence_before_thread_sync();
        arch::sync_threads();
        fence_after_thread_sync();
        let d = TmemAddr(ld_shared_u32(tmem_slot));

        // 3. One MMA, committed to the barrier.
        if warp == 0 && arch::elect_one() {
            const IDESC: InstrDescriptor = InstrDescriptor::f16(
                F16Type::Bf16,
                AccType::F32,
                SM100_SMOKE_M as u32,
                SM100_SMOKE_N as u32,
                Major::K,
                Major::K,
            );
            let da = SmemDescriptor::new(
                sa.addr(),
                SmemLayout::Interleave,
                LEADING_BYTES,
                STRIDE_BYTES,
            );
            let db = SmemDescriptor::new(
                sb.addr(),
                SmemLayout::Interleave,
                LEADING_BYTES,
                STRIDE_BYTES,
            );
            // SAFETY: one thread; A and B were stored, fenced to the async proxy
            // and published by the block barrier; `d` is 32 live columns (N = 32);
            // the barrier counts this one commit.
            unsafe {
                mma_f16_ss(d, da, db, IDESC, false);
                commit(bar);
            }
        }

        // 4. Epilogue: each warp reads its 32 rows.
        bar.wait_parity(0, || WaitSite {
            pipeline: c"sm100_smoke",
            role: Role::Consumer,
            stage: 0,
            phase: 0,
        });
        fence_after_thread_sync();
        let q = d.warp_quarter(warp);
        // SAFETY (all loads): all 32 lanes of each warp, its own lane quarter,
        // columns inside the 32-column allocation; the MMA completed (commit
        // barrier) and the fence orders these loads after it.
        let row = unsafe { tmem::ld_32x32b_x32(q) };
        let out_row = tid * 2 * SM100_SMOKE_N;
        for (j, v) in row.iter().enumerate() {
            // SAFETY: tid < 128 rows of 64 words.
            unsafe { out.add(out_row + j).write_volatile(*v) };
        }
        // The same 32 columns again, through every narrower width.
        let mut again = [0u32; SM100_SMOKE_N];
        // SAFETY: as above; columns 16..32 are inside the allocation.
        unsafe {
            again[0..16].copy_from_slice(&tmem::ld_32x32b_x16(q));
            again[16..24].copy_from_slice(&tmem::ld_32x32b_x8(q.offset(0, 16)));
            again[24..28].copy_from_slice(&tmem::ld_32x32b_x4(q.offset(0, 24)));
            again[28..30].copy_from_slice(&tmem::ld_32x32b_x2(q.offset(0, 28)));
            again[30..31].copy_from_slice(&tmem::ld_32x32b_x1(q.offset(0, 30)));
            again[31..32].copy_from_slice(&tmem::ld_32x32b_x1(q.offset(0, 31)));
        }
        for (j, v) in again.iter().enumerate() {
            // SAFETY: tid < 128 rows of 64 words.
            unsafe { out.add(out_row + SM100_SMOKE_N + j).write_volatile(*v) };
        }

        // 5. Free the columns once every warp's loads are done. The kernel issues
        // no `tcgen05.st`, so `wait_st` returns at once; it is here so that ptxas
        // checks it too.
        tmem::wait_st();
        fence_before_thread_sync();
        arch::sync_threads();
        if warp == 0 {
            fence_after_thread_sync();
            // SAFETY: warp 0 allocated these columns; every load completed
            // (`ld_32x32b_x16` waits) and is ordered before this by the fence and
            // barrier above.
            unsafe { tmem::dealloc::<TMEM_COLS>(d) };
        }
    }
}

baton::kernel! {
    #[spec(abi::COMMIT_PAIR)]
    /// The multicast `tcgen05.commit` of a CTA pair: thread 0 of CTA 0 commits
    /// (with no MMA outstanding, so the arrivals come at once) to the barrier of
    /// both CTAs; each CTA waits for its barrier and writes `1` to
    /// `out[cluster rank]`.
    ///
    /// Launch: grid (2,1,1), cluster (2,1,1), block (32,1,1), at least 8 bytes
    /// of dynamic shared memory.
    ///
    /// # Safety
    /// `out` holds 2 writable words of device memory.
    pub fn baton_sm100_commit_pair(p: CommitPairParams) {
        let CommitPairParams { out } = p;
        if arch::cluster_size() != 2 || arch::block_dim_x() != 32 {
            arch::trap();
        }
        // SAFETY: the kernel is the only user of its dynamic shared memory.
        let smem = unsafe { arch::dynamic_smem::<CommitPairLayout>() };
        let bar = BarrierRef::new(smem_field!(smem, CommitPairLayout, bar));
        let rank = arch::cluster_cta_rank();
        let tid = arch::thread_idx_x();
        if tid == 0 {
            // SAFETY: one thread initializes, before the cluster barrier.
            unsafe { bar.init(1) };
            arch::fence_barrier_init();
        }
        arch::cluster_sync();
        if rank == 0 && tid == 0 {
            // SAFETY: both CTAs of the cluster initialized their barrier at this
            // offset before the cluster barrier; each counts one arrival.
            unsafe { commit_multicast(bar, 0b11) };
        }
        bar.wait_parity(0, || WaitSite {
            pipeline: c"sm100_commit_pair",
            role: Role::Consumer,
            stage: 0,
            phase: 0,
        });
        if tid == 0 {
            // SAFETY: rank < 2, out holds 2 words.
            unsafe { out.add(rank as usize).write_volatile(1) };
        }
        // Keeps each CTA's barrier alive until the peer's arrival has landed.
        arch::cluster_sync();
    }
}

baton::kernel! {
    #[spec(abi::PAIR_MMA)]
    /// The CTA-pair MMA: `D = A·Bᵀ` with M = 256, N = 32, K = 16 over a cluster
    /// of two CTAs (`cta_group::2`). CTA `r` holds rows `128 r ..` of A and rows
    /// `16 r ..` of B; the leader (rank 0) issues one `tcgen05.mma.cta_group::2`
    /// and commits it to both CTAs' barriers; each CTA reads its 128 rows of D
    /// from its own TMEM. Assembled, never run.
    ///
    /// Launch: grid (2,1,1), cluster (2,1,1), block (128,1,1), at least
    /// `size_of::<PairMmaLayout>()` of dynamic shared memory. `a`: 256 × 16 bf16,
    /// `b`: 32 × 16 bf16 (Bᵀ), row-major bits; `out`: 256 × 32 f32 bits.
    ///
    /// # Safety
    /// The buffers are device memory of those sizes; launched as above on an
    /// sm_100a GPU.
    pub fn baton_sm100_pair_mma(p: MmaSmokeParams) {
        let MmaSmokeParams { out, a, b } = p;
        if arch::cluster_size() != 2 || arch::block_dim_x() != SM100_SMOKE_M as u32 {
            arch::trap();
        }
        // SAFETY: the kernel is the only user of its dynamic shared memory; the
        // cluster barriers and the MMA barrier order the accesses.
        let smem = unsafe { arch::dynamic_smem::<PairMmaLayout>() };
        let sa = smem_field!(smem, PairMmaLayout, a);
        let sb = smem_field!(smem, PairMmaLayout, b);
        let bar = BarrierRef::new(smem_field!(smem, PairMmaLayout, bar));
        let tmem_slot = smem_field!(smem, PairMmaLayout, tmem_addr);
        let rank = arch::cluster_cta_rank() as usize;
        let tid = arch::thread_idx_x() as usize;
        let warp = arch::warp_idx();
        const WORDS_PER_ROW: usize = SM100_SMOKE_K / 2;
        const B_ROWS: usize = SM100_SMOKE_N / 2;

        // This CTA's rows of A (8 words per thread) and of B (one word per
        // thread): same offsets in both CTAs, as the pair MMA reads them.
        for i in 0..WORDS_PER_ROW {
            let w = tid * WORDS_PER_ROW + i;
            // SAFETY: a holds 256 rows of 8 words; this CTA reads rows 128 r ...
            let v = unsafe {
                a.add(rank * SM100_SMOKE_M * WORDS_PER_ROW + w)
                    .read_volatile()
            };
            st_shared_u32(
                sa.at(core_matrix_word(w / WORDS_PER_ROW, w % WORDS_PER_ROW)),
                v,
            );
        }
        // SAFETY: tid < 128 = 16 rows of 8 words; b holds 32 rows.
        let v = unsafe { b.add(rank * B_ROWS * WORDS_PER_ROW + tid).read_volatile() };
        st_shared_u32(
            sb.at(core_matrix_word(tid / WORDS_PER_ROW, tid % WORDS_PER_ROW)),
            v,
        );
        arch::fence_proxy_async_shared();

        if warp == 0 {
            // SAFETY: warp 0 of each CTA of the pair, converged, same offset;
            // it deallocates below.
            unsafe {
                tmem::alloc_pair::<TMEM_COLS>(tmem_slot);
                tmem::relinquish_alloc_permit_pair();
            }
        }
        if tid == 0 {
            // SAFETY: one thread, before the cluster barrier below.
            unsafe { bar.init(1) };
            arch::fence_barrier_init();
        }
        // Publishes both CTAs' operands, barriers and allocation to the leader.
        fence_before_thread_sync();
        arch::cluster_sync();
        fence_after_thread_sync();
        let d = TmemAddr(ld_shared_u32(tmem_slot));

        if rank == 0 && warp == 0 && arch::elect_one() {
            const IDESC: InstrDescriptor = InstrDescriptor::f16_pair(
                F16Type::Bf16,
                AccType::F32,
                2 * SM100_SMOKE_M as u32,
                SM100_SMOKE_N as u32,
                Major::K,
                Major::K,
            );
            let da = SmemDescriptor::new(
                sa.addr(),
                SmemLayout::Interleave,
                LEADING_BYTES,
                STRIDE_BYTES,
            );
            let db = SmemDescriptor::new(
                sb.addr(),
                SmemLayout::Interleave,
                LEADING_BYTES,
                STRIDE_BYTES,
            );
            // SAFETY: one thread of the leader; both CTAs' operands published by
            // the cluster barrier; `d` from alloc_pair; each barrier counts the
            // one multicast arrival.
            unsafe {
                mma_f16_ss_pair(d, da, db, IDESC, false);
                commit_pair_multicast(bar, 0b11);
            }
        }

        bar.wait_parity(0, || WaitSite {
            pipeline: c"sm100_pair_mma",
            role: Role::Consumer,
            stage: 0,
            phase: 0,
        });
        fence_after_thread_sync();
        // SAFETY: each warp, its lane quarter, 32 columns of the allocation; the
        // pair MMA completed (commit barrier) and the fence orders the load.
        let row = unsafe { tmem::ld_32x32b_x32(d.warp_quarter(warp)) };
        let out_row = (rank * SM100_SMOKE_M + tid) * SM100_SMOKE_N;
        for (j, v) in row.iter().enumerate() {
            // SAFETY: out holds 256 rows of 32 words.
            unsafe { out.add(out_row + j).write_volatile(*v) };
        }

        // Both CTAs' loads are done before the pair frees the columns.
        fence_before_thread_sync();
        arch::cluster_sync();
        if warp == 0 {
            fence_after_thread_sync();
            // SAFETY: warp 0 of each CTA allocated these columns with
            // alloc_pair; every load completed and is ordered before this.
            unsafe { tmem::dealloc_pair::<TMEM_COLS>(d) };
        }
    }
}

baton::kernel! {
    #[spec(abi::BLOCK_SCALED)]
    /// The block-scaled `tcgen05` path with `cta_group::1`, **assembled only**
    /// (its data layout is not a verified contract): 128 threads, 1 CTA. Stages operands from `src` (2048 words) and scale factors
    /// (512 words) into shared memory, stores ones into TMEM with `tcgen05.st`
    /// (every 32x32b width), copies scale factors with every `tcgen05.cp` shape,
    /// issues the MXFP8 and NVFP4 MMAs, commits, and writes the accumulator
    /// (128 × 32 words) to `out`.
    ///
    /// # Safety
    /// `src` holds 2560 readable words and `out` 128 × 32 writable words;
    /// 128 threads, `size_of::<Sm100BlockScaledLayout>()` of dynamic shared memory,
    /// an sm_100a GPU.
    pub fn baton_sm100_block_scaled(p: BlockScaledParams) {
        let BlockScaledParams { out, src } = p;
        // SAFETY: forwarded.
        unsafe { block_scaled::<false>(out, src) }
    }
}

baton::kernel! {
    #[spec(abi::BLOCK_SCALED_PAIR)]
    /// [`baton_sm100_block_scaled`] with `cta_group::2` (a kernel may not mix
    /// the two): a cluster of 2, the leader CTA's thread issues the pair MMAs
    /// and multicasts the commit. Assembled only.
    ///
    /// # Safety
    /// As [`baton_sm100_block_scaled`], launched as clusters of 2 CTAs.
    pub fn baton_sm100_block_scaled_pair(p: BlockScaledParams) {
        let BlockScaledParams { out, src } = p;
        // SAFETY: forwarded.
        unsafe { block_scaled::<true>(out, src) }
    }
}

#[inline(always)]
unsafe fn block_scaled<const PAIR: bool>(out: *mut u32, src: *const u32) {
    use baton::arch::sm100::mma::{
        BlockScaledDescriptor, BlockScaledType, ScaleType, mma_mxf4nvf4_ss, mma_mxf4nvf4_ss_pair,
        mma_mxf8f6f4_ss, mma_mxf8f6f4_ss_pair,
    };
    // SAFETY: this kernel is the only user of the block's dynamic shared
    // memory; block/cluster barriers and the MMA barrier order its accesses.
    let smem = unsafe { arch::dynamic_smem::<Sm100BlockScaledLayout>() };
    let sa = smem_field!(smem, Sm100BlockScaledLayout, a);
    let sb = smem_field!(smem, Sm100BlockScaledLayout, b);
    let ssf = smem_field!(smem, Sm100BlockScaledLayout, sf);
    let bar = BarrierRef::new(smem_field!(smem, Sm100BlockScaledLayout, bar));
    let tmem_slot = smem_field!(smem, Sm100BlockScaledLayout, tmem_addr);
    let tid = arch::thread_idx_x() as usize;
    let warp = arch::warp_idx();
    let pair = PAIR;
    let leader = !pair || arch::cluster_cta_rank() == 0;

    for i in 0..16 {
        let w = tid * 16 + i;
        // SAFETY: w < 2048 <= src's words.
        let v = unsafe { src.add(w).read_volatile() };
        if w < 1024 {
            st_shared_u32(sa.at(w), v);
        } else {
            st_shared_u32(sb.at(w - 1024), v);
        }
    }
    for i in 0..4 {
        let w = tid * 4 + i;
        // SAFETY: 2048 + w < 2560.
        st_shared_u32(ssf.at(w), unsafe { src.add(2048 + w).read_volatile() });
    }
    arch::fence_proxy_async_shared();

    if warp == 0 {
        // SAFETY: the whole of warp 0 (of each CTA of the pair), converged;
        // it deallocates below.
        unsafe {
            if pair {
                tmem::alloc_pair::<64>(tmem_slot);
                tmem::relinquish_alloc_permit_pair();
            } else {
                tmem::alloc::<64>(tmem_slot);
                tmem::relinquish_alloc_permit();
            }
        }
    }
    if tid == 0 {
        // SAFETY: one thread, before the barrier below.
        unsafe { bar.init(1) };
        arch::fence_barrier_init();
    }
    fence_before_thread_sync();
    arch::cluster_sync();
    fence_after_thread_sync();
    let base = TmemAddr(ld_shared_u32(tmem_slot));
    // Columns 0..32: accumulator; 32..40: SFA; 40..48: SFB; 48..64: st test.
    let (d, sfa, sfb) = (base, base.offset(0, 32), base.offset(0, 40));

    // Every tcgen05.st width into this warp's quarter of columns 48..64.
    let q = base.warp_quarter(warp).offset(0, 48);
    // SAFETY: all 32 lanes, own quarter, inside the 64-column allocation; no
    // MMA touches columns 48..64; wait_st before the barrier below.
    unsafe {
        tmem::st_32x32b_x1(q, [1]);
        tmem::st_32x32b_x2(q.offset(0, 1), [1; 2]);
        tmem::st_32x32b_x4(q.offset(0, 3), [1; 4]);
        tmem::st_32x32b_x8(q.offset(0, 7), [1; 8]);
        tmem::st_32x32b_x16(q, [2; 16]);
        tmem::st_32x32b_x32(d.warp_quarter(warp), [0; 32]);
    }
    tmem::wait_st();
    fence_before_thread_sync();
    arch::cluster_sync();
    fence_after_thread_sync();

    if leader && warp == 0 && arch::elect_one() {
        let desc = |addr: u32| SmemDescriptor::new(addr, SmemLayout::Interleave, 128, 256);
        let sf = SmemDescriptor::new(ssf.addr(), SmemLayout::Interleave, 0, 128);
        // SAFETY: one thread; operands and scale factors stored, fenced and
        // published by the cluster barrier; every TMEM address is inside
        // the 64-column allocation; the barrier counts one commit.
        unsafe {
            if pair {
                tmem::cp_32x128b_warpx4_pair(sfa, sf);
                tmem::cp_32x128b_warpx4_pair(sfb, sf.advance(512));
                let i8 = BlockScaledDescriptor::mxf8f6f4_pair(
                    BlockScaledType::E4m3,
                    BlockScaledType::E5m2,
                    256,
                    32,
                );
                mma_mxf8f6f4_ss_pair(d, desc(sa.addr()), desc(sb.addr()), i8, sfa, sfb, false);
                let i4 = BlockScaledDescriptor::nvf4_pair(ScaleType::Ue4m3, 256, 32);
                mma_mxf4nvf4_ss_pair(d, desc(sa.addr()), desc(sb.addr()), i4, sfa, sfb, true);
                commit_pair_multicast(bar, 0b11);
            } else {
                tmem::cp_32x128b_warpx4(sfa, sf);
                tmem::cp_128x128b(sfb, sf.advance(512));
                tmem::cp_4x256b(sfb.offset(0, 4), sf.advance(1024));
                let i8 = BlockScaledDescriptor::mxf8f6f4(
                    BlockScaledType::E4m3,
                    BlockScaledType::E4m3,
                    128,
                    32,
                )
                .with_scale_ids(1, 1);
                mma_mxf8f6f4_ss(d, desc(sa.addr()), desc(sb.addr()), i8, sfa, sfb, false);
                let i4 = BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, 128, 32);
                mma_mxf4nvf4_ss(d, desc(sa.addr()), desc(sb.addr()), i4, sfa, sfb, true);
                commit(bar);
            }
        }
    }
    bar.wait_parity(0, || WaitSite {
        pipeline: c"sm100_block_scaled",
        role: Role::Consumer,
        stage: 0,
        phase: 0,
    });
    fence_after_thread_sync();
    // SAFETY: each warp, its lane quarter, 32 allocated columns; the MMAs
    // completed (commit barrier), ordered by the fence.
    let row = unsafe { tmem::ld_32x32b_x32(d.warp_quarter(warp)) };
    let extra = unsafe { tmem::ld_32x32b_x1(q) };
    for (j, v) in row.iter().enumerate() {
        // SAFETY: tid < 128 rows of 32 words.
        unsafe { out.add(tid * 32 + j).write_volatile(*v ^ extra[0]) };
    }
    fence_before_thread_sync();
    arch::cluster_sync();
    if warp == 0 {
        fence_after_thread_sync();
        // SAFETY: warp 0 allocated these 64 columns; every access to them
        // completed and is ordered before this.
        unsafe {
            if pair {
                tmem::dealloc_pair::<64>(base);
            } else {
                tmem::dealloc::<64>(base);
            }
        }
    }
}
