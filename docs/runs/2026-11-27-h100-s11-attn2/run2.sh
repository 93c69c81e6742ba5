#!/usr/bin/env bash
# Session 11 ATTN round 2, device call 2: the planned persistent causal
# schedule (+ 176-row K/V blocks for causal d = 64) vs main 474bc55
# (baton-fused). gpu_attention (new) first; the whole bench before/after
# interleaved twice; the causal rows with --ctas per-tile and --kv-block
# narrow; sdpa.py (cuDNN); sanitizers on the causal cases at small size.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins2.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run2.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (new) $(date -u +%T)"
timeout 40 ./gpu_attention-new --nocapture --test-threads=1 > "$L/gpu_attention.txt" 2>&1
echo "rc=$?"; grep -E "PASS|FAIL|SKIP|test result|panicked" "$L/gpu_attention.txt"
for r in fused new fused new; do
  echo "== bench $r $(date -u +%T)"
  timeout 35 ./baton-$r bench attention --reps 10 --chart /tmp/x.png 2>&1 | filt
done
for opt in "--ctas per-tile" "--kv-block narrow" "--kv-block narrow --ctas per-tile"; do
  echo "== bench new causal [$opt] $(date -u +%T)"
  timeout 15 ./baton-new bench attention --reps 10 --filter causal $opt --chart /tmp/x.png 2>&1 | filt
done
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 45 python3 sdpa.py
for tool in memcheck racecheck; do
  echo "== compute-sanitizer $tool (causal cases) $(date -u +%T)"
  BATON_ATTN_CASES="causal" timeout 30 compute-sanitizer --tool $tool ./gpu_attention-new --nocapture --test-threads=1 gpu_attention_matches 2>&1 | grep -E "PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|hazard|test result|Invalid|panicked" | head -20
done
date -u
