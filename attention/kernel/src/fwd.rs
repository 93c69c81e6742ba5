//! One CTA of the forward pass: setup, the TMA producer, and the two
//! consumer warpgroups (S = Q·Kᵀ, online softmax, O += P·V, O out by TMA).
//!
//! Protocol (both pipelines `InputTilePipeline`, consumer count 2: one
//! arrival per consumer warpgroup, by its thread 0):
//! * `q` (one stage): the producer fills it once (Q's `2·NB` boxes); each
//!   warpgroup waits on it, reads its 64 rows for every S, writes its O
//!   over them, and frees it once its O stores have read shared memory.
//! * `k` and `v` (`STAGES` stages each): the producer fills block `j`'s K,
//!   then its V; both warpgroups wait on each, and each frees a K stage once
//!   S = Q·Kᵀ retired (`wait_group<1>`: the P·V behind it may still run) and
//!   a V stage once P·V retired (`wait_group<0>`).

use crate::math::{exp2, log2, pack_bf16x2, quad_max, quad_sum};
use crate::pv::PvMma;
use baton::arch::ptx::tma::{
    load_3d, prefetch_tensormap, store_3d, store_commit_group, store_wait_group,
};
use baton::arch::ptx::wgmma::{self, SmemLayout, descriptor_k_major, descriptor_mn_major};
use baton::arch::ptx::wgmma::{setmaxnreg_dec, setmaxnreg_inc};
use baton::arch::ptx::{
    block_idx_x, block_idx_y, dynamic_smem, fence_proxy_async_shared, grid_dim_x,
    named_barrier_sync, st_shared_u32, thread_idx_x,
};
use baton::arch::ptx::{elect_one, warp_idx};
use baton::ordered_barrier::OrderedBarrier;
use baton::smem_field;
use baton::tensor_map::Swizzle;
use baton::tile_pipeline::InputTilePipeline;
use baton_attention_abi::{
    AttentionParams, AttnSmem, BM, CONSUMER_WARPGROUPS, KvPayload, KvStage, QPayload, QStage,
    layout::QBox,
};
use baton_kernel_roles::sm90::dispatch::init_then_sync;
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

/// Registers per thread of the producer warpgroup (`setmaxnreg.dec`).
const PRODUCER_REGISTERS: u32 = 24;
/// Registers per thread of each consumer warpgroup (`setmaxnreg.inc`).
const CONSUMER_REGISTERS: u32 = 240;

/// The ordered barrier's name in hang reports.
const ORDER_NAME: &core::ffi::CStr = c"attn_pingpong";

/// First of the two ping-pong named barriers (ids 1, 2: the warpgroups'
/// epilogues; 0: `bar.sync 0`).
const TURN_BARRIER: u32 = 3;

/// `bar.arrive id, threads`: counts this warp towards named barrier `id`
/// without waiting.
#[inline(always)]
fn named_barrier_arrive(id: u32, threads: u32) {
    // SAFETY: a barrier arrival; `threads` matches every use of `id` (256:
    // one waiting and one arriving warpgroup).
    unsafe {
        core::arch::asm!("bar.arrive {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack))
    };
}

/// Bytes of one 64 × 64 bf16 box.
const BOX_BYTES: u32 = 64 * 128;
/// ln 2: logsumexp from log2 units.
const LN_2: f32 = core::f32::consts::LN_2;

/// The forward pass of one CTA, for head dimension `64·NB`, `BN`-row K/V
/// blocks, `SK` K and `SV` V stages; `SACC = BN/2` and `OACC = 32·NB` accumulator
/// registers, `PACK = BN/4` registers of P as bf16 pairs; `S` the Q·Kᵀ shape (N = BN), `O` the P·V shape (N = 64·NB).
#[inline(always)]
pub fn run<
    const NB: usize,
    const BN: usize,
    const SK: usize,
    const SV: usize,
    const SACC: usize,
    const OACC: usize,
    const PACK: usize,
    S: Bf16Mma<SACC>,
    O: PvMma<OACC>,
>(
    p: &AttentionParams,
) {
    // SAFETY: launched with the module's dynamic shared memory,
    // size_of::<AttnSmem<..>>() on the device (the spec).
    let smem = unsafe { dynamic_smem::<AttnSmem<NB, BN, SK, SV>>() };
    let kp = InputTilePipeline::<KvPayload<NB, BN>, SK>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV>, k),
        c"attn_k",
    );
    let vp = InputTilePipeline::<KvPayload<NB, BN>, SV>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV>, v),
        c"attn_v",
    );
    let q = InputTilePipeline::<QPayload<NB>, 1>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV>, q),
        c"attn_q",
    );

    let order_bars = smem_field!(smem, AttnSmem<NB, BN, SK, SV>, order);

    let tiles = grid_dim_x();
    // Causal: tile t has t+1 K/V blocks or so; the longest start first.
    let qt = if p.causal != 0 {
        tiles - 1 - block_idx_x()
    } else {
        block_idx_x()
    };
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
        // Every thread of the arriving warpgroup arrives: 128 per turn.
        OrderedBarrier::<1, 2>::new(order_bars, 0, ORDER_NAME).init(128);
        kp.init(CONSUMER_WARPGROUPS);
        vp.init(CONSUMER_WARPGROUPS);
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

    // Warpgroup 0: the producer (one lane of warp 0) with 24 registers per
    // thread; warpgroups 1 and 2: the consumers with 240 (FA3's split:
    // 128·(24 + 2·240) = 64512 of the SM's 65536 registers).
    let warpgroup = warp_idx() / 4;
    if warpgroup == 0 {
        setmaxnreg_dec::<PRODUCER_REGISTERS>();
        if warp_idx() == 0 && elect_one() {
            let mut qp = q.producer();
            let stage = qp.acquire_stage();
            stage.arrive_expect_tx();
            let rows = smem_field!(stage.tiles(), QStage<NB>, rows);
            for wg in 0..2 {
                for b in 0..NB {
                    // SAFETY: the producer holds the stage; its full barrier
                    // expects all 2·NB boxes.
                    let (c0, c1, c2) = coords(
                        p.heads_inner,
                        0,
                        64 * b as u32,
                        q_row0 + 64 * wg as u32,
                        head,
                    );
                    unsafe { load_3d(map_q, rows.at(wg).at(b), stage.barrier(), c0, c1, c2) };
                }
            }
            stage.release();
            let mut kprod = kp.producer();
            let mut vprod = vp.producer();
            // K_j, then V_j: one stage of each ring per K/V block.
            macro_rules! load_block {
                ($prod:expr, $map:expr, $t:expr, $j:expr) => {{
                    let stage = $prod.acquire_stage();
                    stage.arrive_expect_tx();
                    let boxes = smem_field!(stage.tiles(), KvStage<NB, BN>, boxes);
                    for b in 0..NB {
                        let (c0, c1, c2) = coords(p.heads_inner, $t, 64 * b as u32, $j * bn, kv_head);
                        // SAFETY: the producer holds the stage; its full
                        // barrier expects all NB boxes (zero-filled past seq_kv).
                        unsafe { load_3d($map, boxes.at(b), stage.barrier(), c0, c1, c2) };
                    }
                    stage.release();
                }};
            }
            for j in 0..blocks {
                load_block!(kprod, map_k, 1, j);
                load_block!(vprod, map_v, 2, j);
            }
            kprod.drain();
            vprod.drain();
            qp.drain();
        }
    } else {
        setmaxnreg_inc::<CONSUMER_REGISTERS>();
        let wg = warpgroup - 1;
        {
            let tid = thread_idx_x() % 128;
            let (warp, lane) = (tid / 32, tid % 32);
            // This thread's two accumulator rows, in the head.
            let wg_row0 = q_row0 + 64 * wg;
            let rows = [
                wg_row0 + 16 * warp + lane / 4,
                wg_row0 + 16 * warp + lane / 4 + 8,
            ];
            let causal = p.causal != 0;

            let mut qc = q.consumer();
            let q_stage = qc.acquire_stage();
            let q_base = smem_field!(q_stage.tiles(), QStage<NB>, rows)
                .at(wg as usize)
                .at(0)
                .addr();
            let k_base = smem_field!(kp.stage(0), KvStage<NB, BN>, boxes).addr();
            let v_base = smem_field!(vp.stage(0), KvStage<NB, BN>, boxes).addr();
            let stage_bytes = core::mem::size_of::<KvStage<NB, BN>>() as u32;
            let kv_box_bytes = bn * 128;

            // SAFETY: all-zero is a valid [f32; OACC]; `zeroed` (not `[0.0; N]`,
            // a store loop for large N) keeps it in registers.
            let mut o: [f32; OACC] = unsafe { core::mem::zeroed() };
            // SAFETY: as for `o`; every S wgmma group starts with scale-d 0.
            let mut s: [f32; SACC] = unsafe { core::mem::zeroed() };
            let mut rs = RowState {
                m: [f32::NEG_INFINITY; 2],
                l: [0.0; 2],
            };
            let blk = Block {
                p,
                lane,
                rows,
                causal,
                wg_row0,
                bn,
            };
            let issue_s = |s: &mut [f32; SACC], kb: u32| {
                wgmma::fence();
                crate::unroll_below!(KK < 4 * NB, {
                    let (bx, off) = (KK / 4, (KK % 4) * 32);
                    let da =
                        descriptor_k_major(q_base + bx * BOX_BYTES + off, SmemLayout::Swizzle128B);
                    let db =
                        descriptor_k_major(kb + bx * kv_box_bytes + off, SmemLayout::Swizzle128B);
                    // SAFETY: Q and the stage are loaded (waited) and stay
                    // until a wait_group retires these MMAs.
                    unsafe { S::mma(s, da, db, KK > 0) };
                });
                wgmma::commit_group();
            };
            let issue_pv = |o: &mut [f32; OACC], pf: &[u32; PACK], vb: u32| {
                wgmma::fence();
                crate::unroll_below!(KK < BN / 16, {
                    let k4 = 4 * KK as usize;
                    let db = descriptor_mn_major(
                        vb + 16 * 128 * KK,
                        SmemLayout::Swizzle128B,
                        kv_box_bytes,
                        1024,
                    );
                    // SAFETY: as for S; `pf` was written before the fence
                    // and is not rewritten until wait_group retires this.
                    unsafe { O::mma(o, [pf[k4], pf[k4 + 1], pf[k4 + 2], pf[k4 + 3]], db) };
                });
                wgmma::commit_group();
            };

            // Ping-pong (FA3): a warpgroup waits for its turn before issuing
            // its wgmmas and hands the turn over right after issuing them;
            // blocks + 1 turns each (S_0; S_j with P_{j-1}·V_{j-1}; the last
            // P·V).
            // * pingpong 1: baton's ordered barrier (one turn kind, two
            //   groups; equal rounds, so every wait is matched; warpgroup 1's
            //   last arrival is never waited for, which the protocol allows).
            // * pingpong 2: named barrier 3 + w is "warpgroup w may issue"
            //   (128 waiting + 128 arriving threads); warpgroup 1 opens the
            //   first turn and skips its last arrival, so each barrier sees
            //   as many arrivals as waits.
            let mode = p.pingpong;
            let mut order = OrderedBarrier::<1, 2>::new(order_bars, wg, ORDER_NAME);
            if mode == 2 && wg == 1 {
                named_barrier_arrive(TURN_BARRIER, 256);
            }
            macro_rules! turn_wait {
                () => {
                    if mode == 1 {
                        order.wait();
                    } else if mode == 2 {
                        named_barrier_sync(TURN_BARRIER + wg, 256);
                    }
                };
            }
            macro_rules! turn_pass {
                ($last:expr) => {
                    if mode == 1 {
                        order.arrive();
                    } else if mode == 2 && !($last && wg == 1) {
                        named_barrier_arrive(TURN_BARRIER + 1 - wg, 256);
                    }
                };
            }

            // Intra-warpgroup overlap (FA3): S_j = Q·K_jᵀ is issued before
            // O += P_{j-1}·V_{j-1}; softmax of S_j runs while P·V is in
            // flight, and O is rescaled once P·V retired.
            let mut kc = kp.consumer();
            let mut vc = vp.consumer();
            let k_stage = kc.acquire_stage();
            turn_wait!();
            issue_s(&mut s, k_base + k_stage.index() * stage_bytes);
            turn_pass!(false);
            wgmma::wait_group::<0>();
            k_stage.defer_release().release_if(tid == 0);
            blk.mask_and_softmax::<SACC>(&mut s, &mut rs, 0);
            let mut pf: [u32; PACK] = pack_p::<SACC, PACK>(&s);
            for j in 1..blocks {
                let k_stage = kc.acquire_stage();
                let v_stage = vc.acquire_stage(); // V_{j-1}
                turn_wait!();
                issue_s(&mut s, k_base + k_stage.index() * stage_bytes);
                issue_pv(&mut o, &pf, v_base + v_stage.index() * stage_bytes);
                turn_pass!(false);
                wgmma::wait_group::<1>();
                k_stage.defer_release().release_if(tid == 0);
                let corr = blk.mask_and_softmax::<SACC>(&mut s, &mut rs, j);
                wgmma::wait_group::<0>();
                v_stage.defer_release().release_if(tid == 0);
                crate::unroll_below!(C < OACC / 4, {
                    let c = 4 * C as usize;
                    o[c] *= corr[0];
                    o[c + 1] *= corr[0];
                    o[c + 2] *= corr[1];
                    o[c + 3] *= corr[1];
                });
                pf = pack_p::<SACC, PACK>(&s);
            }
            let v_stage = vc.acquire_stage();
            turn_wait!();
            issue_pv(&mut o, &pf, v_base + v_stage.index() * stage_bytes);
            turn_pass!(true);
            wgmma::wait_group::<0>();
            v_stage.defer_release().release_if(tid == 0);
            let RowState {
                m: [m0, m1],
                l: [l0, l1],
            } = rs;

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
                    st_shared_u32(
                        box_base + Swizzle::B128.apply(b0) as u32,
                        pack_bf16x2(o[c] * inv0, o[c + 1] * inv0),
                    );
                    st_shared_u32(
                        box_base + Swizzle::B128.apply(b0 + 8 * 128) as u32,
                        pack_bf16x2(o[c + 2] * inv1, o[c + 3] * inv1),
                    );
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
        }
    }
}

/// A thread's two rows' running max (raw scores) and partial sum (its
/// quad's share; summed over the quad at the end).
struct RowState {
    m: [f32; 2],
    l: [f32; 2],
}

/// What masking and scaling need to know about this warpgroup's rows.
struct Block<'p> {
    p: &'p AttentionParams,
    lane: u32,
    /// This thread's two rows, in the head.
    rows: [u32; 2],
    causal: bool,
    /// This warpgroup's first row.
    wg_row0: u32,
    bn: u32,
}

impl Block<'_> {
    /// Masks S of K/V block `j` where needed, updates the row max and sum
    /// and turns S into P = exp2(scale·(S − max)) in place; returns the
    /// factors the previous O must be scaled by.
    ///
    /// Accumulator chunk c (elements 4c..4c+4): columns 8c + 2·(lane%4) +
    /// {0, 1}, of row 0 (elements 4c, 4c+1) and row 1 (4c+2, 4c+3).
    #[inline(always)]
    fn mask_and_softmax<const SACC: usize>(
        &self,
        s: &mut [f32; SACC],
        rs: &mut RowState,
        j: u32,
    ) -> [f32; 2] {
        let (p, lane, rows, causal) = (self.p, self.lane, self.rows, self.causal);
        // Only blocks reaching past seq_kv or, causal, past this
        // warpgroup's first row (the diagonal blocks) are masked.
        let col0 = j * self.bn;
        if col0 + self.bn > p.seq_kv || (causal && col0 + self.bn > self.wg_row0 + 1) {
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
        let (mut mx0, mut mx1) = (rs.m[0], rs.m[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = C as usize;
            mx0 = mx0.max(s[4 * c].max(s[4 * c + 1]));
            mx1 = mx1.max(s[4 * c + 2].max(s[4 * c + 3]));
        });
        mx0 = quad_max(mx0);
        mx1 = quad_max(mx1);
        // A row with nothing unmasked yet keeps base 0 (exp2(-inf) = 0).
        let base0 = if mx0 == f32::NEG_INFINITY {
            0.0
        } else {
            mx0 * p.scale_log2
        };
        let base1 = if mx1 == f32::NEG_INFINITY {
            0.0
        } else {
            mx1 * p.scale_log2
        };
        let corr = [
            exp2(rs.m[0] * p.scale_log2 - base0),
            exp2(rs.m[1] * p.scale_log2 - base1),
        ];
        rs.m = [mx0, mx1];
        let (mut l0, mut l1) = (rs.l[0] * corr[0], rs.l[1] * corr[1]);
        crate::unroll_below!(C < SACC / 4, {
            let c = 4 * C as usize;
            s[c] = exp2(s[c] * p.scale_log2 - base0);
            s[c + 1] = exp2(s[c + 1] * p.scale_log2 - base0);
            s[c + 2] = exp2(s[c + 2] * p.scale_log2 - base1);
            s[c + 3] = exp2(s[c + 3] * p.scale_log2 - base1);
            l0 += s[c] + s[c + 1];
            l1 += s[c + 2] + s[c + 3];
        });
        rs.l = [l0, l1];
        corr
    }
}

/// P as the A fragments of O += P·V: for K rows 16kk..16kk+16, registers
/// 4kk..4kk+4 = accumulator elements 8kk..8kk+8 packed in pairs.
#[inline(always)]
fn pack_p<const SACC: usize, const PACK: usize>(s: &[f32; SACC]) -> [u32; PACK] {
    // SAFETY: all-zero is a valid [u32; PACK]; every element is written below.
    let mut pf: [u32; PACK] = unsafe { core::mem::zeroed() };
    crate::unroll_below!(C < PACK, {
        let c = C as usize;
        pf[c] = pack_bf16x2(s[2 * c], s[2 * c + 1]);
    });
    pf
}
