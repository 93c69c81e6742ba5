#!/usr/bin/env bash
# Session 25, call 4 (H200): the FP8 256x88 kernel (DeepGEMM's width at
# 4096x2112). The FP8 GPU tests (every variant at ragged shapes; the widths
# test now with 256x88 at all 16 offsets of a B-scale block and clipped last
# tiles) and compute-sanitizer on the widths test; base (cc22dca) / new by
# DeepGEMM's method (--flush-l2) and queued, alternating; forced 256x96 vs
# 256x88; DeepGEMM itself (anchor run.py) on the same rows. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=150 timeout 180 bash tools/gpu-suite.sh --sanitize $B fp8_widths > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -6 "$O/san/stdout.txt"
T=$O/ab.txt
for pass in 1 2; do
  for s in 4096x2112x7168 2048x1216x4096 4096x2112x4096; do for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    echo "== $pass $v flush $s" >> $T; timeout 40 $bin bench gemm-fp8 --flush-l2 --shape $s 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  for s in 512x5000x4096 1024x5000x4096; do for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    echo "== $pass $v queued $s" >> $T; timeout 40 $bin bench gemm-fp8 --shape $s 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  for s in 4096x2112x7168 8192x8192x8192; do for k in 256x96 256x88; do
    echo "== $pass forced $k $s" >> $T; timeout 40 /tmp/b/baton bench gemm-fp8 --flush-l2 --shape $s --kernel $k 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  echo "ab pass $pass t=${SECONDS}s"
done
cd $D/deepgemm && PYTHONUNBUFFERED=1 timeout 200 python3 run.py --shapes 4096x2112x7168,2048x1216x4096,4096x2112x4096 --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1; echo "deepgemm rc=$? t=${SECONDS}s"; tail -8 $O/deepgemm.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
