#!/usr/bin/env bash
# Session 25, call 3 (H200): the narrow 128-row swap-AB tile for every
# 128×64 plan of one tile row split < 8 ways. The re-pack f64 test (now with
# the narrow 128 tile) and the swap-AB tests on the new bundle; base (main
# cc22dca) / new alternating on the rows the rule moves, two passes; then the
# BF16 sweep twice with the new CLI. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in repacked_operands gpu_gemm_swap_ab; do OUT="$O/$f" SUITE_TEST_TIMEOUT=120 timeout 170 bash tools/gpu-suite.sh $B $f > "$O/suite-$f.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$f/gpu-suite-summary.txt)"; grep FAIL $O/$f/gpu-suite-summary.txt | head -5; done
T=$O/ab.txt
for pass in 1 2; do for s in 128x5000x4096 128x4104x2056 128x8192x1024 128x4096x4096 128x8192x8192 256x4096x4096 1024x1024x4096; do
  for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    echo "== $pass $v $s" >> $T; timeout 30 $bin bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $T; done; done; done
echo "ab t=${SECONDS}s"
for i in 1 2; do [ $SECONDS -lt 420 ] && { timeout 80 /tmp/b/baton bench gemm --sweep --json $O/sweep-new-$i.json --heatmap $O/sweep-new-$i.png > $O/sweep-new-$i.txt 2>&1; echo "sweep $i rc=$? t=${SECONDS}s"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
