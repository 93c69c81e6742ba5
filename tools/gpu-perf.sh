#!/usr/bin/env bash
# The performance experiments pending a GPU, in one device call (run through
# the device tool with carry [".device-bundle"]):
#
#   bash tools/gpu-perf.sh .device-bundle
#
# 1. correctness of the new paths first (GPU tests: stream-K BF16 and FP8,
#    the 2-CTA FP8 kernel), each test in its own process;
# 2. BF16: the shapes with stream-K off, the default (last wave
#    only, from 8 waves up), and with one extra wave split;
# 3. FP8: 128x128_db vs 128x128_db_c2, each with and without stream-K.
# Full logs go to $OUT (or /tmp); the last lines are a short summary.
set -uo pipefail
B="${1:?usage: tools/gpu-perf.sh <bundle-dir>}"
O="${OUT:-/tmp}"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
cat "$B/BUILD-INFO" | head -1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

echo "== correctness"
SUITE_TEST_TIMEOUT=300 bash tools/gpu-suite.sh "$B" gpu_gemm > "$O/perf-correctness.log" 2>&1
grep -E "^ *(PASS|FAIL|SKIP) " "$O/perf-correctness.log" | grep -E "stream_k|fp8|ragged|cublas" | head -20
if ! grep -qE "FAIL 0, " "$O/perf-correctness.log"; then
    echo "correctness FAILED: not timing (see $O/perf-correctness.log)"
    exit 1
fi

echo "== bf16"
for sk in "--stream-k 0" "" "--stream-k 4 --sk-waves 1"; do
    # shellcheck disable=SC2086
    "$B/bin/baton" bench gemm --reps 20 $sk --chart "$O/bf16${sk// /}.png" 2>&1 | filt > "$O/bf16${sk// /}.txt"
    echo "-- bf16 ${sk:-default (stream-K on the last wave from 8 waves up)}"
    grep -E "^[0-9]+x|geometric|residual" "$O/bf16${sk// /}.txt"
done

echo "== fp8"
for kern in 128x128_db 128x128_db_c2; do
    for sk in "" "--stream-k 4"; do
        # shellcheck disable=SC2086
        "$B/bin/baton" bench gemm-fp8 --reps 10 --kernel $kern $sk 2>&1 | filt > "$O/fp8-$kern${sk// /}.txt"
        echo "-- fp8 $kern ${sk:-no stream-K}"
        grep -E "^\| [0-9]|geometric" "$O/fp8-$kern${sk// /}.txt"
    done
done
"$B/bin/baton" bench gemm-fp8 --reps 10 2>&1 | filt > "$O/fp8-default.txt"
echo "-- fp8 heuristic"
grep -E "geometric" "$O/fp8-default.txt"
