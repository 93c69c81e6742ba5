#!/usr/bin/env python3
"""Combines BF16/FP8 sweep JSONs of one binary run in separate processes
(`baton bench gemm[-fp8] --sweep --json F`, two or more) into one ratio per
shape: our fastest median over the reference's fastest median.

Why: the ~10 us rows run in one of two modes per process, for both
libraries together (session 23, BENCHMARKS.md: cuBLAS 10.5 or 15.4 us at
128x1024x4096, ours 11.5 or 14.7, in the same processes). A single run's
ratio then depends on the mode it drew, and the faster reference of two
runs set against one run of ours is biased against ours. Each side's best
over the same processes is symmetric.

Usage: tools/sweep-min-ratio.py RUN1.json RUN2.json [...] [--rows N]
Prints the geometric mean, the rows below 0.90, the minimum, and the N
lowest rows (default 20) with each run's times.
"""
import json
import math
import sys


def load(path):
    return {(r["m"], r["n"], r["k"]): r for r in json.load(open(path))["results"]}


def main(argv):
    rows_shown = 20
    if "--rows" in argv:
        i = argv.index("--rows")
        rows_shown = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    if len(argv) < 2:
        sys.exit(__doc__)
    runs = [load(p) for p in argv]
    shapes = set(runs[0]).intersection(*runs[1:])
    rows = []
    for s in shapes:
        ours = min(r[s]["ours_ms"] for r in runs)
        ref = min(r[s]["references"][0]["ms"] for r in runs)
        rows.append((ref / ours, s, runs[0][s]["config"], [r[s]["ours_ms"] * 1e3 for r in runs],
                     [r[s]["references"][0]["ms"] * 1e3 for r in runs]))
    rows.sort()
    gm = math.exp(sum(math.log(r[0]) for r in rows) / len(rows))
    print(f"{len(rows)} shapes over {len(runs)} runs: geometric mean {gm:.4f}, "
          f"{sum(r[0] < 0.9 for r in rows)} below 0.90, min {rows[0][0]:.3f}")
    for ratio, (m, n, k), config, ours, ref in rows[:rows_shown]:
        o = " ".join(f"{t:.1f}" for t in ours)
        f = " ".join(f"{t:.1f}" for t in ref)
        print(f"{ratio:.3f} {m}x{n}x{k} {config}: ours {o} us, reference {f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
