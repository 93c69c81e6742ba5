#!/usr/bin/env bash
# Session 25, call 2 (H200): sub-wave stream-K (every SM busy, --sk-waves 0)
# on the memory-fed rows whose plans fill fewer SMs than the GPU has (79 of
# 132 at N = 5000 with 64-row tiles), forced, against each row's plan, two
# passes. CLI of main cc22dca. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton-base.xz > /tmp/baton; chmod +x /tmp/baton
T=$O/rows.txt
run() { echo "== $pass $*" >> $T; timeout 30 /tmp/baton bench gemm --reps 31 --chart /tmp/c.png "$@" 2>&1 | grep -E "^[0-9]+x|rror" >> $T; }
for pass in 1 2; do
  for s in 32x5000x4096 64x5000x4096; do
    c=32x64-swapab; [ ${s%%x*} = 64 ] && c=64x64-swapab
    run --shape $s; run --shape $s --config $c --repack none --stream-k 4 --sk-waves 0; done
  s=128x5000x4096; run --shape $s; run --shape $s --config 128x64 --repack none --stream-k 4 --sk-waves 0; run --shape $s --config 128x64-swapab --repack none --stream-k 8 --sk-waves 0
  s=128x8192x1024; run --shape $s; run --shape $s --config 128x64 --repack none --stream-k 4 --sk-waves 0
  s=1x16384x4096; run --shape $s; run --shape $s --config 16x64-swapab --repack none --stream-k 8 --sk-waves 0
  s=32x1024x32768; run --shape $s; run --shape $s --config 32x64-swapab --repack none --stream-k 16 --sk-waves 0
  echo "pass $pass t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
