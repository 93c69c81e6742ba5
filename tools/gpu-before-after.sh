#!/usr/bin/env bash
# Same-call before/after GEMM benchmark (issue #16: a refactor must cost
# nothing). Runs the BF16 (issue #6) and FP8 (issue #7) shape sets with two
# `baton` binaries interleaved A B B A, so drift (clocks, power, temperature)
# hits both sides alike, then prints each run's geometric means.
#
#   bash tools/gpu-before-after.sh <before/baton> <after/baton> [reps]
#
# Each `bench` verifies its output before timing and times ours and
# cuBLAS/cuBLASLt in one process; the logs go to $OUT (or /tmp).
set -uo pipefail
A="${1:?usage: tools/gpu-before-after.sh <before-baton> <after-baton> [reps]}"
B="${2:?usage: tools/gpu-before-after.sh <before-baton> <after-baton> [reps]}"
REPS="${3:-21}"
O="${OUT:-/tmp}"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
run() { # side binary kind round
    local log="$O/ba-$3-$1-$4.txt"
    "$2" bench "$3" --reps "$REPS" 2>&1 | filt > "$log"
    printf '%-7s %-9s round %s: %s\n' "$1" "$3" "$4" "$(grep -iE 'geometric|residual' "$log" | head -3 | tr '\n' ' ')"
}
for kind in gemm gemm-fp8; do
    run before "$A" "$kind" 1
    run after "$B" "$kind" 1
    run after "$B" "$kind" 2
    run before "$A" "$kind" 2
done
echo "== per-shape lines (before round 1 / after round 1):"
for kind in gemm gemm-fp8; do
    for side in before after; do
        echo "-- $kind $side"
        grep -E '^(\| )?[0-9]+(x|×)[0-9]+' "$O/ba-$kind-$side-1.txt" | head -12
    done
done
