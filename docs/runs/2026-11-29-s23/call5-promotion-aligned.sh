#!/usr/bin/env bash
# Session 23, call 5 (H200): TMA L2 promotion at aligned, DRAM-streaming
# rows (the experiment build of call 4, BATON_EXP_L2_PROMO): FP8 at M = 64
# by DeepGEMM's method (--flush-l2), BF16 small-M rows as the sweep times them.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-exp; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
E=/tmp/b/baton-exp
$E bench gemm --shape 64x4096x4096 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do for promo in 256 128 none; do
  echo "== $pass $promo" >> $O/fp8.txt
  BATON_EXP_L2_PROMO=$promo $E bench gemm-fp8 --flush-l2 --shape 64x7168x16384 --shape 64x32768x512 --shape 64x4096x7168 --shape 4096x7168x16384 >> $O/fp8.txt 2>&1
  for s in 64x4096x4096 8x16384x4096 64x16384x4096 1024x1024x4096; do echo "== $pass $promo $s" >> $O/bf16.txt
    BATON_EXP_L2_PROMO=$promo $E bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $O/bf16.txt; done
done; done
echo "t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
