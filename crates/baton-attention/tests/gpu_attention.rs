//! The attention kernels on the GPU against an f64 CPU reference: fresh
//! random inputs (seed printed), NaN-poisoned outputs with a guard past O,
//! ragged seq_q ≠ seq_kv, causal and not, GQA, head_dim 64/128/256, both
//! layouts, the logsumexp, and the debug PTX once. Without a CUDA GPU it
//! prints `SKIPPED: …`.
//!
//! With `BATON_ATTN_DUMP=<dir>` it also writes one large case (inputs,
//! output, shape) for `tools/attention-vs-sdpa.py`, which compares it with
//! PyTorch SDPA in the same device call.

use baton::numeric::{Bf16, SmallFloat};
use baton_attention::{
    Attention, AttentionOptions, AttentionShape, Ctas, KvBlock, Schedule, Strides, TensorMut,
    TensorRef, Warpgroups,
};
use baton_runtime::{Error, Gpu};

/// bf16 NaN: the poison of O and of its guard.
const POISON: u16 = 0x7FC0;
/// Guard elements after O.
const GUARD: usize = 512;
/// Largest allowed relative error (L2 over the tensor, and per element
/// against the tensor's largest magnitude).
const REL_TOL: f64 = 2e-2;

fn gpu() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if e.is_no_gpu() => {
            println!("SKIPPED: no CUDA GPU ({e})");
            None
        }
        Err(e @ Error::WrongArch { .. }) => {
            println!("SKIPPED: needs an sm_90a GPU ({e})");
            None
        }
        Err(e) => panic!("the GPU is present but unusable: {e}"),
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5EED)
}

/// `len` bf16 values uniform in [-amp, amp).
fn random_bf16(rng: &mut u64, len: usize, amp: f32) -> Vec<u16> {
    (0..len)
        .map(|_| {
            let u = (splitmix64(rng) >> 40) as f32 / (1u64 << 24) as f32;
            Bf16::from_f32((2.0 * u - 1.0) * amp).to_bits()
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
struct Case {
    shape: AttentionShape,
    causal: bool,
    bshd: bool,
    lse: bool,
    debug: bool,
    schedule: Schedule,
    ctas: Ctas,
    kv_block: KvBlock,
    warpgroups: Warpgroups,
}

fn strides(c: &Case, seq: usize, heads: usize) -> Strides {
    if c.bshd {
        Strides::bshd(seq, heads, c.shape.head_dim)
    } else {
        Strides::bhsd(seq, heads, c.shape.head_dim)
    }
}

/// f64 reference of one (batch, head): O rows and logsumexp.
#[allow(clippy::too_many_arguments)]
fn reference(
    c: &Case,
    q: &[u16],
    k: &[u16],
    v: &[u16],
    (sq, skv): (Strides, Strides),
    b: usize,
    h: usize,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    let s = &c.shape;
    let f = |x: u16| Bf16::from_bits(x).to_f64();
    let kh = h / (s.q_heads / s.kv_heads);
    let d = s.head_dim;
    let mut out = vec![0f64; s.seq_q * d];
    let mut lse = vec![0f64; s.seq_q];
    let mut p = vec![0f64; s.seq_kv];
    for i in 0..s.seq_q {
        let qi = &q[b * sq.batch + i * sq.seq + h * sq.head..][..d];
        let cols = if c.causal {
            (i + 1).min(s.seq_kv)
        } else {
            s.seq_kv
        };
        let mut mx = f64::NEG_INFINITY;
        for (j, pj) in p.iter_mut().enumerate().take(cols) {
            let kj = &k[b * skv.batch + j * skv.seq + kh * skv.head..][..d];
            *pj = qi.iter().zip(kj).map(|(&a, &b)| f(a) * f(b)).sum::<f64>() * scale;
            mx = mx.max(*pj);
        }
        let mut sum = 0.0;
        for pj in p.iter_mut().take(cols) {
            *pj = (*pj - mx).exp();
            sum += *pj;
        }
        lse[i] = mx + sum.ln();
        for (j, &pj) in p.iter().enumerate().take(cols) {
            let vj = &v[b * skv.batch + j * skv.seq + kh * skv.head..][..d];
            for (o, &x) in out[i * d..][..d].iter_mut().zip(vj) {
                *o += pj / sum * f(x);
            }
        }
    }
    (out, lse)
}

/// Runs one case; returns a failure description, or None.
fn run_case(gpu: &Gpu, attn: &Attention, c: &Case, rng: &mut u64) -> Option<String> {
    let s = c.shape;
    let (sq, skv) = (
        strides(c, s.seq_q, s.q_heads),
        strides(c, s.seq_kv, s.kv_heads),
    );
    let (nq, nkv) = (
        s.batch * s.seq_q * s.q_heads * s.head_dim,
        s.batch * s.seq_kv * s.kv_heads * s.head_dim,
    );
    let q = random_bf16(rng, nq, 2.0);
    let k = random_bf16(rng, nkv, 2.0);
    let v = random_bf16(rng, nkv, 1.0);
    let stream = gpu.stream();
    let up = |x: &[u16]| stream.clone_htod(x).expect("upload");
    let (dq, dk, dv) = (up(&q), up(&k), up(&v));
    let mut d_o = stream
        .clone_htod(&vec![POISON; nq + GUARD])
        .expect("upload");
    let n_lse = s.batch * s.q_heads * s.seq_q;
    let mut d_lse = stream.clone_htod(&vec![f32::NAN; n_lse]).expect("upload");
    let opts = AttentionOptions {
        causal: c.causal,
        scale: None,
        debug: c.debug,
        schedule: c.schedule,
        ctas: c.ctas,
        kv_block: c.kv_block,
        warpgroups: c.warpgroups,
    };
    let r = attn.forward(
        stream,
        &s,
        &opts,
        TensorRef {
            data: &dq,
            strides: sq,
        },
        TensorRef {
            data: &dk,
            strides: skv,
        },
        TensorRef {
            data: &dv,
            strides: skv,
        },
        TensorMut {
            data: &mut d_o,
            strides: sq,
        },
        if c.lse { Some(&mut d_lse) } else { None },
    );
    if let Err(e) = r {
        return Some(format!("launch: {e}"));
    }
    let o = stream.clone_dtoh(&d_o).expect("download");
    let lse = stream.clone_dtoh(&d_lse).expect("download");
    if let Err(e) = gpu.synchronize() {
        return Some(format!("kernel: {e}"));
    }
    let scale = 1.0 / (s.head_dim as f64).sqrt();
    let (mut err2, mut ref2, mut max_ref, mut max_err, mut nonfinite) =
        (0f64, 0f64, 0f64, 0f64, 0usize);
    let mut lse_bad = 0usize;
    let mut worst = String::new();
    // The f64 references of every (batch, head), on all host cores.
    let refs: Vec<(Vec<f64>, Vec<f64>)> = std::thread::scope(|sc| {
        let workers: Vec<_> = (0..s.batch * s.q_heads)
            .map(|bh| {
                let (q, k, v) = (&q, &k, &v);
                sc.spawn(move || {
                    reference(c, q, k, v, (sq, skv), bh / s.q_heads, bh % s.q_heads, scale)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("reference thread"))
            .collect()
    });
    for b in 0..s.batch {
        for h in 0..s.q_heads {
            let (ro, rl) = &refs[b * s.q_heads + h];
            for i in 0..s.seq_q {
                for dd in 0..s.head_dim {
                    let got =
                        Bf16::from_bits(o[b * sq.batch + i * sq.seq + h * sq.head + dd]).to_f64();
                    let want = ro[i * s.head_dim + dd];
                    if !got.is_finite() {
                        nonfinite += 1;
                        continue;
                    }
                    let e = (got - want).abs();
                    if e > max_err {
                        max_err = e;
                        worst = format!("O[b{b} h{h} s{i} d{dd}] = {got}, expected {want}");
                    }
                    err2 += e * e;
                    ref2 += want * want;
                    max_ref = max_ref.max(want.abs());
                }
                if c.lse {
                    let got = f64::from(lse[(b * s.q_heads + h) * s.seq_q + i]);
                    // False for NaN: a NaN never passes.
                    let within = (got - rl[i]).abs() <= 1e-3 * rl[i].abs().max(1.0);
                    if !within {
                        lse_bad += 1;
                    }
                }
            }
        }
    }
    let clobbered = o[nq..].iter().filter(|&&g| g != POISON).count();
    let rel_l2 = (err2 / ref2.max(1e-300)).sqrt();
    let rel_max = max_err / max_ref.max(1e-300);
    println!("  rel L2 {rel_l2:.2e}, max |err| / max |ref| {rel_max:.2e}; worst {worst}");
    let mut fails = Vec::new();
    if nonfinite > 0 {
        fails.push(format!("{nonfinite} non-finite outputs"));
    }
    // False for NaN too.
    let within = rel_l2 <= REL_TOL && rel_max <= REL_TOL;
    if !within {
        fails.push(format!("error {rel_l2:.2e} / {rel_max:.2e} over {REL_TOL}"));
    }
    if clobbered > 0 {
        fails.push(format!("{clobbered} guard elements written"));
    }
    if lse_bad > 0 {
        fails.push(format!("{lse_bad} logsumexp values wrong"));
    }
    if fails.is_empty() {
        None
    } else {
        Some(fails.join("; "))
    }
}

/// Writes one large case for the PyTorch comparison (BATON_ATTN_DUMP).
fn dump_large(gpu: &Gpu, attn: &Attention, dir: &str, rng: &mut u64) {
    for (name, shape, causal) in [
        (
            "d128",
            AttentionShape {
                batch: 2,
                seq_q: 4000,
                seq_kv: 4000,
                q_heads: 16,
                kv_heads: 16,
                head_dim: 128,
            },
            false,
        ),
        (
            "d128_causal_gqa",
            AttentionShape {
                batch: 1,
                seq_q: 3000,
                seq_kv: 3000,
                q_heads: 16,
                kv_heads: 2,
                head_dim: 128,
            },
            true,
        ),
        (
            "d64_causal",
            AttentionShape {
                batch: 2,
                seq_q: 2048,
                seq_kv: 2048,
                q_heads: 8,
                kv_heads: 8,
                head_dim: 64,
            },
            true,
        ),
        (
            "d256",
            AttentionShape {
                batch: 1,
                seq_q: 2000,
                seq_kv: 2500,
                q_heads: 8,
                kv_heads: 8,
                head_dim: 256,
            },
            false,
        ),
    ] {
        let s = shape;
        // PyTorch's layout, [b, h, s, d].
        let (sq, skv) = (
            Strides::bhsd(s.seq_q, s.q_heads, s.head_dim),
            Strides::bhsd(s.seq_kv, s.kv_heads, s.head_dim),
        );
        let nq = s.batch * s.seq_q * s.q_heads * s.head_dim;
        let nkv = s.batch * s.seq_kv * s.kv_heads * s.head_dim;
        let (q, k, v) = (
            random_bf16(rng, nq, 2.0),
            random_bf16(rng, nkv, 2.0),
            random_bf16(rng, nkv, 1.0),
        );
        let stream = gpu.stream();
        let (dq, dk, dv) = (
            stream.clone_htod(&q).unwrap(),
            stream.clone_htod(&k).unwrap(),
            stream.clone_htod(&v).unwrap(),
        );
        let mut d_o = stream.clone_htod(&vec![POISON; nq]).unwrap();
        let opts = AttentionOptions {
            causal,
            schedule: if name.contains("causal") {
                Schedule::PingPongNamedBarriers
            } else {
                Schedule::PingPong
            },
            ..Default::default()
        };
        attn.forward(
            stream,
            &s,
            &opts,
            TensorRef {
                data: &dq,
                strides: sq,
            },
            TensorRef {
                data: &dk,
                strides: skv,
            },
            TensorRef {
                data: &dv,
                strides: skv,
            },
            TensorMut {
                data: &mut d_o,
                strides: sq,
            },
            None,
        )
        .expect("launch");
        let o = stream.clone_dtoh(&d_o).unwrap();
        gpu.synchronize().expect("kernel");
        let w = |file: &str, data: &[u16]| {
            let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(format!("{dir}/{name}.{file}.bin"), bytes).expect("write");
        };
        w("q", &q);
        w("k", &k);
        w("v", &v);
        w("o", &o);
        std::fs::write(
            format!("{dir}/{name}.json"),
            format!(
                "{{\"batch\": {}, \"seq_q\": {}, \"seq_kv\": {}, \"q_heads\": {}, \"kv_heads\": {}, \"head_dim\": {}, \"causal\": {}}}\n",
                s.batch, s.seq_q, s.seq_kv, s.q_heads, s.kv_heads, s.head_dim, causal
            ),
        )
        .expect("write");
        println!("dumped {name}");
    }
}

#[test]
fn gpu_attention_matches_f64_reference() {
    let Some(gpu) = gpu() else { return };
    let attn = Attention::new(&gpu).expect("load the attention kernels");
    let mut rng = seed();
    println!("seed {rng:#x}");
    let mut ragged = |lo: u64, span: u64| (lo + splitmix64(&mut rng) % span) as usize;
    let shape = |batch, seq_q, seq_kv, q_heads, kv_heads, head_dim| AttentionShape {
        batch,
        seq_q,
        seq_kv,
        q_heads,
        kv_heads,
        head_dim,
    };
    let case = |shape, causal, bshd| Case {
        shape,
        causal,
        bshd,
        lse: true,
        debug: false,
        schedule: Schedule::Free,
        ctas: Ctas::PerSm,
        kv_block: KvBlock::Auto,
        warpgroups: Warpgroups::Two,
    };
    let filter = std::env::var("BATON_ATTN_CASES").ok();
    let mut cases = vec![
        (
            "d128 square",
            case(shape(1, 256, 256, 2, 2, 128), false, true),
        ),
        (
            "d128 ragged",
            case(
                shape(2, ragged(129, 200), ragged(1, 400), 2, 2, 128),
                false,
                true,
            ),
        ),
        (
            "d128 causal",
            case(shape(1, 384, 384, 2, 2, 128), true, false),
        ),
        (
            "d128 causal ragged gqa",
            case(
                shape(2, ragged(100, 300), ragged(100, 300), 4, 2, 128),
                true,
                true,
            ),
        ),
        (
            "d128 gqa 4:1 bhsd",
            case(
                shape(1, ragged(50, 250), ragged(50, 250), 8, 2, 128),
                false,
                false,
            ),
        ),
        ("d128 seq 1", case(shape(1, 1, 1, 2, 1, 128), false, true)),
        (
            "d128 seq_q 1 causal",
            case(shape(1, 1, 200, 2, 2, 128), true, true),
        ),
        (
            "d64",
            case(
                shape(2, ragged(100, 300), ragged(100, 300), 2, 1, 64),
                false,
                true,
            ),
        ),
        (
            "d64 causal bhsd",
            case(
                shape(1, ragged(100, 300), ragged(100, 300), 3, 3, 64),
                true,
                false,
            ),
        ),
        (
            "d256",
            case(
                shape(1, ragged(100, 300), ragged(100, 300), 2, 2, 256),
                false,
                true,
            ),
        ),
        (
            "d256 causal gqa",
            case(
                shape(1, ragged(100, 300), ragged(100, 300), 4, 1, 256),
                true,
                false,
            ),
        ),
    ];
    // The 128-row d = 64 kernel without a causal mask (KvBlock::Narrow;
    // by default non-causal d = 64 calls run the 176-row kernel).
    cases.push((
        "d64 narrow ragged",
        Case {
            kv_block: KvBlock::Narrow,
            ..case(
                shape(2, ragged(100, 300), ragged(100, 300), 4, 2, 64),
                false,
                true,
            )
        },
    ));
    // Causal d = 64 with GQA, batch 2, up to 4 query tiles per head: more
    // planned tiles than CTAs under the Fixed CTA counts.
    cases.push((
        "d64 causal gqa batch",
        Case {
            ..case(
                shape(2, ragged(100, 400), ragged(100, 400), 4, 2, 64),
                true,
                true,
            )
        },
    ));
    // The three-warpgroup d = 64 kernel (192-row query tiles, 80-row K/V
    // blocks; by default d = 64 runs on two), causal and not.
    cases.push((
        "d64 three warpgroups",
        Case {
            warpgroups: Warpgroups::Three,
            ..case(
                shape(1, ragged(100, 300), ragged(100, 300), 4, 2, 64),
                false,
                false,
            )
        },
    ));
    cases.push((
        "d64 causal three warpgroups gqa",
        Case {
            warpgroups: Warpgroups::Three,
            ..case(
                shape(2, ragged(100, 300), ragged(100, 300), 4, 1, 64),
                true,
                true,
            )
        },
    ));
    cases.push((
        "d128 debug PTX",
        Case {
            debug: true,
            ..case(shape(1, 200, 300, 2, 2, 128), true, true)
        },
    ));
    // Every schedule: the cases cycle through them.
    let schedules = [
        Schedule::Free,
        Schedule::PingPong,
        Schedule::PingPongNamedBarriers,
    ];
    // Every CTA count: one per SM (here: one per tile), several tiles per
    // CTA (1, 2 and 3 CTAs: the pipelines — the Q ring's 3 stages too —
    // and turns run on from tile to tile, causal tiles longest first), one
    // per tile; cycled with a period prime to the schedules' so that every
    // pair occurs.
    let fixed = |n| Ctas::Fixed(core::num::NonZeroU32::new(n).unwrap());
    let ctas = [fixed(2), Ctas::PerSm, fixed(3), Ctas::PerTile, fixed(1)];
    for (i, (_, c)) in cases.iter_mut().enumerate() {
        c.schedule = schedules[i % 3];
        c.ctas = ctas[i % 5];
    }
    let mut failed = 0;
    for (name, c) in &cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        println!(
            "{name}: {:?} causal={} bshd={} schedule={:?} ctas={:?} kv_block={:?} warpgroups={:?}",
            c.shape, c.causal, c.bshd, c.schedule, c.ctas, c.kv_block, c.warpgroups
        );
        match run_case(&gpu, &attn, c, &mut rng) {
            None => println!("PASS {name}"),
            Some(why) => {
                println!("FAIL {name}: {why}");
                failed += 1;
            }
        }
    }
    if let Ok(dir) = std::env::var("BATON_ATTN_DUMP") {
        dump_large(&gpu, &attn, &dir, &mut rng);
    }
    assert_eq!(failed, 0, "{failed} attention cases failed");
}
