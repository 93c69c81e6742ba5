#!/usr/bin/env bash
# Session 23, call 8 (H200): the first stages' operand boxes prefetched
# into L2 before the setup barrier (BF16 cooperative and swap-AB kernels).
# The GPU tests of those kernels; then base (HEAD's CLI) / new alternating
# per shape, two passes. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-pf; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in "gpu_gemm::" gpu_gemm_swap_ab gpu_gemm_split_k gpu_gemm_views gpu_gemm_layouts; do d=$(echo $f | tr -d ':'); OUT="$O/$d" SUITE_TEST_TIMEOUT=120 timeout 150 bash tools/gpu-suite.sh $B $f > "$O/suite-$d.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$d/gpu-suite-summary.txt)"; grep FAIL $O/$d/gpu-suite-summary.txt | head -5; done
P=$O/ab.txt
/tmp/b/baton bench gemm --shape 1024x1024x4096 --reps 31 --chart /tmp/c.png > /dev/null 2>&1
for pass in 1 2; do for s in 1x4096x4096 8x1024x4096 32x4104x2048 64x4096x4096 64x5000x4096 128x4104x2048 128x8192x1024 512x1024x4096 1024x1024x4096 256x1024x32768 2048x2048x2048 4096x4096x4096; do
  for v in base new; do bin=/tmp/b/baton; [ $v = new ] && bin=/tmp/b/baton-pf
    [ $SECONDS -lt 540 ] && { echo "== $pass $v $s" >> $P; $bin bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $P; }; done; done; done
echo "ab t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
