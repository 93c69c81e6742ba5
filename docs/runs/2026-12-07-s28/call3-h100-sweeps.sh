#!/usr/bin/env bash
# Session 28, call 3 (H100): main 2c353c3 (4e934bb + the forced-only 64-row FP8 kernels; same plans). The BF16 issue-#6 set (`bench
# gemm`, its default shapes) and the BF16 sweep twice (`bench gemm
# --sweep`, quoted by each side's best of two processes:
# tools/sweep-min-ratio.py), ours and cuBLAS in one process; the FP8
# sweep (`bench gemm-fp8 --sweep`, vs cuBLASLt blockwise).
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
D=.lead-carry/s28c; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
timeout 100 /tmp/baton bench gemm-fp8 --sweep --reps 11 --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png > $O/sweep-fp8.txt 2>&1; echo "sweep fp8 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-fp8.txt
timeout 120 /tmp/baton bench gemm --json $O/set6.json > $O/set6.txt 2>&1; echo "set6 rc=$? t=${SECONDS}s"; tail -12 $O/set6.txt
for i in 1 2; do left=$((570-SECONDS)); [ $left -gt 60 ] && { timeout $left /tmp/baton bench gemm --sweep --json $O/sweep-bf16-$i.json --heatmap $O/sweep-bf16-$i.png > $O/sweep-bf16-$i.txt 2>&1; echo "sweep $i rc=$? t=${SECONDS}s"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
