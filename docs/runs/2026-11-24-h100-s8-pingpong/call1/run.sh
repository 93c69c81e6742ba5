#!/usr/bin/env bash
# PINGPONG lane, session 8: correctness + sanitizer + same-call benchmarks.
# Run from the repo root of the device copy: bash .pingpong-bundle/run.sh
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
O="${OUT:-/tmp/pp-out}"; mkdir -p "$O"
NEW="$B/bin/baton"; OLD="$B/before/baton"
T="$B/$(awk -F'\t' '$1 ~ /gpu_gemm$/ {print $2}' "$B/tests.tsv")"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
step() { echo "== $(date -u +%T) $*" | tee -a "$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$O/gpu.txt"
step "tests (pingpong)"
timeout 120 "$T" pingpong --test-threads 1 --nocapture > "$O/tests.txt" 2>&1; echo "rc=$?" >> "$O/tests.txt"
grep -E "^test |test result|rel " "$O/tests.txt" | tail -40
step "bench gemm: before (main) / after (heuristic) / after forced pp / ppc2"
timeout 100 "$OLD" bench gemm --reps 21 2>&1 | filt > "$O/gemm-before.txt"
timeout 100 "$NEW" bench gemm --reps 21 2>&1 | filt > "$O/gemm-after.txt"
timeout 100 "$NEW" bench gemm --reps 21 --config 128x128-pingpong 2>&1 | filt > "$O/gemm-pp.txt"
timeout 100 "$NEW" bench gemm --reps 21 --config 128x128c2-pingpong 2>&1 | filt > "$O/gemm-ppc2.txt"
for f in before after pp ppc2; do echo "-- $f"; grep -E "^[0-9]+x|geometric|FAIL" "$O/gemm-$f.txt"; done
step "sanitizer (small): memcheck, racecheck on the ping-pong cuBLAS test"
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    BATON_SMALL=1 timeout 150 compute-sanitizer --tool $tool "$T" pingpong_matches_cublas --test-threads 1 > "$O/sanitize-$tool.txt" 2>&1; echo "rc=$?" >> "$O/sanitize-$tool.txt"
    tail -4 "$O/sanitize-$tool.txt"
  done
else echo "no compute-sanitizer"; fi
step "sweep: after forced ppc2, before (main heuristic)"
timeout 130 "$NEW" bench gemm --sweep --reps 7 --config 128x128c2-pingpong --heatmap "$O/sweep-ppc2.png" --json "$O/sweep-ppc2.json" 2>&1 | filt > "$O/sweep-ppc2.txt"
tail -3 "$O/sweep-ppc2.txt"
timeout 120 "$OLD" bench gemm --sweep --reps 7 --heatmap "$O/sweep-before.png" --json "$O/sweep-before.json" 2>&1 | filt > "$O/sweep-before.txt"
tail -3 "$O/sweep-before.txt"
step done
