#!/usr/bin/env bash
# Session 25, call 1 (H200): the FP8 kernels' per-SM speed by width today,
# forced, by DeepGEMM's method (--flush-l2: 256 MiB flush, median of 50),
# CLI of main cc22dca (kernels as c4f573c). Two passes. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton-base.xz > /tmp/baton; chmod +x /tmp/baton
T=$O/fp8-forced.txt
for pass in 1 2; do for s in 4096x2112x7168 4096x4096x7168 8192x8192x8192 4096x24576x1536 4096x7168x16384; do
  for k in plan 128x192 256x128 128x128_db 256x96; do
    a=""; [ $k != plan ] && a="--kernel $k"
    echo "== $pass $s $k" >> $T
    timeout 60 /tmp/baton bench gemm-fp8 --flush-l2 --shape $s $a 2>&1 | grep -vE "^\s*$" | tail -4 >> $T
  done; done; echo "pass $pass t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
