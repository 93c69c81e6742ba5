//! One CTA of the forward pass: setup, the TMA producer, and the two
//! consumer warpgroups (S = Q·Kᵀ, online softmax, O += P·V, O out by TMA).
//!
//! Protocol (both pipelines `InputTilePipeline`, consumer count 2: one
//! arrival per consumer warpgroup, by its thread 0):
//! * `q` (one stage): the producer fills it once (Q's `2·NB` boxes); each
//!   warpgroup waits on it, reads its 64 rows for every S, writes its O
//!   over them, and frees it once its O stores have read shared memory.
//! * `kv` (`STAGES` stages): the producer fills block `j`'s K and V; both
//!   warpgroups wait on it, and each frees it once the `wgmma`s that read it
//!   have retired (`wait_group<0>` after P·V).

use crate::math::{exp2, log2, pack_bf16x2, quad_max, quad_sum};
use crate::pv::PvMma;
use baton::arch::ptx::tma::{
    load_3d, prefetch_tensormap, store_3d, store_commit_group, store_wait_group,
};
use baton::arch::ptx::wgmma::{self, SmemLayout, descriptor_k_major, descriptor_mn_major};
use baton::arch::ptx::{
    block_idx_x, block_idx_y, dynamic_smem, fence_proxy_async_shared, grid_dim_x,
    named_barrier_sync, st_shared_u32, thread_idx_x,
};
use baton::smem_field;
use baton::tensor_map::Swizzle;
use baton::tile_pipeline::InputTilePipeline;
use baton_attention_abi::{
    AttentionParams, AttnSmem, BM, CONSUMER_WARPGROUPS, KvPayload, KvStage, QPayload, QStage,
    layout::QBox,
};
use baton_kernel_roles::dispatch_roles;
use baton_kernel_roles::sm90::dispatch::{GEMM_ROLES, init_then_sync};
use baton_kernel_roles::sm90::mainloop_bf16::Bf16Mma;

/// TMA coordinates of column `c`, row `row`, head `head` of tensor `t`
/// (bit `t` of `heads_inner`: dims `{d, heads, seq}`).
#[inline(always)]
fn coords(heads_inner: u32, t: u32, c: u32, row: u32, head: u32) -> (i32, i32, i32) {
    if heads_inner & (1 << t) != 0 {
        (c as i32, head as i32, row as i32)
    } else {
        (c as i32, row as i32, head as i32)
    }
}

/// Bytes of one 64 × 64 bf16 box.
const BOX_BYTES: u32 = 64 * 128;
/// ln 2: logsumexp from log2 units.
const LN_2: f32 = core::f32::consts::LN_2;

/// The forward pass of one CTA, for head dimension `64·NB`, `BN`-row K/V
/// blocks, `STAGES` K/V stages; `SACC = BN/2` and `OACC = 32·NB` accumulator
/// registers; `S` the Q·Kᵀ shape (N = BN), `O` the P·V shape (N = 64·NB).
#[inline(always)]
pub fn run<
    const NB: usize,
    const BN: usize,
    const STAGES: usize,
    const SACC: usize,
    const OACC: usize,
    S: Bf16Mma<SACC>,
    O: PvMma<OACC>,
>(
    p: &AttentionParams,
) {
    // SAFETY: launched with the module's dynamic shared memory,
    // size_of::<AttnSmem<..>>() on the device (the spec).
    let smem = unsafe { dynamic_smem::<AttnSmem<NB, BN, STAGES>>() };
    let kv = InputTilePipeline::<KvPayload<NB, BN>, STAGES>::new(
        smem_field!(smem, AttnSmem<NB, BN, STAGES>, kv),
        c"attn_kv",
    );
    let q = InputTilePipeline::<QPayload<NB>, 1>::new(
        smem_field!(smem, AttnSmem<NB, BN, STAGES>, q),
        c"attn_q",
    );

    let tiles = grid_dim_x();
    // Causal: tile t has t+1 K/V blocks or so; the longest start first.
    let qt = if p.causal != 0 { tiles - 1 - block_idx_x() } else { block_idx_x() };
    let head = block_idx_y() % p.q_heads;
    let batch = block_idx_y() / p.q_heads;
    let kv_head = head / p.heads_per_kv_head;
    let (map_q, map_k, map_v, map_o) = (
        p.q_maps.wrapping_add(batch as usize),
        p.k_maps.wrapping_add(batch as usize),
        p.v_maps.wrapping_add(batch as usize),
        p.o_maps.wrapping_add(batch as usize),
    );

    init_then_sync::<1>(|| {
        // SAFETY: the host passes `batch` live maps per tensor in global memory.
        unsafe {
            prefetch_tensormap(map_q);
            prefetch_tensormap(map_k);
            prefetch_tensormap(map_v);
            prefetch_tensormap(map_o);
        }
        kv.init(CONSUMER_WARPGROUPS);
        q.init(CONSUMER_WARPGROUPS);
    });

    let q_row0 = qt * BM;
    let bn = BN as u32;
    let all_blocks = p.seq_kv.div_ceil(bn);
    let blocks = if p.causal != 0 {
        // Top-left causal: row i sees columns 0..=i; the tile's last row is
        // min(q_row0 + 127, seq_q - 1).
        let last_row = (q_row0 + BM).min(p.seq_q) - 1;
        all_blocks.min(last_row / bn + 1)
    } else {
        all_blocks
    };

    dispatch_roles!(GEMM_ROLES, c_load_active: false,
        producer => {
            let mut qp = q.producer();
            let stage = qp.acquire_stage();
            stage.arrive_expect_tx();
            let rows = smem_field!(stage.tiles(), QStage<NB>, rows);
            for wg in 0..2 {
                for b in 0..NB {
                    // SAFETY: the producer holds the stage; its full barrier
                    // expects all 2·NB boxes.
                    let (c0, c1, c2) = coords(p.heads_inner, 0, 64 * b as u32, q_row0 + 64 * wg as u32, head);
                    unsafe { load_3d(map_q, rows.at(wg).at(b), stage.barrier(), c0, c1, c2) };
                }
            }
            stage.release();
            let mut kvp = kv.producer();
            for j in 0..blocks {
                let stage = kvp.acquire_stage();
                stage.arrive_expect_tx();
                let t = stage.tiles();
                let (k, v) = (smem_field!(t, KvStage<NB, BN>, k), smem_field!(t, KvStage<NB, BN>, v));
                for b in 0..NB {
                    // SAFETY: as above; K and V boxes zero-fill past seq_kv.
                    let (k0, k1, k2) = coords(p.heads_inner, 1, 64 * b as u32, j * bn, kv_head);
                    let (v0, v1, v2) = coords(p.heads_inner, 2, 64 * b as u32, j * bn, kv_head);
                    unsafe {
                        load_3d(map_k, k.at(b), stage.barrier(), k0, k1, k2);
                        load_3d(map_v, v.at(b), stage.barrier(), v0, v1, v2);
                    }
                }
                stage.release();
            }
            kvp.drain();
            qp.drain();
        },
        c_load => {},
        consumer(wg) => {
            let tid = thread_idx_x() % 128;
            let (warp, lane) = (tid / 32, tid % 32);
            // This thread's two accumulator rows, in the head.
            let wg_row0 = q_row0 + 64 * wg;
            let rows = [wg_row0 + 16 * warp + lane / 4, wg_row0 + 16 * warp + lane / 4 + 8];
            let causal = p.causal != 0;

            let mut qc = q.consumer();
            let q_stage = qc.acquire_stage();
            let q_base = smem_field!(q_stage.tiles(), QStage<NB>, rows).at(wg as usize).at(0).addr();
            let st0 = kv.stage(0);
            let k_base = smem_field!(st0, KvStage<NB, BN>, k).addr();
            let v_base = smem_field!(st0, KvStage<NB, BN>, v).addr();
            let stage_bytes = core::mem::size_of::<KvStage<NB, BN>>() as u32;
            let kv_box_bytes = bn * 128;

            // SAFETY: all-zero is a valid [f32; OACC]; `zeroed` (not `[0.0; N]`,
            // a store loop for large N) keeps it in registers.
            let mut o: [f32; OACC] = unsafe { core::mem::zeroed() };
            // Running row max (raw scores) and partial row sum, rows 0 and 1.
            let (mut m0, mut m1) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
            let (mut l0, mut l1) = (0f32, 0f32);
            let mut kvc = kv.consumer();
            for j in 0..blocks {
                let stage = kvc.acquire_stage();
                let (kb, vb) = (k_base + stage.index() * stage_bytes, v_base + stage.index() * stage_bytes);

                // S = Q·Kᵀ: K = the head dimension, 16 per wgmma.
                // SAFETY: as for `o`; the first wgmma overwrites it (scale-d 0).
                let mut s: [f32; SACC] = unsafe { core::mem::zeroed() };
                wgmma::fence();
                crate::unroll_below!(KK < 4 * NB, {
                    let (bx, off) = (KK / 4, (KK % 4) * 32);
                    let da = descriptor_k_major(q_base + bx * BOX_BYTES + off, SmemLayout::Swizzle128B);
                    let db = descriptor_k_major(kb + bx * kv_box_bytes + off, SmemLayout::Swizzle128B);
                    // SAFETY: Q and this stage are loaded (waited) and stay
                    // until the wait below retires these MMAs.
                    unsafe { S::mma(&mut s, da, db, KK > 0) };
                });
                wgmma::commit_group();
                wgmma::wait_group::<0>();

                // Masks only where a block reaches past seq_kv or, causal,
                // past this warpgroup's first row (the diagonal blocks).
                // Accumulator chunk c (elements 4c..4c+4): columns 8c + 2·(lane%4)
                // + {0, 1}, of row 0 (elements 4c, 4c+1) and row 1 (4c+2, 4c+3).
                let col0 = j * bn;
                if col0 + bn > p.seq_kv || (causal && col0 + bn > wg_row0 + 1) {
                    crate::unroll_below!(C < SACC / 4, {
                        let c = C as usize;
                        let col = col0 + 8 * C + 2 * (lane % 4);
                        for e in 0..2u32 {
                            let dead = col + e >= p.seq_kv;
                            if dead || (causal && col + e > rows[0]) {
                                s[4 * c + e as usize] = f32::NEG_INFINITY;
                            }
                            if dead || (causal && col + e > rows[1]) {
                                s[4 * c + 2 + e as usize] = f32::NEG_INFINITY;
                            }
                        }
                    });
                }

                // Online softmax: new row max, rescale factor, exp2.
                let (mut mx0, mut mx1) = (m0, m1);
                crate::unroll_below!(C < SACC / 4, {
                    let c = C as usize;
                    mx0 = mx0.max(s[4 * c].max(s[4 * c + 1]));
                    mx1 = mx1.max(s[4 * c + 2].max(s[4 * c + 3]));
                });
                mx0 = quad_max(mx0);
                mx1 = quad_max(mx1);
                // A row with nothing unmasked yet keeps base 0 (exp2(-inf) = 0).
                let base0 = if mx0 == f32::NEG_INFINITY { 0.0 } else { mx0 * p.scale_log2 };
                let base1 = if mx1 == f32::NEG_INFINITY { 0.0 } else { mx1 * p.scale_log2 };
                let corr0 = exp2(m0 * p.scale_log2 - base0);
                let corr1 = exp2(m1 * p.scale_log2 - base1);
                m0 = mx0;
                m1 = mx1;
                l0 *= corr0;
                l1 *= corr1;
                crate::unroll_below!(C < SACC / 4, {
                    let c = 4 * C as usize;
                    s[c] = exp2(s[c] * p.scale_log2 - base0);
                    s[c + 1] = exp2(s[c + 1] * p.scale_log2 - base0);
                    s[c + 2] = exp2(s[c + 2] * p.scale_log2 - base1);
                    s[c + 3] = exp2(s[c + 3] * p.scale_log2 - base1);
                    l0 += s[c] + s[c + 1];
                    l1 += s[c + 2] + s[c + 3];
                });
                crate::unroll_below!(C < OACC / 4, {
                    let c = 4 * C as usize;
                    o[c] *= corr0;
                    o[c + 1] *= corr0;
                    o[c + 2] *= corr1;
                    o[c + 3] *= corr1;
                });

                // O += P·V: K = the block's rows, 16 per wgmma; P's fragment
                // for rows 16kk..16kk+16 is accumulator elements 8kk..8kk+8.
                wgmma::fence();
                crate::unroll_below!(KK < BN / 16, {
                    let kk = KK as usize;
                    let a = [
                        pack_bf16x2(s[8 * kk], s[8 * kk + 1]),
                        pack_bf16x2(s[8 * kk + 2], s[8 * kk + 3]),
                        pack_bf16x2(s[8 * kk + 4], s[8 * kk + 5]),
                        pack_bf16x2(s[8 * kk + 6], s[8 * kk + 7]),
                    ];
                    let db = descriptor_mn_major(vb + 16 * 128 * kk as u32, SmemLayout::Swizzle128B, kv_box_bytes, 1024);
                    // SAFETY: as for S; `a` was written before the fence.
                    unsafe { O::mma(&mut o, a, db) };
                });
                wgmma::commit_group();
                wgmma::wait_group::<0>();
                stage.defer_release().release_if(tid == 0);
            }

            // Epilogue: O / l, logsumexp, O over this warpgroup's Q rows, TMA stores.
            let (l0, l1) = (quad_sum(l0), quad_sum(l1));
            let inv0 = if l0 > 0.0 { 1.0 / l0 } else { 0.0 };
            let inv1 = if l1 > 0.0 { 1.0 / l1 } else { 0.0 };
            if !p.lse.is_null() && lane % 4 == 0 {
                for (row, mr, lr) in [(rows[0], m0, l0), (rows[1], m1, l1)] {
                    if row < p.seq_q {
                        let idx = block_idx_y() as usize * p.seq_q as usize + row as usize;
                        // SAFETY: lse holds batch·q_heads·seq_q floats (host
                        // contract); block_idx_y = batch·q_heads + head.
                        unsafe { p.lse.add(idx).write((mr * p.scale_log2 + log2(lr)) * LN_2) };
                    }
                }
            }
            let row0_bytes = (16 * warp + lane / 4) * 128;
            crate::unroll_below!(C < OACC / 4, {
                let c = 4 * C as usize;
                let col = 8 * C + 2 * (lane % 4);
                let box_base = q_base + (col / 64) * BOX_BYTES;
                let b0 = (row0_bytes + (col % 64) * 2) as usize;
                // SAFETY: this warpgroup's own rows of the Q stage (which it
                // holds; its last reads retired with the wait above).
                unsafe {
                    st_shared_u32(box_base + Swizzle::B128.apply(b0) as u32, pack_bf16x2(o[c] * inv0, o[c + 1] * inv0));
                    st_shared_u32(box_base + Swizzle::B128.apply(b0 + 8 * 128) as u32, pack_bf16x2(o[c + 2] * inv1, o[c + 3] * inv1));
                }
            });
            fence_proxy_async_shared();
            named_barrier_sync(1 + wg, 128);
            let out = smem_field!(q_stage.tiles(), QStage<NB>, rows).at(wg as usize);
            if tid == 0 {
                for b in 0..NB {
                    let tile: baton::smem::SharedRef<'_, QBox> = out.at(b);
                    // SAFETY: O's map per the kernel contract; the stores clip at seq_q.
                    let (c0, c1, c2) = coords(p.heads_inner, 3, 64 * b as u32, wg_row0, head);
                    unsafe { store_3d(map_o, tile, c0, c1, c2) };
                }
                store_commit_group();
                store_wait_group::<0>();
            }
            q_stage.defer_release().release_if(tid == 0);
        },
    );
}
