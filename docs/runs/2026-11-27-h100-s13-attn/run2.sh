#!/usr/bin/env bash
# Session 13 ATTN call 2: causal d = 64 row sums on the tensor cores + causal diagonal blocks masked by halves (half) vs main e2e92f5, interleaved x3.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a2; rm -rf $W; mkdir -p $W; tar xJf "$B/bins2.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call2-run.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (half) t=$SECONDS"
timeout 60 $W/gpu_attention-half --nocapture --test-threads=1 > "$L/call2-gpu_attention-half.txt" 2>&1
echo "rc=$?"; grep -E "^FAIL|test result|panicked" "$L/call2-gpu_attention-half.txt" | head -5
for r in main half main half main half; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/call2-bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
echo "== sdpa t=$SECONDS"
PYTHONUNBUFFERED=1 timeout 100 python3 attention/tools/sdpa_compare.py "$L/call2-bench-half.json" > "$L/call2-sdpa-half.txt" 2>&1; echo "rc=$?"; grep -v Warning "$L/call2-sdpa-half.txt" | grep -v "F.scaled" | tail -20
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=causal timeout 60 compute-sanitizer --tool $tool $W/gpu_attention-half --nocapture --test-threads=1 > "$L/call2-san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL|test result" "$L/call2-san-$tool.txt" | head -5
done
date -u; echo "t=$SECONDS"
