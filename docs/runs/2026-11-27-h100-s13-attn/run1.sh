#!/usr/bin/env bash
# Session 13 ATTN call 1: row sums on the tensor cores (sums) and + lazy rescale (lazy) vs main e2e92f5, interleaved.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a1; rm -rf $W; mkdir -p $W; tar xJf "$B/bins1.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call1-run.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
for v in sums lazy; do
  echo "== gpu_attention ($v) t=$SECONDS"
  timeout 60 $W/gpu_attention-$v --nocapture --test-threads=1 > "$L/call1-gpu_attention-$v.txt" 2>&1
  echo "rc=$?"; grep -E "^FAIL|test result|panicked" "$L/call1-gpu_attention-$v.txt" | head -5
done
for r in main sums lazy main sums lazy; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/call1-bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
echo "== sdpa t=$SECONDS"
PYTHONUNBUFFERED=1 timeout 100 python3 attention/tools/sdpa_compare.py "$L/call1-bench-lazy.json" > "$L/call1-sdpa-lazy.txt" 2>&1; echo "rc=$?"; grep -v Warning "$L/call1-sdpa-lazy.txt" | grep -v "F.scaled" | tail -20
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=d64 timeout 60 compute-sanitizer --tool $tool $W/gpu_attention-lazy --nocapture --test-threads=1 > "$L/call1-san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL|test result" "$L/call1-san-$tool.txt" | head -5
done
date -u; echo "t=$SECONDS"
