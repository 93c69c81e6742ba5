#!/usr/bin/env bash
# Session 11 ATTN round 2, device call 1: why d = 64 causal s4096 is flat.
# Host-only options on main's kernels (baton-c1 = main 474bc55 + --grid N,
# --kv-block wide): one CTA per tile (default) vs persistent (--grid 132),
# 176-row K/V blocks for causal, three warpgroups; interleaved twice; then
# ncu (--clock-control none) on the causal and the non-causal d64 kernels.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins1.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run1.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' | grep -E "TFLOP|d64|d128|kv block|FAIL" ; }
for round in 1 2; do
  for opt in "" "--grid 132" "--kv-block wide" "--kv-block wide --grid 132" "--warpgroups three"; do
    echo "== d64 causal [$opt] round $round $(date -u +%T)"
    timeout 20 ./baton-c1 bench attention --reps 10 --filter "d64 causal" $opt --chart /tmp/x.png 2>&1 | filt
  done
done
for opt in "" "--grid 132"; do
  echo "== d128 causal [$opt] $(date -u +%T)"
  timeout 25 ./baton-c1 bench attention --reps 10 --filter "d128 causal" $opt --chart /tmp/x.png 2>&1 | filt
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in "baton_attention_fwd_d64_causal" "baton_attention_fwd_d64"; do
  echo "== ncu $k $(date -u +%T)"
  timeout 45 $NCU --clock-control none -k "regex:^${k}\$" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    ./baton-c1 bench attention --reps 1 --filter "b4 h32 s4096 d64" --chart /tmp/x.png 2>&1 \
    | grep -vE '^\[|^==PROF==' | grep -E "Duration|Throughput|Pipe|Issue|Eligible|Active Warps|Hit Rate|Stall|cycles|Grid Size|Warp Cycles|No Eligible|Registers|Executed Ipc|Busy|Bandwidth" | head -45
done
date -u
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
