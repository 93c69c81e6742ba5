//! The persistent schedule covers every work tile exactly once, causal
//! sections run longest first, and the section size keeps K/V in budget.

use baton_attention_abi::schedule::{L2_SECTION_BYTES, heads_per_section, work_tile};

#[test]
fn every_tile_once_and_causal_sections_longest_first() {
    for q_tiles in [1u32, 2, 7, 32] {
        for batch_heads in [1u32, 3, 16, 37] {
            for hps in 1..=batch_heads.min(9) {
                for causal in [false, true] {
                    let n = q_tiles * batch_heads;
                    let mut seen = vec![false; n as usize];
                    let mut last: Option<(u32, u32)> = None; // (section, q_tile)
                    for t in 0..n {
                        let w = work_tile(t, q_tiles, batch_heads, hps, causal);
                        assert!(
                            w.q_tile < q_tiles && w.batch_head < batch_heads,
                            "{t}: {w:?}"
                        );
                        let i = (w.batch_head * q_tiles + w.q_tile) as usize;
                        assert!(!seen[i], "tile {w:?} twice (t = {t})");
                        seen[i] = true;
                        if causal {
                            let section = w.batch_head / hps;
                            if let Some((s, q)) = last {
                                assert!(
                                    section > s || (section == s && w.q_tile <= q),
                                    "t = {t}: {w:?} after section {s} q {q} (hps {hps})"
                                );
                            }
                            last = Some((section, w.q_tile));
                        }
                    }
                    assert!(seen.iter().all(|&s| s));
                }
            }
        }
    }
}

#[test]
fn sections_keep_kv_within_the_l2_budget() {
    for (seq, d, hpk, bh) in [
        (1024u32, 128u32, 1u32, 256u32),
        (4096, 64, 1, 128),
        (16384, 128, 8, 32),
        (100, 256, 2, 3),
    ] {
        let n = heads_per_section(seq, d, hpk, bh);
        assert!((1..=bh).contains(&n));
        let kv = 4 * seq as u64 * d as u64 / hpk as u64;
        assert!(
            n == 1 || n as u64 * kv <= L2_SECTION_BYTES,
            "{n} heads of {kv} bytes"
        );
        assert!(
            n == bh || (n as u64 + 1) * kv > L2_SECTION_BYTES,
            "{n} heads: one more would fit"
        );
    }
}
