//! The attention kernel's whole CTA program (`attention/kernel/src/fwd.rs`:
//! setup, the TMA producer, the two consumer warpgroups in ping-pong, the
//! TMA-store epilogue) on baton's CPU backend, against an f64 reference.
//!
//! The kernel's own source files are compiled for the host here (`#[path]`
//! modules below); `fwd::run` runs as `thread::CpuThread` in
//! `thread::run_cta`: every GPU thread of the CTA is a host thread (384:
//! the producer warpgroup, two consumer warpgroups of 128, each a simulated
//! warpgroup for its `wgmma`s and shuffles), over the same pipelines (K, V
//! and Q `InputTilePipeline`s, the ordered barrier or the named barriers of
//! the ping-pong) in the CTA's `AttnSmem`, with the simulated TMA
//! (byte-exact with the H100) loading from and storing to host tensors
//! through the tensor maps the host API would build. A persistent launch
//! of `grid` CTAs is simulated one CTA after another (each CTA's work tiles
//! are its own).
//!
//! Cases: head dim 64 (176-row K/V blocks; 128-row when causal; three
//! consumer warpgroups of 512 threads with 80-row blocks, causal or not) and 128,
//! causal and not, and one of 256 (64-row blocks, one CTA per tile), ragged `seq_q ≠ seq_kv` from 1 to 200, GQA 2:1, batch 2,
//! both layouts (`[b, s, h, d]`, `[b, h, s, d]`), both ping-pong mechanisms
//! and free issue, d = 64's 128-row kernel without a mask (`narrow`),
//! persistent grids smaller than the tile count (one CTA computing 4 tiles:
//! the 3-stage Q ring wraps; causal calls at d = 64 and 128 on the host's
//! planned schedule, `schedule::plan`, as the host API launches them). Fresh random inputs; O and
//! the logsumexp poisoned with NaN; every element of O (relative error ≤
//! 2e-2 of its row's largest reference value) and of the logsumexp checked,
//! a guard past O's end checked untouched; NaN never passes. Controls that
//! must fail: a launch missing its last CTA (its tiles stay NaN), a
//! wrong GQA head mapping, and a plan with one tile twice and one never.
#![cfg(not(target_arch = "nvptx64"))]

#[path = "../../kernel/src/entries.rs"]
#[macro_use]
mod entries;
#[path = "../../kernel/src/fwd.rs"]
// `unroll_below!`'s constant indices make `KK > 0` always false in copy 0.
#[allow(clippy::absurd_extreme_comparisons)]
mod fwd;
#[path = "../../kernel/src/math.rs"]
#[allow(dead_code)]
mod math;
#[path = "../../kernel/src/pv.rs"]
mod pv;
#[path = "../../kernel/src/qk.rs"]
mod qk;
#[path = "../../kernel/src/softmax.rs"]
#[allow(dead_code)]
mod softmax;
#[path = "../../kernel/src/thread.rs"]
#[allow(dead_code, unused_imports)]
mod thread;

mod common;
use baton::arch::cpu::tma::TensorMap;
use baton_attention_abi::maps::OperandMaps;
use baton_attention_abi::schedule::{check_plan, heads_per_section, plan, tile_count};
use baton_attention_abi::{AttentionParams, AttnSmem, HeadDimConfig, config_for_call};
use common::{Rng, bf16};

/// bf16 NaN: O's poison.
const NAN_BF16: u16 = 0x7FC0;
/// What the guard past O's end holds (a NaN payload no store writes).
const GUARD_BF16: u16 = 0x7FA5;

/// 16-byte aligned host storage of `n` bf16 values (TMA's base alignment).
struct Buf(Vec<u128>);
impl Buf {
    fn new(vals: &[u16]) -> Self {
        let mut v = vec![0u128; vals.len().div_ceil(8)];
        // SAFETY: the u128 storage holds at least vals.len() u16s.
        unsafe {
            std::ptr::copy_nonoverlapping(vals.as_ptr(), v.as_mut_ptr() as *mut u16, vals.len())
        };
        Buf(v)
    }
    fn addr(&self) -> u64 {
        self.0.as_ptr() as u64
    }
    fn values(&self, n: usize) -> Vec<u16> {
        assert!(n <= 8 * self.0.len());
        // SAFETY: the storage holds at least `n` u16s.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const u16, n) }.to_vec()
    }
}

/// Element strides of a `[batch, seq, heads, d]` tensor laid out as
/// `[b, s, h, d]` (`heads_outer == false`) or `[b, h, s, d]`.
#[derive(Clone, Copy, Debug)]
struct Strides {
    batch: usize,
    seq: usize,
    head: usize,
}
impl Strides {
    fn new(seq: usize, heads: usize, d: usize, bhsd: bool) -> Self {
        if bhsd {
            Self {
                batch: heads * seq * d,
                seq: d,
                head: seq * d,
            }
        } else {
            Self {
                batch: seq * heads * d,
                seq: heads * d,
                head: d,
            }
        }
    }
    fn at(&self, b: usize, s: usize, h: usize) -> usize {
        b * self.batch + s * self.seq + h * self.head
    }
}

/// One call.
#[derive(Clone, Copy, Debug)]
struct Case {
    d: usize,
    batch: usize,
    seq_q: usize,
    seq_kv: usize,
    q_heads: usize,
    kv_heads: usize,
    causal: bool,
    /// d = 64 without a mask on the 128-row kernel (`config_for_call`'s
    /// `narrow`).
    narrow: bool,
    /// d = 64 on three consumer warpgroups (`config_for_call`'s
    /// `three_warpgroups`).
    w3: bool,
    /// The d = 64 kernel with `fwd::run`'s `EMU` 4 and `EARLY_RESCALE`,
    /// which no entry uses now (every entry fuses the scale).
    fma_exp2_early_rescale: bool,
    bhsd: bool,
    /// `AttentionParams::pingpong`: 1 the ordered barrier, 2 named barriers.
    pingpong: u32,
    /// CTAs of the persistent launch (d = 256: one per tile, as the host
    /// launches its kernel).
    grid: u32,
}

/// How a control breaks the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// The last CTA of the grid is not run.
    SkipLastCta,
    /// `heads_per_kv_head` of 1 with GQA 2:1 (query head `h` reads K/V
    /// head `h`, past the last for odd `h`: zeros).
    WrongGqaMapping,
    /// The causal plan's last tile replaced by its first (one tile twice,
    /// one never: `check_plan` rejects it, and the missing tile's O stays
    /// NaN).
    BrokenPlan,
}

/// The rank-3 maps of one tensor, one per batch entry, by the host API's
/// rule (`OperandMaps`); returns them and whether the heads are inner.
fn maps(
    buf: &Buf,
    s: Strides,
    batch: usize,
    seq: usize,
    heads: usize,
    d: usize,
    box_rows: u32,
) -> (Vec<TensorMap>, bool) {
    let layout = OperandMaps::new(seq, heads, s.seq, s.head, box_rows);
    let maps = (0..batch)
        .map(|b| {
            let desc = layout.desc(buf.addr() + (2 * b * s.batch) as u64, d);
            // SAFETY: the buffer outlives the maps (both live for the whole
            // call) and only the simulated TMA touches it while CTAs run.
            unsafe { TensorMap::new(desc) }.expect("valid tensor map")
        })
        .collect();
    (maps, layout.heads_inner)
}

/// The call's parameters, shared by the simulated threads.
struct Params(AttentionParams);
// SAFETY: the pointers name the maps and the logsumexp buffer, which
// outlive the launch; threads write disjoint logsumexp elements.
unsafe impl Sync for Params {}

/// The configuration the host API picks for `case`.
fn config(case: &Case) -> HeadDimConfig {
    config_for_call(case.d as u32, case.causal, case.narrow, case.w3)
        .expect("a supported head dim")
        .0
}

/// Runs CTA `cta` of `grid` of the kernel the host API picks for `case`
/// (`config_for_call`), instantiated as its entry in the kernel crate's
/// list (`attention_entries!`, `attention/kernel/src/entries.rs`: the same
/// list `lib.rs` declares the PTX entries from), with the configuration's
/// threads.
fn run_cta(case: &Case, p: &Params, cta: u32, grid: u32) {
    let warpgroups = config(case).threads() / 128;
    macro_rules! cta {
        ($nb:literal, $bn:literal, $sk:literal, $sv:literal, $sq:literal, $w:literal, $($rest:tt)*) => {
            thread::run_cta(
                AttnSmem::<$nb, $bn, $sk, $sv, $sq, $w> {
                    k: baton::tile_pipeline::InputTileStorage::new(),
                    v: baton::tile_pipeline::InputTileStorage::new(),
                    q: baton::tile_pipeline::InputTileStorage::new(),
                    order: baton::ordered_barrier::OrderedBarriers::new(),
                },
                warpgroups,
                cta,
                grid,
                |_smem| fwd::run::<$nb, $bn, $sk, $sv, $sq, $w, $($rest)*>(&p.0),
            )
        };
    }
    let spec = config_for_call(case.d as u32, case.causal, case.narrow, case.w3)
        .expect("a supported head dim")
        .1;
    // Every kernel entry, by its spec's name, as `lib.rs` instantiates it;
    // then the options no entry uses.
    macro_rules! dispatch {
        ($($(#[$doc:meta])* $name:ident($spec:ident, $config:ident) = fwd::run::<$nb:literal, $bn:literal, $sk:literal, $sv:literal, $sq:literal, $w:literal, $sacc:literal, $oacc:literal, $pack:literal, $pr:literal, $cr:literal, $persistent:literal, $emu:literal, $early:literal, $plan:literal, $xt:literal, $s:ty, $o:ty>;)*) => {
            match (spec.name, case.fma_exp2_early_rescale) {
                $((name, false) if name == stringify!($name) => {
                    // The instantiation is the configuration the host picked.
                    assert!(config(case).is_instance($nb, $bn, $sk, $sv, $sq, $w, $persistent, $plan, $xt));
                    cta!($nb, $bn, $sk, $sv, $sq, $w, $sacc, $oacc, $pack, $pr, $cr, $persistent, $emu, $early, $plan, $xt, $s, $o)
                })*
                // The d = 64 entry with the options not in use (`EMU` 4:
                // every 4th chunk's exp2 on the FMA pipe; the early O
                // rescale), kept in fwd.rs.
                ("baton_attention_fwd_d64", true) => {
                    cta!(1, 176, 3, 3, 2, 2, 88, 32, 44, 40, 232, true, 4, true, false, false, qk::QkN176, pv::PvN64)
                }
                (name, variant) => {
                    panic!("no instantiation of {name} (options variant: {variant}) here")
                }
            }
        };
    }
    attention_entries!(dispatch)
}

/// Runs `case` on the CPU backend (with `fault`) and checks every element
/// of O and the logsumexp against f64; `Err` names the first mismatch.
fn check(case: Case, fault: Fault) -> Result<(), String> {
    let Case {
        d,
        batch,
        seq_q,
        seq_kv,
        q_heads,
        kv_heads,
        causal,
        bhsd,
        pingpong,
        grid,
        ..
    } = case;
    let mut rng = Rng::fresh();
    let (sq, skv) = (
        Strides::new(seq_q, q_heads, d, bhsd),
        Strides::new(seq_kv, kv_heads, d, bhsd),
    );
    let (nq, nkv) = (batch * seq_q * q_heads * d, batch * seq_kv * kv_heads * d);
    let q: Vec<u16> = (0..nq).map(|_| rng.bf16()).collect();
    let k: Vec<u16> = (0..nkv).map(|_| rng.bf16()).collect();
    let v: Vec<u16> = (0..nkv).map(|_| rng.bf16()).collect();
    let guard = 64 * d;
    let mut o_init = vec![NAN_BF16; nq];
    o_init.extend(std::iter::repeat_n(GUARD_BF16, guard));
    let (qb, kb, vb, ob) = (Buf::new(&q), Buf::new(&k), Buf::new(&v), Buf::new(&o_init));
    let mut lse = vec![f32::NAN; batch * q_heads * seq_q];

    let cfg = config(&case);
    let bn = cfg.block_n;
    let (qm, q_inner) = maps(&qb, sq, batch, seq_q, q_heads, d, 64);
    let (km, k_inner) = maps(&kb, skv, batch, seq_kv, kv_heads, d, bn);
    let (vm, v_inner) = maps(&vb, skv, batch, seq_kv, kv_heads, d, bn);
    let (om, o_inner) = maps(&ob, sq, batch, seq_q, q_heads, d, 64);
    let scale = 1.0 / (d as f64).sqrt();
    let batch_heads = (batch * q_heads) as u32;
    let group = (q_heads / kv_heads) as u32;
    let params = Params(AttentionParams {
        q_maps: qm.as_ptr(),
        k_maps: km.as_ptr(),
        v_maps: vm.as_ptr(),
        o_maps: om.as_ptr(),
        lse: lse.as_mut_ptr(),
        seq_q: seq_q as u32,
        seq_kv: seq_kv as u32,
        q_heads: q_heads as u32,
        batch_heads,
        heads_per_section: heads_per_section(seq_kv as u32, d as u32, group, batch_heads),
        heads_per_kv_head: if fault == Fault::WrongGqaMapping {
            1
        } else {
            group
        },
        causal: causal as u32,
        heads_inner: q_inner as u32
            | (k_inner as u32) << 1
            | (v_inner as u32) << 2
            | (o_inner as u32) << 3,
        pingpong,
        scale_log2: (scale * std::f64::consts::LOG2_E) as f32,
        tile_order: std::ptr::null(),
    });
    let tiles = tile_count(seq_q as u32, cfg.bm(), batch_heads);
    let persistent = cfg.persistent;
    let grid = if persistent { grid.min(tiles) } else { tiles };
    // Causal calls on the planned kernels follow the host's plan, as the
    // host API launches them.
    let mut params = params;
    let order = (causal && cfg.planned).then(|| {
        let mut order = plan(
            seq_q as u32,
            seq_kv as u32,
            cfg.bm(),
            bn,
            batch_heads,
            params.0.heads_per_section,
            grid,
        );
        assert!(check_plan(&order, tiles, grid), "{case:?}: a bad plan");
        if fault == Fault::BrokenPlan {
            let n = order.len();
            order[n - 1] = order[grid as usize + 1];
            assert!(!check_plan(&order, tiles, grid));
        }
        order
    });
    if let Some(order) = &order {
        params.0.tile_order = order.as_ptr();
    }
    let ctas = if fault == Fault::SkipLastCta {
        grid - 1
    } else {
        grid
    };
    let t = std::time::Instant::now();
    for cta in 0..ctas {
        run_cta(&case, &params, cta, grid);
    }
    let elapsed = t.elapsed();

    // f64 reference, every element.
    let o = ob.values(nq + guard);
    if let Some(i) = o[nq..].iter().position(|&x| x != GUARD_BF16) {
        return Err(format!("{case:?}: element {i} past O's end was written"));
    }
    let (mut worst, mut checked) = (0f64, 0usize);
    for b in 0..batch {
        for h in 0..q_heads {
            let kvh = h / group as usize;
            for i in 0..seq_q {
                let cols = if causal { (i + 1).min(seq_kv) } else { seq_kv };
                let s: Vec<f64> = (0..cols)
                    .map(|j| {
                        (0..d)
                            .map(|c| bf16(q[sq.at(b, i, h) + c]) * bf16(k[skv.at(b, j, kvh) + c]))
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
                let l: f64 = e.iter().sum();
                let r: Vec<f64> = (0..d)
                    .map(|c| {
                        (0..cols)
                            .map(|j| e[j] * bf16(v[skv.at(b, j, kvh) + c]))
                            .sum::<f64>()
                            / l
                    })
                    .collect();
                let peak = r.iter().fold(0f64, |a, x| a.max(x.abs())).max(1e-3);
                for (c, &want) in r.iter().enumerate() {
                    let got = bf16(o[sq.at(b, i, h) + c]);
                    let err = (got - want).abs() / peak;
                    if err.is_nan() || err > 2e-2 {
                        return Err(format!(
                            "{case:?}: O[b {b}, row {i}, head {h}, col {c}] = {got}, reference {want} (error {err:.3e} of the row's peak {peak:.3e})"
                        ));
                    }
                    worst = worst.max(err);
                    checked += 1;
                }
                let want = m + l.ln();
                let got = lse[(b * q_heads + h) * seq_q + i] as f64;
                let err = (got - want).abs();
                if err.is_nan() || err > 1e-3 * (1.0 + want.abs()) {
                    return Err(format!(
                        "{case:?}: logsumexp[b {b}, head {h}, row {i}] = {got}, reference {want}"
                    ));
                }
            }
        }
    }
    println!(
        "{case:?}: {checked} elements of O and {} of the logsumexp checked, worst O error {worst:.2e} of the row peak; {tiles} tiles on {ctas} CTAs in {elapsed:.1?}",
        lse.len()
    );
    Ok(())
}

/// Runs `f` on a thread with room for a CTA's shared memory on its stack.
fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
}

#[test]
fn d64_causal_and_not_gqa_ragged() {
    big_stack(|| {
        let base = Case {
            d: 64,
            batch: 1,
            seq_q: 200,
            seq_kv: 77,
            q_heads: 2,
            kv_heads: 1,
            causal: false,
            narrow: false,
            w3: false,
            fma_exp2_early_rescale: false,
            bhsd: false,
            pingpong: 1,
            grid: 2,
        };
        check(base, Fault::None).unwrap();
        check(
            Case {
                seq_q: 130,
                seq_kv: 200,
                causal: true,
                narrow: false,
                w3: false,
                fma_exp2_early_rescale: false,
                bhsd: true,
                pingpong: 2,
                ..base
            },
            Fault::None,
        )
        .unwrap();
        // exp2 partly on the FMA pipe, O rescaled early (fwd.rs's options).
        check(
            Case {
                seq_q: 129,
                seq_kv: 181,
                fma_exp2_early_rescale: true,
                ..base
            },
            Fault::None,
        )
        .unwrap();
        // Causal, several planned tiles per CTA (6 tiles on 2 CTAs).
        check(
            Case {
                seq_q: 300,
                seq_kv: 260,
                causal: true,
                grid: 2,
                ..base
            },
            Fault::None,
        )
        .unwrap();
        // The 128-row kernel without a mask, the warpgroups issuing freely.
        check(
            Case {
                seq_q: 65,
                seq_kv: 129,
                narrow: true,
                pingpong: 0,
                grid: 1,
                ..base
            },
            Fault::None,
        )
        .unwrap();
    });
}

/// d = 64 on three consumer warpgroups (512 threads, 192-row query tiles):
/// ragged, GQA, causal and not, both ping-pong mechanisms over three
/// groups, several tiles per CTA (the turns and the 3-stage Q ring run on
/// from tile to tile).
#[test]
fn d64_three_warpgroups_causal_and_not_gqa_ragged() {
    big_stack(|| {
        let base = Case {
            d: 64,
            batch: 1,
            seq_q: 250,
            seq_kv: 77,
            q_heads: 2,
            kv_heads: 1,
            causal: false,
            narrow: false,
            w3: true,
            fma_exp2_early_rescale: false,
            bhsd: false,
            pingpong: 1,
            grid: 2,
        };
        check(base, Fault::None).unwrap();
        check(
            Case {
                batch: 2,
                seq_q: 200,
                seq_kv: 261,
                bhsd: true,
                causal: true,
                pingpong: 2,
                grid: 3,
                ..base
            },
            Fault::None,
        )
        .unwrap();
        // One CTA for every tile (4), causal with seq_q < seq_kv, ordered.
        check(
            Case {
                seq_q: 383,
                seq_kv: 400,
                causal: true,
                grid: 1,
                ..base
            },
            Fault::None,
        )
        .unwrap();
    });
}

#[test]
fn d128_causal_and_not_gqa_ragged_batch() {
    big_stack(|| {
        let base = Case {
            d: 128,
            batch: 2,
            seq_q: 1,
            seq_kv: 150,
            q_heads: 2,
            kv_heads: 1,
            causal: false,
            narrow: false,
            w3: false,
            fma_exp2_early_rescale: false,
            bhsd: true,
            pingpong: 1,
            grid: 3,
        };
        check(base, Fault::None).unwrap();
        check(
            Case {
                batch: 1,
                seq_q: 200,
                seq_kv: 199,
                causal: true,
                bhsd: false,
                pingpong: 2,
                grid: 1,
                ..base
            },
            Fault::None,
        )
        .unwrap();
    });
}

#[test]
fn d256_one_cta_per_tile() {
    big_stack(|| {
        check(
            Case {
                d: 256,
                batch: 1,
                seq_q: 70,
                seq_kv: 130,
                q_heads: 2,
                kv_heads: 1,
                causal: true,
                narrow: false,
                w3: false,
                fma_exp2_early_rescale: false,
                bhsd: true,
                pingpong: 1,
                grid: 0,
            },
            Fault::None,
        )
        .unwrap();
    });
}

#[test]
fn broken_launches_are_caught() {
    big_stack(|| {
        let case = Case {
            d: 64,
            batch: 1,
            seq_q: 150,
            seq_kv: 60,
            q_heads: 2,
            kv_heads: 1,
            causal: true,
            narrow: false,
            w3: false,
            fma_exp2_early_rescale: false,
            bhsd: false,
            pingpong: 1,
            grid: 2,
        };
        let missing = check(case, Fault::SkipLastCta).expect_err("a missing CTA passed");
        println!("missing CTA caught: {missing}");
        assert!(
            missing.contains("O[") && missing.contains("NaN"),
            "failed for another reason: {missing}"
        );
        let gqa = check(case, Fault::WrongGqaMapping).expect_err("a wrong GQA mapping passed");
        println!("wrong GQA mapping caught: {gqa}");
        assert!(gqa.contains("O["), "failed for another reason: {gqa}");
        let plan = check(case, Fault::BrokenPlan).expect_err("a broken plan passed");
        println!("broken plan caught: {plan}");
        assert!(
            plan.contains("O[") && plan.contains("NaN"),
            "failed for another reason: {plan}"
        );
    });
}
