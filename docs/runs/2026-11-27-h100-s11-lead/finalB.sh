#!/usr/bin/env bash
# Session 11 final call B (merged main): FP8 by the DeepGEMM anchor's method
# (baton plan + cuBLASLt, --flush-l2) and DeepGEMM + torch blockwise in the anchor's runner, same call.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/b"; mkdir -p "$O"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton
filt() { tr '\r' '\n' | grep -v '^\[' ; }
(cd $C/deepgemm && PYTHONUNBUFFERED=1 timeout 300 python3 run.py --json "$O/deepgemm.json" > "$O/deepgemm.txt" 2>&1; echo "deepgemm rc=$?" >> "$O/deepgemm.txt")
head -1 /tmp/fb/.final-bundle/BUILD-INFO; echo "deepgemm t=${SECONDS}s"; tail -30 "$O/deepgemm.txt"
timeout 200 $BATON bench gemm-fp8 --flush-l2 --json "$O/fp8-flushed.json" 2>&1 | filt > "$O/fp8-flushed.txt"
echo "fp8 flushed rc=$? t=${SECONDS}s"; grep -E "^\||geometric|FAIL" "$O/fp8-flushed.txt" | tail -26
cd "$O0" && tar czf b.tar.gz b && rm -rf b
