#!/usr/bin/env bash
# Session 28, call 1 (H100, the first H100 since session 17): main 2c353c3 (4e934bb + the forced-only 64-row FP8 kernels; same plans).
# Issue #19's 20 shapes by DeepGEMM's method (ours and cuBLASLt:
# `bench gemm-fp8 --flush-l2`; DeepGEMM: anchor run.py --no-torch), same
# call; then the FP8 sweep (`bench gemm-fp8 --sweep`, vs cuBLASLt blockwise).
set -uo pipefail
D=.lead-carry/s28c; O=$OUT/r; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit --format=csv > $O/gpu.txt; cat $O/gpu.txt
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
/tmp/baton info > $O/info.txt 2>&1; head -20 $O/info.txt
timeout 110 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours large rc=$? t=${SECONDS}s"
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 170 python3 run.py --shapes $SMALL,$LARGE --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"
timeout 110 /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/ours-small.json > $O/ours-small.txt 2>&1; echo "ours small rc=$? t=${SECONDS}s"
left=$((560-SECONDS)); [ $left -gt 60 ] && { timeout $left /tmp/baton bench gemm-fp8 --sweep --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png > $O/sweep-fp8.txt 2>&1; echo "sweep fp8 rc=$? t=${SECONDS}s"; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
