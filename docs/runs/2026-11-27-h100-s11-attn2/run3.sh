#!/usr/bin/env bash
# Session 11 ATTN round 2, prepared for the lead (NOT run by the lane: its
# two device calls were spent): the committed head of h-attn2 (baton-head,
# gpu_attention-head: the planned causal entries d64_causal and
# d128_causal; every other entry PTX-identical to main) against main
# 474bc55 (baton-fused). ~120 s. bash .lane-attn2/run3.sh (carry .lane-attn2).
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins3.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run3.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (head) $(date -u +%T)"
timeout 40 ./gpu_attention-head --nocapture --test-threads=1 > "$L/gpu_attention.txt" 2>&1
echo "rc=$?"; grep -E "PASS|FAIL|SKIP|test result|panicked" "$L/gpu_attention.txt"
for r in fused head fused head; do
  echo "== bench $r $(date -u +%T)"
  timeout 35 ./baton-$r bench attention --reps 10 --chart /tmp/x.png 2>&1 | filt
done
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 45 python3 sdpa.py
for tool in memcheck racecheck; do
  echo "== compute-sanitizer $tool (causal cases) $(date -u +%T)"
  BATON_ATTN_CASES="causal" timeout 30 compute-sanitizer --tool $tool ./gpu_attention-head --nocapture --test-threads=1 gpu_attention_matches 2>&1 | grep -E "PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|hazard|test result|Invalid|panicked" | head -20
done
date -u
