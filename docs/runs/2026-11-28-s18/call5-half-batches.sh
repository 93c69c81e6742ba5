#!/usr/bin/env bash
# Session 18, call 5: the BF16 D ring in batches of 2 (half the ring: the next batch's writes overlap the
# previous batch's TMA reads; twice the fences) vs batches of 4 (main 685be16), alternating, on
# multi-tile shapes where the epilogue repeats, and the short-K/small rows.
set -uo pipefail
D=.lead-carry/s18; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-cur baton-half; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
S="--shape 4096x4096x4096 --shape 2048x4096x4096 --shape 8192x4096x4096 --shape 1024x3072x4096 --shape 4096x16384x4096 --shape 8192x8192x8192 --shape 2048x8192x1024 --shape 16384x5000x4096 --shape 1024x1024x4096 --shape 512x5000x4096"
for v in cur half cur half; do
  timeout 100 /tmp/b/baton-$v bench gemm $S --reps 21 --chart /tmp/x.png 2>&1 | grep -E "^[0-9]+x|geometric" > $O/shapes-$v-$SECONDS.txt
  echo "== $v t=${SECONDS}s $(grep geometric $O/shapes-$v-*.txt | tail -1)"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
