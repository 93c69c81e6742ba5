#!/usr/bin/env bash
# Session 12 ATTN call 1: CROSS_TILE (the next tile's S_0 under this tile's last P·V and
# epilogue) on the d = 64 entries (4 Q stages), vs main e095fa0, same call.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
R="$(pwd)"
W=/tmp/a1; rm -rf $W; mkdir -p $W; tar xJf "$B/bins1.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run1.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (new) t=$SECONDS"
timeout 60 $W/gpu_attention-new --nocapture --test-threads=1 > "$L/gpu_attention.txt" 2>&1
echo "rc=$?"; grep -E "^PASS|^FAIL|test result|panicked|ctas=" "$L/gpu_attention.txt" | cut -c1-160
for r in main new main new; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
echo "== sdpa t=$SECONDS"
PYTHONUNBUFFERED=1 timeout 100 python3 attention/tools/sdpa_compare.py "$L/bench-new.json" > "$L/sdpa-new.txt" 2>&1; echo "rc=$?"; tail -22 "$L/sdpa-new.txt"
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=d64 timeout 100 compute-sanitizer --tool $tool $W/gpu_attention-new --nocapture --test-threads=1 > "$L/san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^PASS|^FAIL|test result" "$L/san-$tool.txt" | head -20
done
date -u; echo "t=$SECONDS"
