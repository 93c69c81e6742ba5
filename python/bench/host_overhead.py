"""Host time per call of baton's BF16 GEMM: the Rust API (`GemmPlan::run`,
plan made once), this package's Rust path without Python, the native
function called from Python, the torch op and `baton.gemm` — in one
process, on one device. A GPU spin (`torch.cuda._sleep`) keeps the GPU busy
so the launches queue and only host time is measured.

    python bench/host_overhead.py [--m 128 --n 128 --k 128 --iters 400]
"""

import argparse
import json
import time

import torch

import baton
from baton import _baton

p = argparse.ArgumentParser()
p.add_argument("--m", type=int, default=128)
p.add_argument("--n", type=int, default=128)
p.add_argument("--k", type=int, default=128)
p.add_argument("--iters", type=int, default=400)
p.add_argument("--reps", type=int, default=5)
p.add_argument("--json")
args = p.parse_args()
m, n, k, iters = args.m, args.n, args.k, args.iters
dev = torch.cuda.current_device()
a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
stream = torch.cuda.current_stream().cuda_stream
SPIN = 400_000_000  # cycles: ~0.2 s, longer than any loop below


def t(x):
    return (x.data_ptr(), x.size(0), x.size(1), x.stride(0), x.stride(1))


def timed(fn):
    """Median over reps of host seconds per call, each rep behind a spin."""
    fn()
    torch.cuda.synchronize()
    per = []
    for _ in range(args.reps):
        torch.cuda._sleep(SPIN)
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        per.append((time.perf_counter() - t0) / iters)
        torch.cuda.synchronize()
    return sorted(per)[len(per) // 2]


def rust_plan(oneshot=False):
    per = []
    for _ in range(args.reps):
        torch.cuda._sleep(SPIN)
        per.append(_baton.bench_rust_plan_run(dev, m, n, k, iters, oneshot))
    return sorted(per)[len(per) // 2]


def rust_call():
    per = []
    for _ in range(args.reps):
        torch.cuda._sleep(SPIN)
        per.append(_baton.bench_rust_call(dev, stream, t(a), t(b), t(out), iters))
        torch.cuda.synchronize()
    return sorted(per)[len(per) // 2]


ta, tb, to = t(a), t(b), t(out)
rows = {
    "rust GemmPlan::run": rust_plan(),
    "rust gemm::gemm_bf16 (a plan per call)": rust_plan(oneshot=True),
    "rust path of the package (no Python)": rust_call(),
    "_baton.gemm (native fn from Python)": timed(lambda: _baton.gemm(dev, stream, ta, tb, None, to, 1.0, 0.0)),
    "torch.ops.baton.gemm": timed(lambda: torch.ops.baton.gemm(a, b, None, 1.0, 0.0)),
    "baton.gemm": timed(lambda: baton.gemm(a, b)),
    "baton.gemm(out=)": timed(lambda: baton.gemm(a, b, out=out)),
    "torch.mm(a, b.T) (reference)": timed(lambda: torch.mm(a, b.T)),
}
base = rows["rust GemmPlan::run"]
print(f"host time per call, {m}x{n}x{k}, {iters} calls x {args.reps} reps (median), {torch.cuda.get_device_name()}")
for name, sec in rows.items():
    print(f"  {name:40s} {sec * 1e6:7.2f} us   (+{(sec - base) * 1e6:6.2f} us vs Rust API)")
if args.json:
    with open(args.json, "w") as f:
        json.dump({k: v * 1e6 for k, v in rows.items()}, f, indent=1)
