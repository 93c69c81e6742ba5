#!/usr/bin/env bash
# Session 24, call 6 (H200): main ea5db4d (distributed split-K fixup from 8
# splits). The split-K (now with 8 splits), gpu_gemm:: and swap-AB GPU
# tests; base (6fe81ea) / new on the split rows, alternating twice; the
# BF16 sweep twice with the new CLI. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in gpu_gemm_split_k "gpu_gemm::" gpu_gemm_swap_ab; do d=$(echo $f | tr -d ':'); OUT="$O/$d" SUITE_TEST_TIMEOUT=120 timeout 170 bash tools/gpu-suite.sh $B $f > "$O/suite-$d.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$d/gpu-suite-summary.txt)"; grep FAIL $O/$d/gpu-suite-summary.txt | head -5; done
T=$O/ab.txt
for pass in 1 2; do for s in 256x1024x4096 128x1024x4096 512x1024x32768 256x1024x32768 128x1024x32768; do
  for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    echo "== $pass $v $s" >> $T; timeout 30 $bin bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $T; done; done; done
echo "ab t=${SECONDS}s"
for i in 1 2; do [ $SECONDS -lt 420 ] && { timeout 75 /tmp/b/baton bench gemm --sweep --json $O/sweep-new-$i.json --heatmap $O/sweep-new-$i.png > $O/sweep-new-$i.txt 2>&1; echo "sweep $i rc=$? t=${SECONDS}s"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
