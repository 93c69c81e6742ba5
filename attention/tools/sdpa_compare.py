#!/usr/bin/env python3
"""Issue #17's measure on the bench's own shape set: PyTorch SDPA's backends
timed on exactly the shapes `baton bench attention --json FILE` timed (GQA
included), then, per shape, ours / the best backend and ours / the flash
(FA2) backend, with the geometric means and the minimum.

Run it in the same device call as the bench, right after it:

    baton bench attention --reps 10 --json $OUT/attention.json
    python3 attention/tools/sdpa_compare.py $OUT/attention.json

Method (as ../shared/anchors/sdpa.py): bf16 [b, h, s, d] inputs from
torch.randn, 5 warm-up calls, then the median of 20 single calls, each
between CUDA events. TFLOP/s = 4·b·h·s²·d, halved for causal. Backends:
flash, cuDNN, efficient (memory-efficient); a backend that refuses a shape
prints its error and is left out of that shape's best. For GQA rows a
backend is given `enable_gqa=True`; one that refuses it gets K and V with
their heads repeated to the query heads, made before timing (what a user of
that backend would do), and the row says so.

Exit status: 1 when a row of ours failed its check, a row has no backend
result, or the JSON is empty; 0 otherwise. It reports; it asserts no speed.
"""
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = [
    ("flash", SDPBackend.FLASH_ATTENTION),
    ("cudnn", SDPBackend.CUDNN_ATTENTION),
    ("efficient", SDPBackend.EFFICIENT_ATTENTION),
]


def median_ms(fn, iters=20, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    ts = sorted(s.elapsed_time(e) for s, e in ev)
    return ts[len(ts) // 2]


def time_backend(backend, q, k, v, causal, gqa):
    """(TFLOP/s-ready ms, note) for one backend, or raises."""
    with sdpa_kernel(backend):
        if gqa:
            try:
                F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
                return median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)), ""
            except RuntimeError:
                rep = q.shape[1] // k.shape[1]
                ke, ve = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
                F.scaled_dot_product_attention(q, ke, ve, is_causal=causal)
                return median_ms(lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=causal)), " (K/V expanded)"
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), ""


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    rows = json.load(open(sys.argv[1]))
    if not rows:
        print("FAIL: no rows in", sys.argv[1])
        return 1
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
    failed = False
    to_best, to_fa2 = [], []
    lines = []
    for r in rows:
        b, h, hkv, s, d, causal = r["batch"], r["q_heads"], r["kv_heads"], r["seq"], r["head_dim"], r["causal"]
        flops = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        got = {}
        for name, be in BACKENDS:
            try:
                ms, note = time_backend(be, q, k, v, causal, hkv != h)
                got[name] = (flops / ms / 1e9, note)
            except Exception as ex:  # a backend that cannot run this shape
                print(f"  {r['label']}: {name} refused: {type(ex).__name__}: {str(ex).splitlines()[0][:120]}")
        del q, k, v
        if r["check"] != "ok":
            print(f"FAIL: {r['label']}: ours failed its check ({r['check']})")
            failed = True
        if not got:
            print(f"FAIL: {r['label']}: no SDPA backend ran")
            failed = True
            continue
        best_name, (best, best_note) = max(got.items(), key=lambda kv: kv[1][0])
        ours = r["tflops"]
        ratio = ours / best
        to_best.append(ratio)
        fa2 = got.get("flash")
        fa2_ratio = ours / fa2[0] if fa2 else None
        if fa2_ratio is not None:
            to_fa2.append(fa2_ratio)
        backends = ", ".join(f"{n} {t:.0f}{note}" for n, (t, note) in got.items())
        fa2_cell = f"{fa2_ratio:.2f}" if fa2_ratio is not None else "–"
        lines.append(f"| {r['label']} | {ours:.0f} | {backends} | {best_name}{best_note} | {ratio:.3f} | {fa2_cell} |")
    print("| shape | baton TFLOP/s | SDPA backends TFLOP/s | best | baton / best | baton / FA2 |")
    print("|---|---|---|---|---|---|")
    for line in lines:
        print(line)
    if to_best:
        gm = math.exp(sum(map(math.log, to_best)) / len(to_best))
        print(f"geometric mean baton / best backend: {gm:.3f} over {len(to_best)} shapes; minimum {min(to_best):.3f}")
    if to_fa2:
        gm2 = math.exp(sum(map(math.log, to_fa2)) / len(to_fa2))
        print(f"geometric mean baton / flash (FA2): {gm2:.2f} over {len(to_fa2)} shapes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
