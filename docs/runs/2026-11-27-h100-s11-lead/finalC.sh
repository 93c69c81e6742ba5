#!/usr/bin/env bash
# Session 11 final call C (merged main): the BF16 and FP8 sweeps (issue #18; the fair method: each
# library its own cold inputs), ours vs cuBLAS / cuBLASLt blockwise in one process each.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/c"; mkdir -p "$O"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton; head -1 /tmp/fb/.final-bundle/BUILD-INFO
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 260 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | filt > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-sweep.txt"
timeout $((560 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-fp8-sweep.txt"
cd "$O0" && tar czf c.tar.gz c && rm -rf c
