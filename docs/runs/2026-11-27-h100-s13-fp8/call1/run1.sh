#!/usr/bin/env bash
# Lane FP8, session 13, call 1: base (main e2e92f5's CLI) vs new (s13-fp8: the _db kernels' stage
# descriptors pinned per stage of the ring), interleaved, by the DeepGEMM anchor's method
# (--flush-l2), DeepGEMM + torch blockwise in the same call; tests and sanitizers first.
set -u
L=.lane-fp8
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
left() { echo $(( 258 - $(el) )); }
mkdir -p /tmp/k && tar xJf $L/new.tar.xz -C /tmp/k && xz -dc $L/base-baton.xz > /tmp/k/base-baton && chmod +x /tmp/k/base-baton
BASE=/tmp/k/base-baton; NEW=/tmp/k/new/baton; T=/tmp/k/new/gpu_gemm_fp8
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
# The 13 shapes whose plan runs a changed kernel (_db), and the 7 whose kernels are unchanged.
SC=""; for s in 64x2112x7168 64x24576x1536 64x32768x512 64x7168x16384 64x4096x7168 64x7168x2048 128x2112x7168 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048 4096x2112x7168; do SC="$SC --shape $s"; done
SU=""; for s in 4096x4096x4096 8192x8192x8192 4096x24576x1536 4096x32768x512 4096x7168x16384 4096x4096x7168 4096x7168x2048; do SU="$SU --shape $s"; done
stamp tests
timeout 60 $T --test-threads 1 --skip fp8_gemm_timing > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
tail -3 $R/test.txt
stamp sanitizers
BATON_SMALL=1 timeout 25 compute-sanitizer --tool memcheck $T --test-threads 1 fp8_narrow_tiles_deep_ring fp8_half_empty_tiles > $R/san-memcheck.txt 2>&1; echo "rc=$?" >> $R/san-memcheck.txt
BATON_SMALL=1 timeout 25 compute-sanitizer --tool racecheck $T --test-threads 1 fp8_narrow_tiles_deep_ring > $R/san-racecheck.txt 2>&1; echo "rc=$?" >> $R/san-racecheck.txt
tail -2 $R/san-memcheck.txt $R/san-racecheck.txt
stamp base-1
timeout 60 $BASE bench gemm-fp8 --flush-l2 $SC --json $R/base1.json > $R/base1.txt 2>&1; echo "rc=$?" >> $R/base1.txt
stamp new-1
timeout 60 $NEW bench gemm-fp8 --flush-l2 $SC --json $R/new1.json > $R/new1.txt 2>&1; echo "rc=$?" >> $R/new1.txt
stamp deepgemm
(cd $L/deepgemm && PYTHONUNBUFFERED=1 timeout 45 python3 run.py --jit-cache /tmp/dgjit --json $R/dg.json > $R/dg.txt 2>&1; echo "rc=$?" >> $R/dg.txt)
stamp new-2
if [ $(left) -gt 50 ]; then timeout 60 $NEW bench gemm-fp8 --flush-l2 $SC --json $R/new2.json > $R/new2.txt 2>&1; echo "rc=$?" >> $R/new2.txt; fi
stamp base-2
if [ $(left) -gt 40 ]; then timeout $(( $(left) < 60 ? $(left) : 60 )) $BASE bench gemm-fp8 --flush-l2 $SC --json $R/base2.json > $R/base2.txt 2>&1; echo "rc=$?" >> $R/base2.txt; fi
stamp forced-4096x2112
if [ $(left) -gt 25 ]; then
  for kk in baton_gemm_fp8_blockwise_256x96 baton_gemm_fp8_blockwise_256x128; do
    timeout 20 $NEW bench gemm-fp8 --flush-l2 --shape 4096x2112x7168 --kernel $kk --json $R/forced-$kk.json > $R/forced-$kk.txt 2>&1; echo "rc=$?" >> $R/forced-$kk.txt
  done
fi
stamp new-unchanged
if [ $(left) -gt 30 ]; then timeout $(left) $NEW bench gemm-fp8 --flush-l2 $SU --json $R/new-unch.json > $R/new-unch.txt 2>&1; echo "rc=$?" >> $R/new-unch.txt; fi
stamp done
save
