#!/usr/bin/env bash
# SMALLM lane, session 9, call 1: swap-AB correctness (f64, cuBLAS, refusal),
# the small-M timing grid (ours vs cuBLAS, same process), compute-sanitizer
# memcheck + racecheck on the swap-AB kernels at a small size.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
O="${OUT:-/tmp/smallm-out}"; mkdir -p "$O"
T="$B/tests/gpu_gemm_swap_ab"
step() { echo "== $(date -u +%T) $*" | tee -a "$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$O/gpu.txt"
cat "$B/BUILD-INFO" > "$O/build-info.txt" 2>/dev/null
step "tests (f64, cuBLAS, refusal)"
timeout 90 "$T" --test-threads=1 --nocapture > "$O/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^test |test result|panicked|SKIPPED" "$O/tests.txt" | head -20
step "timing grid"
timeout 100 "$T" --ignored --nocapture swap_ab_timing_grid > "$O/grid.txt" 2>&1; echo "grid rc $?"
grep -E "test result|panicked" "$O/grid.txt" | head -5
grep -c "^GRID" "$O/grid.txt"
SAN="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | sort -V | tail -1)"
step "sanitizers ($SAN)"
for tool in memcheck racecheck; do
    BATON_SMALL=1 timeout 60 "$SAN" --tool "$tool" "$T" --test-threads=1 swap_ab_matches_f64 > "$O/sanitize-$tool.txt" 2>&1
    echo "$tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/sanitize-$tool.txt" | sort | uniq -c | tr '\n' ' ') $(grep -E 'test result' "$O/sanitize-$tool.txt" | tr '\n' ' ')"
done
step "sweep after (h-smallm heuristic: swap-AB where the model picks it)"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
timeout 130 "$B/bin/baton" bench gemm --sweep --reps 7 --heatmap "$O/sweep-after.png" --json "$O/sweep-after.json" 2>&1 | filt > "$O/sweep-after.txt"; echo "rc $?"
step "sweep before (main e23ac11)"
timeout 130 "$B/before/baton" bench gemm --sweep --reps 7 --heatmap "$O/sweep-before.png" --json "$O/sweep-before.json" 2>&1 | filt > "$O/sweep-before.txt"; echo "rc $?"
tail -3 "$O/sweep-after.txt" "$O/sweep-before.txt"
step done
