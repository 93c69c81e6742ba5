#!/usr/bin/env python3
"""Compares baton's attention outputs dumped by the GPU test
(BATON_ATTN_DUMP=<dir>, crates/baton-attention/tests/gpu_attention.rs) with
PyTorch SDPA (math in fp32 on the GPU, and the default bf16 backend) on the
same inputs. Run in the same device call as the test.

Usage: python3 attention/tools/vs_sdpa.py <dir>   (exit 1 on any failure)
"""
import glob, json, os, sys
import numpy as np
import torch
import torch.nn.functional as F

TOL = 2e-2
d = sys.argv[1]
failed = 0
cases = sorted(glob.glob(os.path.join(d, "*.json")))
if not cases:
    print("FAIL: no dumped cases in", d)
    sys.exit(1)
for meta_path in cases:
    name = os.path.basename(meta_path)[:-5]
    m = json.load(open(meta_path))
    b, sq, skv, hq, hkv, hd = m["batch"], m["seq_q"], m["seq_kv"], m["q_heads"], m["kv_heads"], m["head_dim"]
    def load(f, h, s):
        a = np.fromfile(os.path.join(d, f"{name}.{f}.bin"), dtype=np.uint16).astype(np.int32) << 16
        return torch.from_numpy(a.view(np.float32).reshape(b, h, s, hd)).cuda()
    q, k, v, o = load("q", hq, sq), load("k", hkv, skv), load("v", hkv, skv), load("o", hq, sq)
    rep = hq // hkv
    k32, v32 = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    ref = F.scaled_dot_product_attention(q, k32, v32, is_causal=m["causal"])  # fp32
    ref_bf16 = F.scaled_dot_product_attention(q.bfloat16(), k32.bfloat16(), v32.bfloat16(), is_causal=m["causal"]).float()
    finite = bool(torch.isfinite(o).all())
    rel = ((o - ref).norm() / ref.norm()).item()
    rel_max = ((o - ref).abs().max() / ref.abs().max()).item()
    torch_rel = ((ref_bf16 - ref).norm() / ref.norm()).item()
    ok = finite and rel <= TOL and rel_max <= TOL
    failed += not ok
    print(f"{'PASS' if ok else 'FAIL'} vs-sdpa {name} {m}: finite={finite} rel L2 {rel:.2e}, max {rel_max:.2e} "
          f"(torch bf16 SDPA vs fp32: rel L2 {torch_rel:.2e})", flush=True)
sys.exit(1 if failed else 0)
