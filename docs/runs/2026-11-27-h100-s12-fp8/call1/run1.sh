#!/usr/bin/env bash
# Lane FP8, session 12, call 1 (diagnosis): DeepGEMM vs baton at 4096x7168x16384 (and 8192^3),
# flushed timings + ncu (--clock-control none) of both kernels in the same call.
set -u
L=.lane-fp8
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
left() { echo $(( 285 - $(el) )); }
mkdir -p /tmp/m && tar xJf $L/main.tar.xz -C /tmp/m
B=/tmp/m/main/baton
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section SourceCounters"
stamp deepgemm-timing
(cd $L/deepgemm && PYTHONUNBUFFERED=1 timeout 130 python3 run.py --shapes 4096x7168x16384,8192x8192x8192 --no-torch --jit-cache /tmp/dgjit --json $R/dg.json > $R/dg.txt 2>&1; echo "rc=$?" >> $R/dg.txt)
find /tmp/dgjit -name "*.cubin" > $R/dg-cubins.txt 2>&1
i=0; for c in $(cat $R/dg-cubins.txt); do i=$((i+1)); cuobjdump -sass $c > $R/dg-sass-$i.txt 2>&1; cuobjdump -res-usage $c > $R/dg-res-$i.txt 2>&1; dirname $c >> $R/dg-cubin-dirs.txt; ls $(dirname $c) >> $R/dg-cubin-dirs.txt; done
stamp ncu-dg-4096
(cd $L/deepgemm && timeout 80 ncu --clock-control none -k regex:fp8_gemm --launch-skip 4 -c 1 $SEC -o $R/dg-4096x7168x16384 python3 run.py --shapes 4096x7168x16384 --no-torch --jit-cache /tmp/dgjit --reps 2 --warmup 4 > $R/ncu-dg-4096.log 2>&1; echo "rc=$?" >> $R/ncu-dg-4096.log)
ncu -i $R/dg-4096x7168x16384.ncu-rep --page details > $R/ncu-dg-4096.txt 2>&1
stamp ncu-baton-4096
K=baton_gemm_fp8_blockwise_
timeout 60 ncu --clock-control none -k regex:'blockwise_256x128$' --launch-skip 12 -c 1 $SEC -o $R/bt-4096x7168x16384 $B bench gemm-fp8 --kernel ${K}256x128 --shape 4096x7168x16384 --reps 5 > $R/ncu-bt-4096.log 2>&1; echo "rc=$?" >> $R/ncu-bt-4096.log
ncu -i $R/bt-4096x7168x16384.ncu-rep --page details > $R/ncu-bt-4096.txt 2>&1
stamp baton-flushed
timeout 45 $B bench gemm-fp8 --flush-l2 --shape 4096x7168x16384 --shape 8192x8192x8192 --json $R/bt-plan.json > $R/bt-plan.txt 2>&1; echo "rc=$?" >> $R/bt-plan.txt
stamp baton-flushed-mca
timeout 45 $B bench gemm-fp8 --flush-l2 --kernel ${K}256x128_mca --shape 4096x7168x16384 --shape 8192x8192x8192 --json $R/bt-mca.json > $R/bt-mca.txt 2>&1; echo "rc=$?" >> $R/bt-mca.txt
stamp ncu-mca
if [ $(left) -gt 40 ]; then
timeout 40 ncu --clock-control none -k regex:'blockwise_256x128_mca$' --launch-skip 12 -c 1 $SEC -o $R/bt-mca-4096x7168x16384 $B bench gemm-fp8 --kernel ${K}256x128_mca --shape 4096x7168x16384 --reps 5 > $R/ncu-mca-4096.log 2>&1; echo "rc=$?" >> $R/ncu-mca-4096.log
ncu -i $R/bt-mca-4096x7168x16384.ncu-rep --page details > $R/ncu-mca-4096.txt 2>&1
fi
stamp source-pages
ncu -i $R/dg-4096x7168x16384.ncu-rep --page source --csv --print-source sass > $R/src-dg.csv 2>&1 || true
ncu -i $R/bt-4096x7168x16384.ncu-rep --page source --csv --print-source sass > $R/src-bt.csv 2>&1 || true
ncu --query-metrics 2>/dev/null | grep -i "gmma\|tensor_op" > $R/metrics-gmma.txt
stamp done
cp $R/timeline.txt $OUT/ 2>/dev/null
save
