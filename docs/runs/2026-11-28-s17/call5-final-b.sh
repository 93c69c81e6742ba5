#!/usr/bin/env bash
# Session 17, final call B (same bundle as call 4): the BF16 sweep (ours vs cuBLAS, one process), then the
# FP8 sweep if time is left. Writes $OUT/g.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/g"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
timeout 300 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | tr '\r' '\n' | grep -v '^\[' > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL" "$O/gemm-sweep.txt" | cut -c1-150
timeout $((570 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | tr '\r' '\n' | grep -v '^\[' > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL" "$O/gemm-fp8-sweep.txt" | cut -c1-150
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf g.tar.gz g && rm -rf g
