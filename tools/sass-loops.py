#!/usr/bin/env python3
"""Instruction counts of the SASS loops that issue wgmma (HGMMA/QGMMA) in one
kernel of a cubin: `tools/sass-loops.py <cubin> <kernel>` (needs nvdisasm:
`source tools/env.sh`). A loop is the range from a backward branch's target
to the branch; only innermost loops containing a wgmma are printed, with their opcode
histogram (what the zero-cost and main-loop reviews compare)."""
import collections
import os
import re
import subprocess
import sys

cubin, kernel = sys.argv[1], sys.argv[2]
nvdisasm = os.environ.get("NVDISASM", "nvdisasm")
text = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, check=True).stdout
section = text.split(f".text.{kernel}:")[1].split("//----------")[0]
labels, ins = {}, []
for line in section.splitlines():
    m = re.match(r"^(\.L_x_\d+):", line.strip())
    if m:
        labels[m.group(1)] = len(ins)
        continue
    m = re.match(r"\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*;", line)
    if m:
        ins.append(m.group(2))
loops = []
for i, t in enumerate(ins):
    m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", t)
    if m and labels.get(m.group(1), 1 << 30) <= i:
        loops.append((labels[m.group(1)], i))
for start, end in loops:
    # innermost only: no other loop nested inside
    if any(start <= s and e <= end for s, e in loops if (s, e) != (start, end)):
        continue
    body = ins[start : end + 1]
    if not any("GMMA" in b for b in body):
        continue
    ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", b).split()[0].split(".")[0] for b in body)
    print(f"{kernel}: loop of {len(body)} instructions:", dict(ops.most_common()))
