#!/usr/bin/env bash
# Session 16, final call B (bundle of main 2093c26): the BF16 sweep and the FP8 sweep (ours vs cuBLAS /
# cuBLASLt blockwise, one process each). Writes $OUT/g.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/g"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton; head -1 /tmp/fb/.final-bundle/BUILD-INFO
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 150 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | filt > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL|x4104x2056" "$O/gemm-sweep.txt" | cut -c1-150
timeout $((440 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL|x1024x32768" "$O/gemm-fp8-sweep.txt" | cut -c1-150
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf g.tar.gz g && rm -rf g
