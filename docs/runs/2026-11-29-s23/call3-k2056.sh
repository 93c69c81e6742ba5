#!/usr/bin/env bash
# Session 23, call 3 (H200): what K = 2056 costs (rows of 4112 bytes).
# (1) the plan at K = 2048 / 2056 / 2064 / 2112 for M = 8, 32, 64, 128;
# (2) K = 2056 forced to K = 2048's plans; (3) traced launches of one plan
# at K = 2048 and 2056, cold and hot. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
K=$O/kvar.txt
/tmp/b/baton bench gemm --shape 64x4104x2048 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do for m in 8 32 64 128; do for k in 2048 2056 2064 2112; do
  echo "== $pass ${m}x4104x$k" >> $K; /tmp/b/baton bench gemm --shape ${m}x4104x$k --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $K; done; done; done
echo "kvar t=${SECONDS}s"
F=$O/forced.txt
for pass in 1 2; do
for a in "64x4104x2056 64x64-swapab 1 none" "64x4104x2056 64x128-swapab 1 none" "128x4104x2056 128x64 1 none" "128x4104x2056 128x64 1 a" "256x4104x2056 128x128 2 none" "256x4104x2056 128x128c2 1 none" "32x4104x2056 32x64-swapab 1 none" "32x4104x2048 32x64-swapab 1 none"; do
  set -- $a; echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape $1 --config $2 --split-k $3 --repack $4 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; done; done
echo "forced t=${SECONDS}s"
for hot in "" "--hot"; do timeout 90 /tmp/b/baton-trace bench trace-gemm --reps 15 $hot --shape 32x4104x2048 --shape 32x4104x2056 --shape 64x4104x2048 --shape 64x4104x2056 --shape 128x4104x2048 --shape 128x4104x2056 > $O/trace$hot.txt 2>&1; echo "trace $hot rc=$? t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
