#!/usr/bin/env python3
"""Joins the rows of fp8-split-calib.sh (the per-row JSON of `baton bench gemm-fp8 --json`,
extracted from s.tar.gz) with the cost model's estimates (`fp8_plans` forced mode, this
checkout's constants): per row both passes' ours / cuBLASLt blockwise µs and ratio, their
spread, the estimate and the log error past the 5.3 µs launch floor; then the rms log error.

    tar xzf s.tar.gz && python3 docs/runs/2026-11-28-s16/fp8-split-calib-join.py s

A "plan" row's kernel and split count are the bundle's (config and grid / units in its JSON);
its estimate is taken as that forced plan's, so a checkout with other constants still costs
what ran.
"""
import glob
import json
import math
import os
import re
import subprocess
import sys

FLOOR_US = 5.3
NAME = re.compile(r"p(\d)-(\d+)x(\d+)x(\d+)-(.+)\.json$")


def units(kernel, m, n):
    """Work units of a kernel's tiles (2-tile clusters along M for _c2)."""
    bm, bn = {"128x32_db": (128, 32), "128x64_db": (128, 64), "128x96_db": (128, 96),
              "128x128_db": (128, 128), "128x128_db_c2": (128, 128), "256x128_sk": (256, 128),
              "256x128": (256, 128), "256x96": (256, 96), "256x128_mca": (256, 128)}[kernel]
    rows = -(-m // bm)
    if kernel.endswith("_c2"):
        rows = -(-rows // 2)
    return rows * -(-n // bn)


def main(d):
    rows = {}
    for path in sorted(glob.glob(os.path.join(d, "p*.json"))):
        g = NAME.search(os.path.basename(path))
        if not g:
            continue
        p, m, n, k, tag = int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5]
        r = json.load(open(path))["results"]
        if not r:
            continue
        r = r[0]
        kernel = r["config"]
        splits = r["grid"] // units(kernel, m, n) if r["stream_k"] == [1, 0] else 1
        if kernel == "256x128_sk" and r["stream_k"] is None:
            splits = 1
        rows.setdefault((m, n, k, tag), {})[p] = (kernel, splits, r["ours_ms"] * 1e3,
                                                  r["references"][0]["ms"] * 1e3, r["ratio"])
    args = sorted({f"{m}x{n}x{k}:{v[0]}:{v[1]}" for (m, n, k, _), ps in rows.items()
                   for v in ps.values()})
    out = subprocess.run(["cargo", "run", "-q", "-p", "baton-cli", "--example", "fp8_plans", "--"]
                         + args, capture_output=True, text=True, check=True).stdout
    est = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "forced":
            est[(int(f[1]), int(f[2]), int(f[3]), f[4], int(f[6]))] = float(f[7])
    sq, count = 0.0, 0
    print("| shape | row | kernel split | ours µs p1 / p2 | cuBLASLt µs p1 / p2 | ratio p1 / p2 | spread | est µs | log err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (m, n, k, tag), ps in sorted(rows.items()):
        kernel, splits = next(iter(ps.values()))[:2]
        ours = [ps[p][2] for p in sorted(ps)]
        lt = [ps[p][3] for p in sorted(ps)]
        ratio = [ps[p][4] for p in sorted(ps)]
        e = est.get((m, n, k, kernel, splits))
        mean = sum(ours) / len(ours)
        err = math.log(e / (mean - FLOOR_US)) if e else float("nan")
        if e:
            sq, count = sq + err * err, count + 1
        print(f"| {m}×{n}×{k} | {tag} | {kernel} ×{splits} | {' / '.join(f'{x:.1f}' for x in ours)} | "
              f"{' / '.join(f'{x:.1f}' for x in lt)} | {' / '.join(f'{x:.3f}' for x in ratio)} | "
              f"{(max(ours) - min(ours)) / mean * 100:.1f} % | {e if e else float('nan'):.1f} | {err:+.3f} |")
    if count:
        print(f"rms log error over {count} rows (mean of passes, past {FLOOR_US} µs): {math.sqrt(sq / count):.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "s")
