#!/usr/bin/env bash
# Session 29, call 3 (H100; the last ~320 s of device time): main with the
# B-scale look-ahead (FP8) and the ping-pong L2 rule (BF16). The BF16 sweep
# (ours and cuBLAS in one process); issue #19's 12 rows at M = 64/128 by
# DeepGEMM's method (the plan) and DeepGEMM on the same rows, same call.
set -uo pipefail
D=.lead-carry/s29c; O=$OUT/r; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
timeout 75 /tmp/baton bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 40 python3 run.py --shapes $SMALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"
left=$((215-SECONDS)); [ $left -gt 30 ] && { timeout $left /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/plan.json > $O/plan.txt 2>&1; echo "plan rc=$? t=${SECONDS}s"; grep -E '^\| [0-9]|geometric|FAIL' $O/plan.txt; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
