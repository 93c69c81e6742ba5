#!/usr/bin/env bash
# Second LAYOUT call: re-measure the shapes whose before/after spread was
# largest in the first call, alternating A B B A B A.
set -u
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
O="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
i=0
for side in before after after before before after; do
    i=$((i+1)); start=$(date +%s)
    timeout 40 "$B/bin/baton-$side" bench gemm --reps 10 --shape 16384x16384x16384 --shape 4096x4096x4096 --shape 2048x7168x2048 2>&1 | filt > "$O/re-$i-$side.txt"
    echo "-- $i $side ($(( $(date +%s) - start )) s)"; grep -E '^[0-9]+x' "$O/re-$i-$side.txt"
done
