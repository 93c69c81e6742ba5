#!/usr/bin/env bash
# Session 13 final call B (merged main): issue #19's 20 shapes by DeepGEMM's method (DeepGEMM + torch blockwise
# in the anchor's runner, then baton bench gemm-fp8 --flush-l2), and the FP8 sweep (each library its own cold inputs).
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/b"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton
filt() { tr '\r' '\n' | grep -v '^\[' ; }
(cd $C/deepgemm && PYTHONUNBUFFERED=1 timeout 200 python3 run.py --json "$O/deepgemm.json" > "$O/deepgemm.txt" 2>&1; echo "deepgemm rc=$?" >> "$O/deepgemm.txt")
echo "deepgemm t=${SECONDS}s"; grep -E "deepgemm|torch" "$O/deepgemm.txt" | tail -42 | cut -c1-120
timeout 200 $BATON bench gemm-fp8 --flush-l2 --json "$O/fp8-flushed.json" 2>&1 | filt > "$O/fp8-flushed.txt"
echo "fp8 flushed rc=$? t=${SECONDS}s"; grep -E "^\||geometric|FAIL" "$O/fp8-flushed.txt" | tail -26
timeout $((570 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL" "$O/gemm-fp8-sweep.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf b.tar.gz b && rm -rf b
