#!/usr/bin/env bash
# Final call B: BF16 + FP8 sweeps (fair method), attention bench + SDPA anchor — merged main.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/b"; mkdir -p "$O"
SECONDS=0
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 200 $BATON bench attention --reps 10 --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"; tail -14 "$O/attention.txt"
timeout 150 python3 .lead-carry/sdpa.py > "$O/sdpa.txt" 2>&1
echo "sdpa rc=$? t=${SECONDS}s"
timeout 200 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | filt > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-sweep.txt"
timeout $((560 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum" "$O/gemm-fp8-sweep.txt"
cd "$O0" && tar czf b.tar.gz b && rm -rf b
