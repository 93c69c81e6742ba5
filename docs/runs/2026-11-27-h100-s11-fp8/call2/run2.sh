#!/usr/bin/env bash
# Lane FP8, session 11, call 2: new tests, new flushed (20 shapes), base flushed (the 11 shapes call 1 did not reach, then 1-9 if time is left), sanitizers.
set -u
L=.lane-fp8
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
mkdir -p /tmp/n && tar xJf $L/new.tar.xz -C /tmp/n && tar xJf $L/base-bundle.tar.xz -C /tmp
NEW=/tmp/n/new; BASE=/tmp/.base-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/gpu.txt 2>&1
stamp tests
timeout 45 $NEW/gpu_gemm_fp8 --test-threads 1 --nocapture fp8_half_empty fp8_a_multicast fp8_stream_k_matches > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
stamp new-flushed
timeout 130 $NEW/baton bench gemm-fp8 --flush-l2 --json $R/new.json > $R/new.txt 2>&1; echo "rc=$?" >> $R/new.txt
stamp base-flushed-10-20
S=""; for s in 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048 4096x2112x7168 4096x24576x1536 4096x32768x512 4096x7168x16384 4096x4096x7168 4096x7168x2048; do S="$S --shape $s"; done
timeout 80 $BASE/bin/baton bench gemm-fp8 --flush-l2 $S --json $R/base2.json > $R/base2.txt 2>&1; echo "rc=$?" >> $R/base2.txt
stamp sanitizers
BATON_SMALL=1 timeout 12 compute-sanitizer --tool memcheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_half_empty > $R/san-memcheck.txt 2>&1; echo "rc=$?" >> $R/san-memcheck.txt
BATON_SMALL=1 timeout 12 compute-sanitizer --tool racecheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_half_empty > $R/san-racecheck.txt 2>&1; echo "rc=$?" >> $R/san-racecheck.txt
stamp rest
LEFT=$(( 236 - $(el) ))
if [ $LEFT -gt 25 ]; then
  S=""; for s in 4096x4096x4096 8192x8192x8192 64x2112x7168 64x24576x1536 64x32768x512 64x7168x16384 64x4096x7168 64x7168x2048 128x2112x7168; do S="$S --shape $s"; done
  timeout $LEFT $BASE/bin/baton bench gemm-fp8 --flush-l2 $S --json $R/base1.json > $R/base1.txt 2>&1; echo "rc=$?" >> $R/base1.txt
fi
stamp done
cp $R/timeline.txt $OUT/ 2>/dev/null
