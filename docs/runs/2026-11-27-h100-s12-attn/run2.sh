#!/usr/bin/env bash
# Session 12 ATTN call 2: CROSS_TILE with the Q rows loaded a tile ahead and the tile's geometry
# carried (xt), the same code without CROSS_TILE anywhere (noxt), main e095fa0; interleaved.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a2; rm -rf $W; mkdir -p $W; tar xJf "$B/bins2.tar.xz" -C $W
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call2-run.txt") 2>&1
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (xt) t=$SECONDS"
timeout 60 $W/gpu_attention-xt --nocapture --test-threads=1 > "$L/call2-gpu_attention.txt" 2>&1
echo "rc=$?"; grep -E "^PASS|^FAIL|test result|panicked" "$L/call2-gpu_attention.txt" | tr '\n' ' '; echo
for r in main noxt xt main noxt xt; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png --json "$L/call2-bench-$r.json" 2>&1 | filt | grep -E "^b|shape"
done
echo "== sdpa t=$SECONDS"
PYTHONUNBUFFERED=1 timeout 100 python3 attention/tools/sdpa_compare.py "$L/call2-bench-xt.json" > "$L/call2-sdpa-xt.txt" 2>&1; echo "rc=$?"; grep -v Warning "$L/call2-sdpa-xt.txt" | grep -v "F.scaled" | tail -20
for tool in memcheck racecheck; do
  echo "== $tool t=$SECONDS"
  BATON_ATTN_CASES=d64 timeout 100 compute-sanitizer --tool $tool $W/gpu_attention-xt --nocapture --test-threads=1 > "$L/call2-san-$tool.txt" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL|test result" "$L/call2-san-$tool.txt" | head -5
done
echo "== ncu xt short causal t=$SECONDS"
timeout 90 ncu --clock-control none --kernel-name regex:attention --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
  $W/baton-xt bench attention --reps 2 --filter "b16 h16 s1024 d64 causal" --chart /tmp/y.png > "$L/call2-ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "Duration|Issued Warp|No Eligible|Compute \(SM\) Throughput|Warp Cycles Per Issued|Stall" "$L/call2-ncu.txt" | head
date -u; echo "t=$SECONDS"
