#!/usr/bin/env bash
# ATTN-PERF session 10, call 2 (lean): correctness first (abort on failure),
# bench new/base/new, sdpa.py, racecheck+memcheck (gqa 4:1: d128, 16 tiles
# through one CTA's 3-stage Q ring), one ncu.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (v4)"
mkdir -p /tmp/dump
set -o pipefail
BATON_ATTN_DUMP=/tmp/dump timeout 60 ./gpu_attention --nocapture --test-threads=1 > "$L/gpu_attention.txt" 2>&1
rc=$?
grep -E "PASS|FAIL|SKIP|test result|panicked|rel L2|dumped" "$L/gpu_attention.txt" | head -60
if [ $rc -ne 0 ]; then echo "gpu_attention rc=$rc: stopping"; cd "$OUT" && tar czf logs.tgz logs; exit 1; fi
echo "== vs_sdpa"
timeout 60 python3 vs_sdpa.py /tmp/dump
rm -rf /tmp/dump
for r in v4 base v4; do
  echo "== bench $r $(date -u +%T)"
  timeout 45 ./baton-$r bench attention --reps 10 --chart /tmp/$r.png 2>&1 | filt
done
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 75 python3 sdpa.py
for tool in racecheck memcheck; do
  echo "== compute-sanitizer $tool (gqa 4:1) $(date -u +%T)"
  BATON_ATTN_CASES="gqa 4:1" timeout 45 compute-sanitizer --tool $tool ./gpu_attention --nocapture --test-threads=1 2>&1 | grep -E "PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|hazard|test result|Invalid" | head -20
done
echo "== ncu $(date -u +%T)"
M=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 45 ncu --clock-control none -k "regex:^baton_attention_fwd_d128\$" -c 1 --section SpeedOfLight --section WarpStateStats --metrics "$M" ./baton-v4 bench attention --reps 1 --filter "b4 h16 s4096 d128" --chart /tmp/ncu.png 2>&1 | grep -v "^==PROF==" | tail -70
date -u
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
