#!/usr/bin/env bash
# Session 23, call 2 (H200): (1) the new 128x64c2 configuration's GPU tests
# (ragged vs f64, split-K, stream-K); (2) forced 128x64 vs 128x64c2 rows;
# (3) K = 2056 vs 2048 and N = 4104 vs 4096 at M = 64/128 (which of the
# two misalignments costs); (4) the BF16 sweep twice with one binary (the
# per-process modes of the ~10 us rows). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in "gpu_gemm::" split_k; do OUT="$O/$f" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B $f > "$O/suite-$f.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$f/gpu-suite-summary.txt)"; grep FAIL $O/$f/gpu-suite-summary.txt | head; done
F=$O/forced.txt
/tmp/baton bench gemm --shape 1024x1024x4096 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do
for s in 1024x1024x4096 512x1024x4096 2048x1024x4096 1024x2048x4096 512x2048x2048; do
  for c in 128x64 128x64c2; do echo "== $pass $s $c" >> $F; /tmp/baton bench gemm --shape $s --config $c --split-k 1 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $F; done
done
for s in 256x1024x32768 512x1024x32768; do for c in 128x64:4 128x64c2:4 128x64c2:8 128x128c2:8; do
  echo "== $pass $s $c" >> $F; /tmp/baton bench gemm --shape $s --config ${c%:*} --split-k ${c#*:} --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $F; done; done
done
echo "forced t=${SECONDS}s"
A=$O/align.txt
for pass in 1 2; do for s in 64x4096x2048 64x4104x2048 64x4096x2056 64x4104x2056 128x4096x2048 128x4104x2048 128x4096x2056 128x4104x2056; do
  echo "== $pass $s" >> $A; /tmp/baton bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $A; done; done
echo "align t=${SECONDS}s"
/tmp/baton bench gemm --sweep --json $O/sweep-1.json --heatmap $O/sweep-1.png > $O/sweep-1.txt 2>&1; echo "sweep1 rc=$? t=${SECONDS}s"
/tmp/baton bench gemm --sweep --json $O/sweep-2.json --heatmap $O/sweep-2.png > $O/sweep-2.txt 2>&1; echo "sweep2 rc=$? t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
