#!/usr/bin/env bash
# PINGPONG lane, session 8, call 2: the heuristic (ping-pong where the cost
# model picks it) against main's bundle, same call: issue-#6 set and sweep.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
O="${OUT:-/tmp/pp-out}"; mkdir -p "$O"; W="$(mktemp -d)"
NEW="$B/bin/baton"; OLD="$B/before/baton"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$W/gpu.txt"
echo "== $(date -u +%T) bench gemm before/after/after/before"
timeout 100 "$OLD" bench gemm --reps 21 2>&1 | filt > "$W/gemm-before-1.txt"
timeout 100 "$NEW" bench gemm --reps 21 2>&1 | filt > "$W/gemm-after-1.txt"
timeout 100 "$NEW" bench gemm --reps 21 2>&1 | filt > "$W/gemm-after-2.txt"
timeout 100 "$OLD" bench gemm --reps 21 2>&1 | filt > "$W/gemm-before-2.txt"
for f in before-1 after-1 after-2 before-2; do echo "-- $f"; grep -E "^[0-9]+x|geometric|FAIL" "$W/gemm-$f.txt"; done
echo "== $(date -u +%T) sweep after (heuristic), before (main)"
timeout 130 "$NEW" bench gemm --sweep --reps 7 --heatmap "$W/sweep-after.png" --json "$W/sweep-after.json" 2>&1 | filt > "$W/sweep-after.txt"
timeout 130 "$OLD" bench gemm --sweep --reps 7 --heatmap "$W/sweep-before.png" --json "$W/sweep-before.json" 2>&1 | filt > "$W/sweep-before.txt"
tail -3 "$W/sweep-after.txt" "$W/sweep-before.txt"
grep -E "^[0-9]+x" "$W/sweep-after.txt" | grep pingpong | cut -c1-110
tar -czf "$O/run2.tar.gz" -C "$W" .
echo "== $(date -u +%T) done"
