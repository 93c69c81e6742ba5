//! One CTA of the forward pass: setup, the TMA producer, and the `W`
//! consumer warpgroups (S = Q·Kᵀ, online softmax, O += P·V, O out by TMA),
//! persistent: the CTA computes work tiles `blockIdx.x + i·gridDim.x` in
//! the order of `baton_attention_abi::schedule::work_tile` (causal: the
//! longest first), or the list a planned schedule gives it
//! (`AttentionParams::tile_order`, `schedule::plan`), and every pipeline
//! runs on from one tile to the next.
//!
//! Protocol (all `InputTilePipeline`s; a K or V arrival is by a consumer
//! warpgroup's thread 0, a Q arrival by each of its 128 threads):
//! * `q` (`SQ` stages, consumer count 128): the producer fills one stage
//!   with warpgroup 0's 64 query rows, the next with warpgroup 1's, … (`W`
//!   per tile, `NB` boxes each), round the ring; each warpgroup takes every
//!   `W`-th stage (`skip`ping the others'), waits on it, reads it for every
//!   S, writes its O over it, and frees it once its O stores have read
//!   shared memory (`cp.async.bulk.wait_group.read` by thread 0, then the
//!   warpgroup's named barrier, then every thread arrives). With 3 stages the
//!   next tile's rows of warpgroup 0 load while this tile runs, and those
//!   of warpgroup 1 once warpgroup 0's O left, under warpgroup 1's last
//!   turns (2 stages: each waits for its own O stores). Cross-tile
//!   (`CROSS_TILE`, 2·`W` stages): the producer loads a tile's rows a tile
//!   ahead (behind the tile before's K_1 and V_1, or its V_0 if it has one
//!   block), and a warpgroup issues the next tile's S_0 in the turn of this
//!   tile's last P·V, writing this tile's O over its own stage while S_0
//!   runs; it frees that stage after the next tile's softmax 0 (the O
//!   stores' read wait there, not right after the stores).
//! * `k` and `v` (`SK`, `SV` stages, consumer count `W`): per tile the
//!   producer fills K_0, then the `W` Q stages, then V_0, K_1, V_1, …: the
//!   next tile's K_0 loads while the warpgroups finish this tile; every
//!   warpgroup waits on each stage, and each frees a K stage once S = Q·Kᵀ
//!   retired (`wait_group<1>`: the P·V behind it may still run) and a V
//!   stage once P·V retired (`wait_group<0>`).

use crate::math::{log2, opaque, pack_bf16x2, quad_sum};
use crate::pv::PvMma;
use crate::qk::QkMma;
use crate::softmax::{Block, RowState, pack_p};
use crate::thread::{CtaThread, CurrentThread};
use baton::arch::current::fence_proxy_async_shared;
use baton::arch::current::tma::{
    load_3d, prefetch_tensormap, store_3d, store_commit_group, store_wait_group,
    store_wait_group_read,
};
use baton::arch::wgmma::{
    self, SmemLayout, descriptor_k_major, descriptor_mn_major, setmaxnreg_dec, setmaxnreg_inc,
    smem_addr,
};
use baton::ordered_barrier::OrderedBarrier;
use baton::smem_field;
use baton::tensor_map::Swizzle;
use baton::tile_pipeline::InputTilePipeline;
use baton_attention_abi::schedule::{kv_blocks, q_tiles, work_tile};
use baton_attention_abi::{
    AttentionParams, AttnSmem, KvPayload, KvStage, QPayload, QStage, REGISTER_FILE, WG_ROWS,
    layout::QBox,
};

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

/// The ordered barrier's name in hang reports.
const ORDER_NAME: &core::ffi::CStr = c"attn_pingpong";

/// First of the `w` ping-pong named barriers of `w` consumer warpgroups
/// (ids 1..=w: the warpgroups' epilogues; 0: `bar.sync 0`).
const fn turn_barrier(w: usize) -> u32 {
    1 + w as u32
}

/// Bytes of one 64 × 64 bf16 box.
const BOX_BYTES: u32 = 64 * 128;
/// ln 2: logsumexp from log2 units.
const LN_2: f32 = core::f32::consts::LN_2;

/// Where one work tile lives: its rows, head, K/V blocks and tensor maps.
struct TileInfo<M> {
    /// First query row of the tile, in the head.
    q_row0: u32,
    /// Query head.
    head: u32,
    /// `batch · q_heads + head` (the logsumexp's row block).
    batch_head: u32,
    /// The batch entry.
    batch: u32,
    /// K/V head (`head / heads_per_kv_head`).
    kv_head: u32,
    /// K/V blocks this tile reads.
    blocks: u32,
    /// The batch entry's Q, K, V, O maps.
    maps: [M; 4],
}

/// Work tile `t` of the launch (`baton_attention_abi::schedule`), query
/// tiles of `bm` rows, K/V blocks of `bn`.
#[inline(always)]
fn tile_info(
    p: &AttentionParams,
    t: u32,
    bm: u32,
    bn: u32,
) -> TileInfo<*const baton::arch::current::tma::TensorMap> {
    let causal = p.causal != 0;
    let w = work_tile(
        t,
        q_tiles(p.seq_q, bm),
        p.batch_heads,
        p.heads_per_section,
        causal,
    );
    let head = w.batch_head % p.q_heads;
    let batch = w.batch_head / p.q_heads;
    let q_row0 = w.q_tile * bm;
    TileInfo {
        q_row0,
        head,
        batch_head: w.batch_head,
        batch,
        kv_head: head / p.heads_per_kv_head,
        blocks: kv_blocks(q_row0, p.seq_q, p.seq_kv, bm, bn, causal),
        maps: [
            p.q_maps.wrapping_add(batch as usize),
            p.k_maps.wrapping_add(batch as usize),
            p.v_maps.wrapping_add(batch as usize),
            p.o_maps.wrapping_add(batch as usize),
        ],
    }
}

/// A warpgroup's epilogue for one tile: O / l (the quad's sum) as bf16
/// over its own 64 Q rows in shared memory (`q_base`, the stage `q_tiles`),
/// the logsumexp (if asked), then thread 0's TMA stores of O (tile `te`'s
/// head and O map), committed: a named barrier (`1 + wg`, 128 threads)
/// orders each thread's writes before thread 0's stores. The Q stage may
/// be released once [`o_stores_read`] returns. `row0_bytes` is the
/// thread's first row's byte offset in a box (16·warp + lane/4 rows of 128
/// bytes), `rows` its two rows in the head.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn store_o<const NB: usize, const OACC: usize>(
    thread: &CurrentThread,
    p: &AttentionParams,
    (wg, tid, lane): (u32, u32, u32),
    (rows, wg_row0, row0_bytes): ([u32; 2], u32, u32),
    o: &[f32; OACC],
    rs: RowState,
    te: &TileInfo<*const baton::arch::current::tma::TensorMap>,
    q_base: u32,
    q_tiles: baton::smem::SharedRef<'_, QStage<NB>>,
) {
    let RowState {
        m: [m0, m1],
        l: [l0, l1],
    } = rs;
    let (l0, l1) = (quad_sum(l0), quad_sum(l1));
    let inv0 = if l0 > 0.0 { 1.0 / l0 } else { 0.0 };
    let inv1 = if l1 > 0.0 { 1.0 / l1 } else { 0.0 };
    if !p.lse.is_null() && lane % 4 == 0 {
        for (row, mr, lr) in [(rows[0], m0, l0), (rows[1], m1, l1)] {
            if row < p.seq_q {
                let idx = te.batch_head as usize * p.seq_q as usize + row as usize;
                // SAFETY: lse holds batch·q_heads·seq_q floats (host
                // contract); batch_head = batch·q_heads + head.
                unsafe { p.lse.add(idx).write((mr * p.scale_log2 + log2(lr)) * LN_2) };
            }
        }
    }
    crate::unroll_below!(C < OACC / 4, {
        let c = 4 * C as usize;
        let col = 8 * C + 2 * (lane % 4);
        let box_base = q_base + (col / 64) * BOX_BYTES;
        let b0 = (row0_bytes + (col % 64) * 2) as usize;
        // SAFETY: this warpgroup's own Q rows (it holds their stage; its
        // last reads of them, the tile's S wgmmas, retired).
        unsafe {
            thread.st_shared_u32(
                box_base + Swizzle::B128.apply(b0) as u32,
                pack_bf16x2(o[c] * inv0, o[c + 1] * inv0),
            );
            thread.st_shared_u32(
                box_base + Swizzle::B128.apply(b0 + 8 * 128) as u32,
                pack_bf16x2(o[c + 2] * inv1, o[c + 3] * inv1),
            );
        }
    });
    fence_proxy_async_shared();
    thread.named_barrier_sync(1 + wg, 128);
    let out = smem_field!(q_tiles, QStage<NB>, rows);
    if tid == 0 {
        let map_o = te.maps[3];
        for b in 0..NB {
            let tile: baton::smem::SharedRef<'_, QBox> = out.at(b);
            // SAFETY: O's map per the kernel contract; the stores clip at seq_q.
            let (c0, c1, c2) = coords(p.heads_inner, 3, 64 * b as u32, wg_row0, te.head);
            unsafe { store_3d(map_o, tile, c0, c1, c2) };
        }
        store_commit_group();
    }
}

/// After [`store_o`]: returns once thread 0's O stores have read shared
/// memory (they complete in the background), in every thread of
/// warpgroup `wg`. Then the Q stage the O rows are in may go back to the
/// producer (and to another warpgroup's later rows) from every thread that
/// wrote O into it: each thread's arrive releases its own writes, so the
/// hand-off needs no reasoning about the named barrier's ordering
/// (compute-sanitizer racecheck credits an arrive with the arriving
/// thread's accesses only).
#[inline(always)]
fn o_stores_read(thread: &CurrentThread, wg: u32, tid: u32) {
    if tid == 0 {
        store_wait_group_read::<0>();
    }
    thread.named_barrier_sync(1 + wg, 128);
}

/// The forward pass of one CTA, for head dimension `64·NB`, `BN`-row K/V
/// blocks, `SK` K, `SV` V and `SQ` Q stages, `W` consumer warpgroups
/// (query tiles of `64·W` rows, `128·(1 + W)` threads: the kernel's
/// `HeadDimConfig`); `SACC = BN/2` and `OACC = 32·NB` accumulator
/// registers, `PACK = BN/4` registers of P as bf16 pairs; `S` the Q·Kᵀ shape (N = BN), `O` the P·V shape (N = 64·NB);
/// `PRODUCER_REGISTERS` and `CONSUMER_REGISTERS` per thread after
/// `setmaxnreg` (`128·(P + W·C)` within the CTA's allocation: `384·168`
/// for 2 consumer warpgroups, `512·128` for 3);
/// `PERSISTENT`: the CTA loops over its tiles (else it computes tile
/// `blockIdx.x` only, and the host launches one CTA per tile: d = 256,
/// whose consumers have no registers to spare for the loop's state);
/// `EMU`: every `EMU`-th accumulator chunk's `exp2` on the FMA pipe
/// (`softmax::Block::mask_and_softmax`; 0: all on the MUFU);
/// `EARLY_RESCALE`: O is rescaled under S_j's `wgmma`s, between the two
/// issues (FA3's place; the factors stay live through the turn), else
/// once P·V retired (d = 128: early spills 4 bytes at 232 registers);
/// `PLAN`: the CTA follows `p.tile_order` when it is not null (the
/// causal entries; the others ignore it and stride: their code as before
/// the plan, which at d = 64 non-causal, d = 128 and d = 256 measured
/// 2–4 % faster than with the check, BENCHMARKS.md "Session 11 — ATTN
/// round 2");
/// `CROSS_TILE`: the next tile's S_0 is issued in the turn of this tile's
/// last P·V and runs under this tile's epilogue (a warpgroup then holds
/// two tiles' Q rows: `SQ` ≥ 2·`W`); else a tile's head (S_0 in its own
/// turn, softmax 0) follows the epilogue of the tile before.
///
/// Every thread of the CTA runs it, as [`CurrentThread`]: the GPU thread
/// of a kernel entry (`lib.rs`), or on the host a thread of
/// `crate::thread::run_cta` (`attention/abi/tests/cpu_fwd.rs` runs the
/// whole program on baton's CPU backend).
///
/// ```ignore
/// run_cta(smem, 3, cta, grid, |_smem| {
///     fwd::run::<2, 128, 3, 2, 3, 2, 64, 64, 32, 40, 232, true, 0, false, false, false, QkN128, PvN128>(&p)
/// });
/// ```
#[inline(always)]
pub fn run<
    const NB: usize,
    const BN: usize,
    const SK: usize,
    const SV: usize,
    const SQ: usize,
    const W: usize,
    const SACC: usize,
    const OACC: usize,
    const PACK: usize,
    const PRODUCER_REGISTERS: u32,
    const CONSUMER_REGISTERS: u32,
    const PERSISTENT: bool,
    const EMU: usize,
    const EARLY_RESCALE: bool,
    const PLAN: bool,
    const CROSS_TILE: bool,
    S: QkMma<SACC>,
    O: PvMma<OACC>,
>(
    p: &AttentionParams,
) {
    // `setmaxnreg.inc` waits until the CTA's pool (at launch: the register
    // file shared out among 128·(1 + W) threads in steps of 8 registers,
    // 168 × 384 or 128 × 512) has the registers: asking for more than the
    // pool holds hangs every consumer (Session 10: 32 + 2·240 did).
    const {
        let threads = 128 * (1 + W as u32);
        assert!(
            128 * (PRODUCER_REGISTERS + W as u32 * CONSUMER_REGISTERS)
                <= threads * (REGISTER_FILE / threads / 8 * 8),
            "setmaxnreg: the roles' registers exceed the CTA's allocation"
        )
    };
    // Across tiles a warpgroup holds this tile's Q stage (its O goes out
    // through it) and the next tile's.
    const {
        assert!(
            !CROSS_TILE || SQ >= 2 * W,
            "CROSS_TILE needs 2 Q stages per warpgroup"
        )
    };
    // Query rows per work tile.
    let bm = (WG_ROWS * W) as u32;
    // SAFETY: launched with the module's dynamic shared memory,
    // size_of::<AttnSmem<..>>() on the device (the spec).
    let thread = &CurrentThread::default();
    let smem = unsafe { thread.dynamic_smem::<AttnSmem<NB, BN, SK, SV, SQ, W>>() };
    let kp = InputTilePipeline::<KvPayload<NB, BN>, SK>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV, SQ, W>, k),
        c"attn_k",
    );
    let vp = InputTilePipeline::<KvPayload<NB, BN>, SV>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV, SQ, W>, v),
        c"attn_v",
    );
    let qp = InputTilePipeline::<QPayload<NB>, SQ>::new(
        smem_field!(smem, AttnSmem<NB, BN, SK, SV, SQ, W>, q),
        c"attn_q",
    );

    let order_bars = smem_field!(smem, AttnSmem<NB, BN, SK, SV, SQ, W>, order);

    let bn = BN as u32;
    // This CTA's work tiles: `first`, `first + stride`, … below `tiles`.
    // Derived in each role (through `opaque`), not once before the roles
    // split: a value live into both would have to fit the producer's few
    // registers, and ptxas spills it.
    // Stride schedule: slots `blockIdx.x, + grid, …` below the tile count,
    // slot `k` being work tile `k`; planned (`PLAN` and `p.tile_order`): slots
    // `order[c] .. order[c + 1]` one by one, slot `k` being work tile
    // `order[grid + 1 + k]` (`schedule::plan`). Returns (first slot, step,
    // end).
    let schedule = || {
        let c = opaque(thread.block_idx_x());
        if !PLAN || p.tile_order.is_null() {
            (
                c,
                thread.launch_ctas(),
                q_tiles(opaque(p.seq_q), bm) * p.batch_heads,
            )
        } else {
            // SAFETY: a plan of `grid` CTAs (host contract, `check_plan`).
            unsafe {
                (
                    *p.tile_order.add(c as usize),
                    1,
                    *p.tile_order.add(c as usize + 1),
                )
            }
        }
    };
    // The work tile of slot `k`.
    let tile_at = |k: u32| {
        if !PLAN || p.tile_order.is_null() {
            k
        } else {
            // SAFETY: as above; `k` < order[grid] = the tile count.
            unsafe { *p.tile_order.add((thread.launch_ctas() + 1 + k) as usize) }
        }
    };

    thread.init_then_sync(|| {
        // The first tile's maps (the host launches at most `tiles` CTAs).
        let maps = tile_info(p, thread.block_idx_x(), bm, bn).maps;
        // SAFETY: the host passes `batch` live maps per tensor in global memory.
        unsafe {
            for m in maps {
                prefetch_tensormap(m);
            }
        }
        // Every thread of the arriving warpgroup arrives: 128 per turn.
        OrderedBarrier::<1, W>::new(order_bars, 0, ORDER_NAME).init(128);
        kp.init(W as u32);
        vp.init(W as u32);
        // Every thread of the warpgroup that staged O in a Q stage releases
        // it: 128 arrivals (see the epilogue).
        qp.init(128);
    });

    // Warpgroup 0: the producer (one lane of warp 0); warpgroups 1 ..= W:
    // the consumers, with the registers the entry gives (lib.rs).
    let warpgroup = thread.warp_idx() / 4;
    if warpgroup == 0 {
        setmaxnreg_dec::<PRODUCER_REGISTERS>();
        if thread.warp_idx() == 0 && thread.elect_one() {
            let mut qprod = qp.producer();
            let mut kprod = kp.producer();
            let mut vprod = vp.producer();
            // One stage of K or V: block `j` of tensor `t` (1 K, 2 V).
            macro_rules! load_block {
                ($prod:expr, $map:expr, $t:expr, $kv_head:expr, $j:expr) => {{
                    let stage = $prod.acquire_stage();
                    stage.arrive_expect_tx();
                    let boxes = smem_field!(stage.tiles(), KvStage<NB, BN>, boxes);
                    for b in 0..NB {
                        let (c0, c1, c2) = coords(p.heads_inner, $t, 64 * b as u32, $j * bn, $kv_head);
                        // SAFETY: the producer holds the stage; its full
                        // barrier expects all NB boxes (zero-filled past seq_kv).
                        unsafe { load_3d($map, boxes.at(b), stage.barrier(), c0, c1, c2) };
                    }
                    stage.release();
                }};
            }
            // Warpgroup `wg`'s 64 query rows of tile `ti`.
            macro_rules! load_q {
                ($prod:expr, $ti:expr, $wg:expr) => {{
                    let stage = $prod.acquire_stage();
                    stage.arrive_expect_tx();
                    let rows = smem_field!(stage.tiles(), QStage<NB>, rows);
                    for b in 0..NB {
                        let (c0, c1, c2) = coords(
                            p.heads_inner,
                            0,
                            64 * b as u32,
                            $ti.q_row0 + 64 * $wg,
                            $ti.head,
                        );
                        // SAFETY: the producer holds the stage; its full
                        // barrier expects all NB boxes.
                        unsafe {
                            load_3d(
                                p.q_maps.wrapping_add($ti.batch as usize),
                                rows.at(b),
                                stage.barrier(),
                                c0,
                                c1,
                                c2,
                            )
                        };
                    }
                    stage.release();
                }};
            }
            let (mut k, _, _) = schedule();
            // The producer has few registers (24 or 40): the maps are
            // derived from the batch entry at each load, and the step and
            // end re-read at each tile, rather than kept live.
            if CROSS_TILE && k < schedule().2 {
                // The first tile's Q rows (later tiles' load a tile ahead).
                let ti = tile_info(p, tile_at(k), bm, bn);
                crate::unroll_below!(WG < W, {
                    load_q!(qprod, ti, WG);
                });
            }
            while k < schedule().2 {
                let ti = tile_info(p, tile_at(k), bm, bn);
                let (map_k, map_v) = (
                    || p.k_maps.wrapping_add(opaque(ti.batch) as usize),
                    || p.v_maps.wrapping_add(opaque(ti.batch) as usize),
                );
                // K_0 first: it loads while the consumers finish the last
                // tile and free their Q rows.
                load_block!(kprod, map_k(), 1, ti.kv_head, 0);
                if !CROSS_TILE {
                    crate::unroll_below!(WG < W, {
                        load_q!(qprod, ti, WG);
                    });
                }
                load_block!(vprod, map_v(), 2, ti.kv_head, 0);
                // The next tile's Q rows, a tile ahead: the consumers issue
                // its S_0 with this tile's last P·V. Their stages are the
                // ones the tile before this one freed, once its O stores
                // read them (after this tile's softmax 0): so they load
                // behind K_1 and V_1 (behind V_0 in a one-block tile), and
                // the K/V stream does not wait for that release.
                macro_rules! load_next_q {
                    () => {
                        if CROSS_TILE && PERSISTENT && k + schedule().1 < schedule().2 {
                            let tn = tile_info(p, tile_at(k + schedule().1), bm, bn);
                            crate::unroll_below!(WG < W, {
                                load_q!(qprod, tn, WG);
                            });
                        }
                    };
                }
                if ti.blocks == 1 {
                    load_next_q!();
                }
                for j in 1..ti.blocks {
                    load_block!(kprod, map_k(), 1, ti.kv_head, j);
                    load_block!(vprod, map_v(), 2, ti.kv_head, j);
                    if j == 1 {
                        load_next_q!();
                    }
                }
                if !PERSISTENT {
                    break;
                }
                k += schedule().1;
            }
            kprod.drain();
            vprod.drain();
            qprod.drain();
        }
    } else {
        setmaxnreg_inc::<CONSUMER_REGISTERS>();
        let wg = warpgroup - 1;
        let tid = thread.thread_idx_x() % 128;
        let causal = p.causal != 0;
        let k_base = smem_addr(smem_field!(kp.stage(0), KvStage<NB, BN>, boxes));
        let v_base = smem_addr(smem_field!(vp.stage(0), KvStage<NB, BN>, boxes));
        let stage_bytes = core::mem::size_of::<KvStage<NB, BN>>() as u32;
        let kv_box_bytes = bn * 128;

        let issue_s = |s: &mut [f32; SACC], q_base: u32, kb: u32| {
            wgmma::fence();
            crate::unroll_below!(KK < 4 * NB, {
                let (bx, off) = (KK / 4, (KK % 4) * 32);
                let da = descriptor_k_major(q_base + bx * BOX_BYTES + off, SmemLayout::Swizzle128B);
                let db = descriptor_k_major(kb + bx * kv_box_bytes + off, SmemLayout::Swizzle128B);
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
        // its wgmmas and hands the turn over (to the next warpgroup, round
        // the W) right after issuing them; blocks + 1 turns per tile each
        // (S_0; S_j with P_{j-1}·V_{j-1}; the last P·V), the turns running
        // on from tile to tile (all warpgroups compute the same tiles).
        // * pingpong 1: baton's ordered barrier (one turn kind, W groups;
        //   equal rounds, so every wait is matched; the last warpgroup's
        //   last arrival is never waited for, which the protocol allows).
        // * pingpong 2: named barrier turn_barrier(W) + w is "warpgroup w
        //   may issue" (128 waiting + 128 arriving threads: warpgroup w − 1
        //   mod W); the last warpgroup opens the first turn and skips its
        //   last arrival of the launch, so each barrier sees as many
        //   arrivals as waits.
        let mode = p.pingpong;
        let turn_bar = turn_barrier(W);
        let last_wg = W as u32 - 1;
        let mut order = OrderedBarrier::<1, W>::new(order_bars, wg, ORDER_NAME);
        if mode == 2 && wg == last_wg {
            thread.named_barrier_arrive(turn_bar, 256);
        }
        macro_rules! turn_wait {
            () => {
                if mode == 1 {
                    order.wait();
                } else if mode == 2 {
                    thread.named_barrier_sync(turn_bar + wg, 256);
                }
            };
        }
        macro_rules! turn_pass {
            ($last:expr) => {
                if mode == 1 {
                    order.arrive();
                } else if mode == 2 && !($last && wg == last_wg) {
                    // The barrier of the warpgroup after this one.
                    let next = if W == 2 {
                        1 - wg
                    } else if wg == last_wg {
                        0
                    } else {
                        wg + 1
                    };
                    thread.named_barrier_arrive(turn_bar + next, 256);
                }
            };
        }

        // Stage `wg` of the Q ring is this warpgroup's: skip the others'.
        let mut qc = qp.consumer();
        if W == 2 {
            if wg == 1 {
                qc.skip(1);
            }
        } else {
            qc.skip(wg);
        }
        let mut kc = kp.consumer();
        let mut vc = vp.consumer();
        // O ·= the rescale factors of the last softmax (before the P·V that
        // adds that softmax's P).
        macro_rules! rescale_o {
            ($o:ident, $corr:expr) => {
                crate::unroll_below!(C < OACC / 4, {
                    let c = 4 * C as usize;
                    $o[c] *= $corr[0];
                    $o[c + 1] *= $corr[0];
                    $o[c + 2] *= $corr[1];
                    $o[c + 3] *= $corr[1];
                })
            };
        }
        // K/V blocks 1..$blocks of a tile whose S_0 and softmax 0 are done
        // (P_0 in `$pf`, the factors in `$corr`), one turn each: S_j and
        // O += P_{j-1}·V_{j-1} issued, S_j retired and K_j freed, softmax j
        // (masked per `$blk`) while the P·V runs, the P·V retired and
        // V_{j-1} freed, O rescaled, P_j packed into `$pf`.
        macro_rules! kv_blocks {
            ($softmax:ident, $blocks:expr, $blk:expr, $q_base:expr, $s:ident, $o:ident, $rs:ident, $pf:ident, $corr:ident) => {
                for j in 1..$blocks {
                    let k_stage = kc.acquire_stage();
                    let v_stage = vc.acquire_stage(); // V_{j-1}
                    turn_wait!();
                    issue_s(&mut $s, $q_base, k_base + k_stage.index() * stage_bytes);
                    if EARLY_RESCALE {
                        rescale_o!($o, $corr);
                    }
                    issue_pv(&mut $o, &$pf, v_base + v_stage.index() * stage_bytes);
                    turn_pass!(false);
                    wgmma::wait_group::<1>();
                    k_stage.defer_release().release_if(tid == 0);
                    $corr = $blk.$softmax::<SACC, EMU>(&mut $s, &mut $rs, j);
                    wgmma::wait_group::<0>();
                    v_stage.defer_release().release_if(tid == 0);
                    if !EARLY_RESCALE {
                        rescale_o!($o, $corr);
                    }
                    $pf = pack_p::<SACC, PACK>(&$s);
                }
            };
        }
        // The slot after `k` (without `PLAN`, the stride as the code before
        // the plan read it).
        let step = || {
            if PLAN {
                schedule().1
            } else {
                thread.launch_ctas()
            }
        };
        if !CROSS_TILE {
            // One tile after the other, each from its head (S_0 in its own
            // turn) to its epilogue: the code of the entries before
            // `CROSS_TILE` (their PTX unchanged; the cross-tile loop's
            // structure ran 0.5–2.5 % slower for them, BENCHMARKS.md
            // "Session 12 — ATTN").
            let (mut k, _, _) = schedule();
            while k < schedule().2 {
                // The thread's place, per tile: what derives from it (rows,
                // mask columns, O's shared addresses) is computed in the tile,
                // not hoisted out of the tile loop and kept live (spilled).
                let (warp, lane) = (opaque(tid) / 32, opaque(tid) % 32);
                let ti = tile_info(p, tile_at(k), bm, bn);
                let last_tile = !PERSISTENT || k + step() >= schedule().2;
                // This thread's two accumulator rows, in the head.
                let wg_row0 = ti.q_row0 + 64 * wg;
                let rows = [
                    wg_row0 + 16 * warp + lane / 4,
                    wg_row0 + 16 * warp + lane / 4 + 8,
                ];
                let q_stage = qc.acquire_stage();
                let q_base = smem_addr(smem_field!(q_stage.tiles(), QStage<NB>, rows).at(0));

                // SAFETY: all-zero is a valid [f32; OACC]; `zeroed` (not `[0.0; N]`,
                // a store loop for large N) keeps it in registers.
                let mut o: [f32; OACC] = unsafe { core::mem::zeroed() };
                // SAFETY: as for `o`; every S wgmma group starts with scale-d 0.
                let mut s: [f32; SACC] = unsafe { core::mem::zeroed() };
                let mut rs = RowState::new();
                let blk = Block {
                    p,
                    lane,
                    rows,
                    causal,
                    wg_row0,
                    bn,
                };

                // Intra-warpgroup overlap (FA3): S_j = Q·K_jᵀ is issued before
                // O += P_{j-1}·V_{j-1}; softmax of S_j runs while P·V is in
                // flight; O is rescaled by softmax j-1's factors between the
                // two issues, under S_j's wgmmas (FA3's `rescale_o` place), so
                // that only P's packing is left between P·V retiring and the
                // next turn.
                let k_stage = kc.acquire_stage();
                turn_wait!();
                issue_s(&mut s, q_base, k_base + k_stage.index() * stage_bytes);
                turn_pass!(false);
                wgmma::wait_group::<0>();
                k_stage.defer_release().release_if(tid == 0);
                // O is 0 here: block 0's factors are not needed.
                blk.mask_and_softmax::<SACC, EMU>(&mut s, &mut rs, 0);
                let mut corr = [1.0f32; 2];
                let mut pf: [u32; PACK] = pack_p::<SACC, PACK>(&s);
                kv_blocks!(mask_and_softmax, ti.blocks, blk, q_base, s, o, rs, pf, corr);
                let v_stage = vc.acquire_stage();
                turn_wait!();
                if EARLY_RESCALE {
                    rescale_o!(o, corr);
                }
                issue_pv(&mut o, &pf, v_base + v_stage.index() * stage_bytes);
                turn_pass!(last_tile);
                wgmma::wait_group::<0>();
                v_stage.defer_release().release_if(tid == 0);
                // Epilogue: O / l, logsumexp, O over this warpgroup's Q rows, TMA stores.
                // The tile's head and maps, derived again here (not kept live
                // across the tile).
                let te = tile_info(p, tile_at(opaque(k)), bm, bn);
                store_o::<NB, OACC>(
                    thread,
                    p,
                    (wg, tid, lane),
                    (rows, wg_row0, (16 * warp + lane / 4) * 128),
                    &o,
                    rs,
                    &te,
                    q_base,
                    q_stage.tiles(),
                );
                o_stores_read(thread, wg, tid);
                q_stage.release();
                qc.skip(W as u32 - 1);
                if !PERSISTENT {
                    break;
                }
                k += step();
            }
        } else {
            // This warpgroup's view of work tile `t`: its K/V block count and
            // what masking needs of its rows (the thread's place through
            // `opaque`: derived per tile, not hoisted out of the tile loop and
            // kept live, which spilled).
            let geometry = |t: u32| {
                let ti = tile_info(p, t, bm, bn);
                let (warp, lane) = (opaque(tid) / 32, opaque(tid) % 32);
                let wg_row0 = ti.q_row0 + 64 * wg;
                (
                    ti.blocks,
                    Block {
                        p,
                        lane,
                        rows: [
                            wg_row0 + 16 * warp + lane / 4,
                            wg_row0 + 16 * warp + lane / 4 + 8,
                        ],
                        causal,
                        wg_row0,
                        bn,
                    },
                )
            };
            let q_base_of = |tiles| smem_addr(smem_field!(tiles, QStage<NB>, rows).at(0));
            let (mut k, _, _) = schedule();
            if k < schedule().2 {
                // The work tile, its blocks and masking, carried from the head
                // into the tile (derived before the head's turn).
                let mut tile = tile_at(k);
                let (mut blocks, mut blk) = geometry(tile);
                let mut q_stage = qc.acquire_stage();
                // SAFETY: all-zero is a valid [f32; SACC]; every S wgmma group
                // starts with scale-d 0.
                let mut s: [f32; SACC] = unsafe { core::mem::zeroed() };
                let mut rs = RowState::new();
                // The first tile's head on its own: S_0 = Q·K_0ᵀ in its own
                // turn, then softmax 0 (later heads run under the tile
                // before's last P·V and epilogue).
                let k_stage = kc.acquire_stage();
                turn_wait!();
                issue_s(
                    &mut s,
                    q_base_of(q_stage.tiles()),
                    k_base + k_stage.index() * stage_bytes,
                );
                turn_pass!(false);
                wgmma::wait_group::<0>();
                k_stage.defer_release().release_if(tid == 0);
                blk.mask_compact_and_softmax::<SACC, EMU>(&mut s, &mut rs, 0);
                let mut pf: [u32; PACK] = pack_p::<SACC, PACK>(&s);
                loop {
                    // The next slot's tile, read now (a global load under a
                    // planned schedule) so that the tile's end does not wait
                    // for it.
                    let next = k + step();
                    let more = PERSISTENT && next < schedule().2;
                    let next_tile = if more { tile_at(next) } else { tile };
                    let q_base = q_base_of(q_stage.tiles());
                    // SAFETY: all-zero is a valid [f32; OACC]; `zeroed` (not
                    // `[0.0; N]`, a store loop for large N) keeps it in registers.
                    let mut o: [f32; OACC] = unsafe { core::mem::zeroed() };

                    // Intra-warpgroup overlap (FA3): S_j = Q·K_jᵀ is issued
                    // before O += P_{j-1}·V_{j-1}; softmax of S_j runs while P·V
                    // is in flight; O is rescaled by softmax j-1's factors
                    // between the two issues, under S_j's wgmmas (FA3's
                    // `rescale_o` place), so that only P's packing is left
                    // between P·V retiring and the next turn. (Block 0's
                    // factors are not needed: O is 0.)
                    let mut corr = [1.0f32; 2];
                    kv_blocks!(
                        mask_compact_and_softmax,
                        blocks,
                        blk,
                        q_base,
                        s,
                        o,
                        rs,
                        pf,
                        corr
                    );
                    let v_stage = vc.acquire_stage();
                    // This tile's Q rows stay this warpgroup's until its O
                    // stores have read them (the epilogue); the ring steps on to
                    // the next tile's rows now.
                    let q_tiles = q_stage.tiles();
                    let q_done = q_stage.defer_release();
                    qc.skip(W as u32 - 1);
                    if EARLY_RESCALE {
                        rescale_o!(o, corr);
                    }

                    // Epilogue: O / l, logsumexp, O over this warpgroup's Q rows
                    // (at `q_base`; `q_done` releases their stage once the
                    // stores have read them, `o_stores_read`), TMA stores.
                    // The tile's head and maps are derived again here (not
                    // kept live across the tile).
                    macro_rules! epilogue {
                        () => {{
                            let te = tile_info(p, opaque(tile), bm, bn);
                            let (rows, wg_row0) = (blk.rows, blk.wg_row0);
                            store_o::<NB, OACC>(
                                thread,
                                p,
                                (wg, tid, blk.lane),
                                (rows, wg_row0, (rows[0] - wg_row0) * 128),
                                &o,
                                rs,
                                &te,
                                q_base,
                                q_tiles,
                            );
                        }};
                    }
                    if more {
                        // The next tile's head in this turn, behind the last
                        // P·V: S_0' = Q'·K_0'ᵀ runs on the tensor cores while
                        // this warpgroup writes O out, then softmax 0'.
                        q_stage = qc.acquire_stage();
                        let k_stage = kc.acquire_stage();
                        turn_wait!();
                        issue_pv(&mut o, &pf, v_base + v_stage.index() * stage_bytes);
                        issue_s(
                            &mut s,
                            q_base_of(q_stage.tiles()),
                            k_base + k_stage.index() * stage_bytes,
                        );
                        turn_pass!(false);
                        let (next_blocks, next_blk) = geometry(next_tile);
                        // P·V retired (groups retire in order); S_0' runs on.
                        wgmma::wait_group::<1>();
                        v_stage.defer_release().release_if(tid == 0);
                        epilogue!();
                        wgmma::wait_group::<0>();
                        k_stage.defer_release().release_if(tid == 0);
                        rs = RowState::new();
                        next_blk.mask_compact_and_softmax::<SACC, EMU>(&mut s, &mut rs, 0);
                        pf = pack_p::<SACC, PACK>(&s);
                        // The O stores have read the rows by now (under S_0'
                        // and softmax 0'): their stage goes back. (Waiting
                        // right after the stores stalled both warpgroups at
                        // every tile boundary.)
                        o_stores_read(thread, wg, tid);
                        q_done.release();
                        (k, tile, blocks, blk) = (next, next_tile, next_blocks, next_blk);
                        continue;
                    }
                    // The CTA's last tile: its last P·V in the last turn.
                    turn_wait!();
                    issue_pv(&mut o, &pf, v_base + v_stage.index() * stage_bytes);
                    turn_pass!(true);
                    wgmma::wait_group::<0>();
                    v_stage.defer_release().release_if(tid == 0);
                    epilogue!();
                    o_stores_read(thread, wg, tid);
                    q_done.release();
                    break;
                }
            }
        }
        if tid == 0 {
            // Every O store complete before the CTA exits.
            store_wait_group::<0>();
        }
    }
}
