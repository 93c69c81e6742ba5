#!/usr/bin/env bash
# Session 13 ATTN call 3: cross-tile O-store read wait deferred past softmax 0' (defer), + next Q loaded behind K_1/V_1 (deferq), vs main e2e92f5, interleaved x2.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a3; rm -rf $W; mkdir -p $W; tar xJf "$B/bins3.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call3-run.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv
filt() { tr '\r' '\n' | grep -v '^\[' ; }
for v in defer deferq; do
  echo "== gpu_attention ($v) t=$SECONDS"
  timeout 60 $W/gpu_attention-$v --nocapture --test-threads=1 > "$L/call3-gpu_attention-$v.txt" 2>&1
  echo "rc=$?"; grep -E "^FAIL|test result|panicked" "$L/call3-gpu_attention-$v.txt" | head -5
done
for r in main defer deferq main defer deferq; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/call3-bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=causal timeout 60 compute-sanitizer --tool $tool $W/gpu_attention-deferq --nocapture --test-threads=1 > "$L/call3-san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL|test result" "$L/call3-san-$tool.txt" | head -5
done
date -u; echo "t=$SECONDS"
