#!/usr/bin/env bash
# Lane FP8, session 12, call 2: base (main e095fa0) vs new (s12-fp8 0310508: warp_uniform wg in the
# 256-row kernels), interleaved, by the anchor's method, DeepGEMM + torch in the same call; tests, sanitizers.
set -u
L=.lane-fp8
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
left() { echo $(( 288 - $(el) )); }
mkdir -p /tmp/k && tar xJf $L/base.tar.xz -C /tmp/k && tar xJf $L/new.tar.xz -C /tmp/k
BASE=/tmp/k/base/baton; NEW=/tmp/k/new/baton; T=/tmp/k/new/gpu_gemm_fp8
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
S8=""; for s in 4096x7168x16384 8192x8192x8192 4096x4096x7168 4096x4096x4096 4096x24576x1536 4096x7168x2048 4096x32768x512 4096x2112x7168 2048x16384x4096 512x5000x4096; do S8="$S8 --shape $s"; done
S2="--shape 4096x7168x16384 --shape 8192x8192x8192"
stamp tests
timeout 40 $T --test-threads 1 --nocapture fp8_gemm_matches_f64_reference_on_ragged_shapes fp8_widths_not_powers fp8_a_multicast fp8_gemm_matches_cublaslt > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
stamp base-1
timeout 75 $BASE bench gemm-fp8 --flush-l2 $S8 --json $R/base1.json > $R/base1.txt 2>&1; echo "rc=$?" >> $R/base1.txt
stamp new-1
timeout 75 $NEW bench gemm-fp8 --flush-l2 $S8 --json $R/new1.json > $R/new1.txt 2>&1; echo "rc=$?" >> $R/new1.txt
stamp deepgemm
(cd $L/deepgemm && PYTHONUNBUFFERED=1 timeout 45 python3 run.py --jit-cache /tmp/dgjit --json $R/dg.json > $R/dg.txt 2>&1; echo "rc=$?" >> $R/dg.txt)
stamp sanitizers
BATON_SMALL=1 timeout 15 compute-sanitizer --tool memcheck $T --test-threads 1 fp8_a_multicast > $R/san-memcheck-mca.txt 2>&1; echo "rc=$?" >> $R/san-memcheck-mca.txt
BATON_SMALL=1 timeout 15 compute-sanitizer --tool racecheck $T --test-threads 1 fp8_a_multicast > $R/san-racecheck-mca.txt 2>&1; echo "rc=$?" >> $R/san-racecheck-mca.txt
stamp new-2
if [ $(left) -gt 30 ]; then timeout $(( $(left) / 2 )) $NEW bench gemm-fp8 --flush-l2 $S2 --json $R/new2.json > $R/new2.txt 2>&1; echo "rc=$?" >> $R/new2.txt; fi
stamp base-2
if [ $(left) -gt 25 ]; then timeout $(left) $BASE bench gemm-fp8 --flush-l2 $S2 --json $R/base2.json > $R/base2.txt 2>&1; echo "rc=$?" >> $R/base2.txt; fi
stamp memcheck-widths
if [ $(left) -gt 10 ]; then timeout $(left) compute-sanitizer --tool memcheck $T --test-threads 1 fp8_widths_not_powers > $R/san-memcheck-widths.txt 2>&1; echo "rc=$?" >> $R/san-memcheck-widths.txt; fi
stamp done
cp $R/timeline.txt $OUT/ 2>/dev/null
save
