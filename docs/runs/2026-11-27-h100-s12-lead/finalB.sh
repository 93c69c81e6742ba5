#!/usr/bin/env bash
# Session 12 final call B (merged main: s12-fp8, s12-bf16, s12-attn): FP8 by the DeepGEMM anchor's method
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
# The sweeps (issue #18; each library its own cold inputs)
timeout 260 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | filt > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-sweep.txt"
timeout $((590 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-fp8-sweep.txt"
cd "$O0" && tar czf b.tar.gz b && rm -rf b
