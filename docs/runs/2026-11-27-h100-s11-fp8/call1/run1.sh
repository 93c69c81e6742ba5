#!/usr/bin/env bash
# Lane FP8, session 11, call 1: correctness (f64, cuBLASLt), base vs new flushed, sanitizers, forced small-M splits, ncu of 256x128.
set -u
L=.lane-fp8
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timeline.txt; save; }
mkdir -p /tmp/n && tar xJf $L/new.tar.xz -C /tmp/n && tar xJf $L/base-bundle.tar.xz -C /tmp
NEW=/tmp/n/new; BASE=/tmp/.base-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/gpu.txt 2>&1
stamp tests
timeout 90 $NEW/gpu_gemm_fp8 --test-threads 1 --nocapture > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
stamp base-flushed
timeout 60 $BASE/bin/baton bench gemm-fp8 --flush-l2 --json $R/base.json > $R/base.txt 2>&1; echo "rc=$?" >> $R/base.txt
stamp new-flushed
timeout 60 $NEW/baton bench gemm-fp8 --flush-l2 --json $R/new.json > $R/new.txt 2>&1; echo "rc=$?" >> $R/new.txt
stamp sanitizers
BATON_SMALL=1 timeout 35 compute-sanitizer --tool memcheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_half_empty > $R/san-memcheck.txt 2>&1; echo "rc=$?" >> $R/san-memcheck.txt
BATON_SMALL=1 timeout 35 compute-sanitizer --tool racecheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_half_empty > $R/san-racecheck.txt 2>&1; echo "rc=$?" >> $R/san-racecheck.txt
stamp forced
K=baton_gemm_fp8_blockwise_
for ks in 128x32_db:1 128x32_db:2 128x64_db:2 128x64_db:4; do
  k=${ks%%:*}; s=${ks##*:}
  timeout 20 $NEW/baton bench gemm-fp8 --flush-l2 --kernel $K$k --fp8-split-k $s --shape 64x2112x7168 --shape 64x4096x7168 --shape 128x2112x7168 --shape 128x4096x7168 > $R/forced-$k-s$s.txt 2>&1
  stamp "forced $k $s"
done
timeout 30 ncu --clock-control none -k regex:'blockwise_256x128$' --launch-skip 12 -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section MemoryWorkloadAnalysis $NEW/baton bench gemm-fp8 --kernel ${K}256x128 --shape 4096x7168x16384 --reps 20 > $R/ncu-256x128.txt 2>&1
stamp done
cp $R/timeline.txt $OUT/ 2>/dev/null
