#!/usr/bin/env bash
# Session 12 ATTN call 3: half blocks (warpgroup 0's causal diagonal block: S on N = 64, P·V on its lower K steps)
# on top of CROSS_TILE (half) vs CROSS_TILE alone (xt, call 2's) vs main e095fa0, interleaved.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a3; rm -rf $W; mkdir -p $W; tar xJf "$B/bins3.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call3-run.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (half) t=$SECONDS"
timeout 60 $W/gpu_attention-half --nocapture --test-threads=1 > "$L/call3-gpu_attention.txt" 2>&1
echo "rc=$?"; grep -E "^PASS|^FAIL|test result|panicked" "$L/call3-gpu_attention.txt" | tr '\n' ' '; echo
for r in main xt half main xt half; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/call3-bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
echo "== sdpa t=$SECONDS"
PYTHONUNBUFFERED=1 timeout 100 python3 attention/tools/sdpa_compare.py "$L/call3-bench-half.json" > "$L/call3-sdpa-half.txt" 2>&1; echo "rc=$?"; grep -v Warning "$L/call3-sdpa-half.txt" | grep -v "F.scaled" | tail -20
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=causal timeout 100 compute-sanitizer --tool $tool $W/gpu_attention-half --nocapture --test-threads=1 > "$L/call3-san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL|test result" "$L/call3-san-$tool.txt" | head -5
done
date -u; echo "t=$SECONDS"
