#!/usr/bin/env bash
# Session 22, call 6 (H200): the final CLI: `baton info` (the DRAM rate the plans' cost model reads
# from the device), `baton bench gemm` (the README's main job's GEMM step), and the long-K rows
# whose plan the device rate moves. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
timeout 60 /tmp/b/baton info > $O/info.txt 2>&1; echo "info rc=$?"; grep -E "^GPU" $O/info.txt
timeout 150 /tmp/b/baton bench gemm > $O/bench-gemm.txt 2>&1; echo "bench gemm rc=$? t=${SECONDS}s"; grep -E "^GPU|geometric|FAIL|verify" $O/bench-gemm.txt | head -12
timeout 60 /tmp/b/baton bench gemm --shape 1x1024x32768 --shape 8x1024x32768 --shape 128x4096x4096 --reps 31 > $O/rows.txt 2>&1; echo "rows rc=$? t=${SECONDS}s"; grep -E "^ *[0-9]+x" $O/rows.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
