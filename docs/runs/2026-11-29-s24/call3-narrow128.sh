#!/usr/bin/env bash
# Session 24, call 3 (H200): narrow swap-AB with 128 rows of D per tile
# (SwapAbNarrow128, 486d3bb): the swap-AB GPU tests (ragged shapes past
# M = 64 and 128, split-K, stream-K, vs cuBLAS), then forced plans against
# the current plans, two passes. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in gpu_gemm_swap_ab; do d=$f; OUT="$O/$d" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B $f > "$O/suite-$d.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$d/gpu-suite-summary.txt)"; grep FAIL $O/$d/gpu-suite-summary.txt | head -5; done
F=$O/forced.txt
/tmp/b/baton bench gemm --shape 1024x1024x4096 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do
for a in "1024x1024x4096 128x64 1" "1024x1024x4096 128x64-swapab 1" "512x1024x4096 128x64 2" "512x1024x4096 128x64-swapab 1" "512x1024x4096 128x64-swapab 2" \
  "2048x1024x4096 128x128-pingpong 1" "2048x1024x4096 128x64-swapab 1" "128x8192x1024 128x64 1" "128x8192x1024 128x64-swapab 1" \
  "128x5000x4096 128x64 1" "128x5000x4096 128x64-swapab 1" "128x4096x4096 128x64 2" "128x4096x4096 128x64-swapab 2" \
  "256x4096x4096 128x64 1" "256x4096x4096 128x64-swapab 1" "1024x4096x1024 128x128-pingpong 1" "1024x4096x1024 128x64-swapab 1" \
  "256x1024x4096 128x64 1" "256x1024x4096 128x64-swapab 4" "128x1024x32768 128x64 8" "128x1024x32768 128x64-swapab 8" \
  "128x4104x2056 128x64 1" "128x4104x2056 128x64-swapab 1"; do
  set -- $a; [ $SECONDS -lt 540 ] && { echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape $1 --config $2 --split-k $3 --repack none --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; }; done; done
echo "forced t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
