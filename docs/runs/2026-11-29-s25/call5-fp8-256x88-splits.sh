#!/usr/bin/env bash
# Session 25, call 5 (H200): 256x88 with the K loop compiled once per
# B-scale split (call 4's run-time selects cost 14 %). FP8 GPU tests and
# compute-sanitizer on the widths test; forced 256x96 vs 256x88 and base
# (cc22dca) / new by DeepGEMM's method, alternating, two passes; the two
# FP8 sweep rows the plan moves, queued. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
T=$O/ab.txt
for pass in 1 2; do
  for s in 4096x2112x7168 8192x8192x8192; do for k in 256x96 256x88; do
    echo "== $pass forced $k $s" >> $T; timeout 40 /tmp/b/baton bench gemm-fp8 --flush-l2 --shape $s --kernel $k 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  for s in 4096x2112x7168 2048x1216x4096 4096x2112x4096; do for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    echo "== $pass $v flush $s" >> $T; timeout 40 $bin bench gemm-fp8 --flush-l2 --shape $s 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  echo "ab pass $pass t=${SECONDS}s"
done
for s in 512x5000x4096 1024x5000x4096; do for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  echo "== 1 $v queued $s" >> $T; timeout 40 $bin bench gemm-fp8 --shape $s 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
echo "queued t=${SECONDS}s"
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=150 timeout 180 bash tools/gpu-suite.sh --sanitize $B fp8_widths > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -4 "$O/san/stdout.txt"
cd $OUT && tar czf r.tar.gz r && rm -rf r
