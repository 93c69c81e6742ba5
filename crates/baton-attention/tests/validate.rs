//! Every typed error of `validate`, and a valid call in both layouts (no GPU needed).

use baton_attention::{AttentionError, AttentionShape, Dim, Strides, TensorName, validate};

fn shape() -> AttentionShape {
    AttentionShape {
        batch: 2,
        seq_q: 77,
        seq_kv: 130,
        q_heads: 8,
        kv_heads: 2,
        head_dim: 128,
    }
}

/// Q/O and K/V strides and exact lengths for `s` in layout `bshd` or not.
fn tensors(s: &AttentionShape, bshd: bool) -> [(Strides, usize); 4] {
    let st = |seq, heads| {
        if bshd {
            Strides::bshd(seq, heads, s.head_dim)
        } else {
            Strides::bhsd(seq, heads, s.head_dim)
        }
    };
    let (q, kv) = (st(s.seq_q, s.q_heads), st(s.seq_kv, s.kv_heads));
    let (nq, nkv) = (
        s.batch * s.seq_q * s.q_heads * s.head_dim,
        s.batch * s.seq_kv * s.kv_heads * s.head_dim,
    );
    [(q, nq), (kv, nkv), (kv, nkv), (q, nq)]
}

#[test]
fn valid_calls_in_both_layouts() {
    for bshd in [true, false] {
        let s = shape();
        let plan = validate(&s, tensors(&s, bshd), Some(2 * 8 * 77)).unwrap();
        assert_eq!(plan.grid, (1, 16));
        assert_eq!(plan.config.head_dim, 128);
    }
}

#[test]
fn zero_sizes_are_refused_by_name() {
    type Zero = fn(&mut AttentionShape);
    let cases: [(Dim, Zero); 6] = [
        (Dim::Batch, |s| s.batch = 0),
        (Dim::SeqQ, |s| s.seq_q = 0),
        (Dim::SeqKv, |s| s.seq_kv = 0),
        (Dim::QHeads, |s| s.q_heads = 0),
        (Dim::KvHeads, |s| s.kv_heads = 0),
        (Dim::HeadDim, |s| s.head_dim = 0),
    ];
    for (dim, zero) in cases {
        let mut s = shape();
        let t = tensors(&s, true);
        zero(&mut s);
        match validate(&s, t, None) {
            Err(AttentionError::ZeroSize { dim: d }) => assert_eq!(d, dim),
            other => panic!("{dim:?} = 0 gave {other:?}"),
        }
    }
}

#[test]
fn unsupported_head_dims_are_refused() {
    for d in [32, 96, 192, 512] {
        let s = AttentionShape {
            head_dim: d,
            ..shape()
        };
        let err = validate(&s, tensors(&s, true), None).unwrap_err();
        assert!(
            matches!(err, AttentionError::UnsupportedHeadDim { head_dim, supported: [64, 128, 256] } if head_dim == d),
            "{err:?}"
        );
        assert!(err.to_string().contains("[64, 128, 256]"));
    }
}

#[test]
fn kv_heads_must_divide_q_heads() {
    let s = AttentionShape {
        q_heads: 8,
        kv_heads: 3,
        ..shape()
    };
    let err = validate(&s, tensors(&s, true), None).unwrap_err();
    assert!(matches!(
        err,
        AttentionError::KvHeadsNotDividing {
            q_heads: 8,
            kv_heads: 3
        }
    ));
}

#[test]
fn misaligned_strides_are_refused_per_tensor_and_dim() {
    let s = shape();
    for t in 0..4 {
        for which in ["batch", "seq", "head"] {
            let mut ts = tensors(&s, false);
            let st = &mut ts[t].0;
            match which {
                "batch" => st.batch += 4,
                "seq" => st.seq += 4,
                _ => st.head += 4,
            }
            ts[t].1 *= 2; // long enough: the stride is the only fault
            let err = validate(&s, ts, None).unwrap_err();
            let name = [TensorName::Q, TensorName::K, TensorName::V, TensorName::O][t];
            assert!(
                matches!(err, AttentionError::MisalignedStride { tensor, which: w, .. } if tensor == name && w == which),
                "{err:?}"
            );
        }
    }
}

#[test]
fn short_buffers_are_refused_with_the_needed_length() {
    let s = shape();
    for t in 0..4 {
        let mut ts = tensors(&s, t % 2 == 0);
        let needed = ts[t].1;
        ts[t].1 -= 1;
        match validate(&s, ts, None) {
            Err(AttentionError::WrongLength { len, needed: n, .. }) => {
                assert_eq!((len, n), (needed - 1, needed));
            }
            other => panic!("tensor {t}: {other:?}"),
        }
    }
}

#[test]
fn lse_length_must_match() {
    let s = shape();
    let err = validate(&s, tensors(&s, true), Some(2 * 8 * 77 + 1)).unwrap_err();
    assert!(matches!(
        err,
        AttentionError::LseWrongLength {
            len: 1233,
            needed: 1232
        }
    ));
}

#[test]
fn grid_limit_is_refused() {
    let s = AttentionShape {
        batch: 70000,
        q_heads: 1,
        kv_heads: 1,
        ..shape()
    };
    let err = validate(&s, tensors(&s, true), None).unwrap_err();
    assert!(matches!(
        err,
        AttentionError::TooLarge {
            dim: Dim::QHeads,
            value: 70000,
            max: 65535,
            ..
        }
    ));
}
