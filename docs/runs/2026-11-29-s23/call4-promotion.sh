#!/usr/bin/env bash
# Session 23, call 4 (H200): K = 2056 rows (16-byte aligned rows) under each
# TMA L2 promotion (an experiment build reading BATON_EXP_L2_PROMO in the
# tensor-map encoder; not landed), and narrow swap-AB split 2 there.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-exp; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
P=$O/promo.txt
/tmp/b/baton-exp bench gemm --shape 64x4104x2048 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do for promo in 256 none 64 128; do
for a in "32x4104x2056 32x64-swapab 1 none" "32x4104x2048 32x64-swapab 1 none" "64x4104x2056 64x64-swapab 1 none" "128x4104x2056 128x64 1 none" "128x4104x2048 128x64 1 none" "1024x4104x2056 256x128c2 1 none"; do
  set -- $a; echo "== $pass $promo $a" >> $P; BATON_EXP_L2_PROMO=$promo /tmp/b/baton-exp bench gemm --shape $1 --config $2 --split-k $3 --repack $4 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $P; done; done; done
echo "promo t=${SECONDS}s"
F=$O/split.txt
for pass in 1 2; do
for a in "32x4104x2056 32x64-swapab 2" "64x4104x2056 64x64-swapab 2" "8x4104x2056 16x64-swapab 2" "64x4104x2048 64x64-swapab 2" "32x4104x2048 32x64-swapab 2"; do
  set -- $a; echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape $1 --config $2 --split-k $3 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; done; done
echo "split t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
