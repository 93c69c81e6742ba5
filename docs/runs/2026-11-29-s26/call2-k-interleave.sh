#!/usr/bin/env bash
# Session 26, call 2 (H200): K-interleaved 64-row tiles (both consumer
# warpgroups on the first 64 rows of a 128-row tile whose last 64 lie past
# M, each over every other K block). Base (9c91c39) / new alternating by
# DeepGEMM's method at issue #19's M = 64 rows (plans unchanged) and two
# M = 128 controls; FP8 GPU tests; compute-sanitizer on the interleaved
# test; 256x128_mca vs 256x128 forced at long K (the multicast K rule was
# measured queued in session 10). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s26; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton-mca.xz > /tmp/b/base && xz -dc $D/baton-il.xz > /tmp/b/new && chmod +x /tmp/b/*
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
T=$O/ab.txt
run() { echo "== $1 $2 $3" >> $T; timeout 40 /tmp/b/$2 bench gemm-fp8 --flush-l2 --shape $3 2>&1 | grep -E "^\| [0-9]|rror" >> $T; }
M64="64x32768x512 64x4096x7168 64x7168x16384 64x2112x7168 64x7168x2048 64x24576x1536"
for s in $M64 128x4096x7168 128x32768x512; do for v in base new; do run 1 $v $s; done; done
echo "ab pass 1 t=${SECONDS}s"
OUT="$O/fp8" SUITE_TEST_TIMEOUT=200 timeout 260 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
for s in $M64; do for v in new base; do run 2 $v $s; done; done
echo "ab pass 2 t=${SECONDS}s"
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=60 timeout 100 bash tools/gpu-suite.sh --sanitize $B half_empty > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -4 "$O/san/stdout.txt"
for s in 4096x7168x16384 8192x8192x8192 4096x4096x7168; do for k in 256x128 256x128_mca; do
  echo "== forced $k $s" >> $T; timeout 40 /tmp/b/new bench gemm-fp8 --flush-l2 --shape $s --kernel $k 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
echo "mca t=${SECONDS}s"
# Kernel-only durations (ncu, caches flushed per pass by default), after the
# 4 verification launches of the forced kernel.
for spec in 64x4096x7168:128x32_db 64x32768x512:128x128_db 64x7168x2048:128x64_db; do s=${spec%%:*}; k=${spec##*:}
  for v in base new; do echo "== ncu $v $s $k" >> $O/ncu.txt
    timeout 60 ncu --clock-control none -k "regex:^baton_gemm_fp8_blockwise_${k}\$" --launch-skip 6 --launch-count 3 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
      /tmp/b/$v bench gemm-fp8 --shape $s --kernel $k 2>&1 | grep -E "\)x\(|duration|throughput|gmma" >> $O/ncu.txt; done; done
echo "ncu t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
