#!/usr/bin/env bash
# Session 11 ATTN (issue #17), device call 1: d = 64 on three consumer
# warpgroups. Correctness first (gpu_attention vs f64 + the dumped large
# cases vs PyTorch SDPA), sanitizers at small size on the d = 64 cases,
# then bench new / base / new(--warpgroups two, d64) / new, and sdpa.py.
# Run from the repository root: bash .lane-attn/run.sh (carry .lane-attn).
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention (new)"
mkdir -p /tmp/dump
BATON_ATTN_DUMP=/tmp/dump timeout 75 ./gpu_attention --nocapture --test-threads=1 > "$L/gpu_attention.txt" 2>&1
rc=$?
grep -E "PASS|FAIL|SKIP|test result|panicked|rel L2|dumped" "$L/gpu_attention.txt" | head -60
echo "gpu_attention rc=$rc"
echo "== vs_sdpa"
timeout 60 python3 vs_sdpa.py /tmp/dump
rm -rf /tmp/dump
if [ $rc -eq 124 ]; then
  echo "gpu_attention timed out (a hang?): base bench + sdpa.py only"
  timeout 50 ./baton-base bench attention --reps 10 --chart /tmp/base.png 2>&1 | filt
  PYTHONUNBUFFERED=1 timeout 75 python3 sdpa.py
  cd "$OUT" && tar czf logs.tgz logs && rm -rf logs; exit 1
fi
for r in new base; do
  echo "== bench $r $(date -u +%T)"
  timeout 50 ./baton-$r bench attention --reps 10 --chart /tmp/$r.png 2>&1 | filt
done
echo "== bench new --warpgroups two (d64) $(date -u +%T)"
timeout 30 ./baton-new bench attention --reps 10 --filter d64 --warpgroups two --chart /tmp/two.png 2>&1 | filt
echo "== bench new (d64 again) $(date -u +%T)"
timeout 30 ./baton-new bench attention --reps 10 --filter d64 --chart /tmp/new2.png 2>&1 | filt
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 75 python3 sdpa.py
for tool in racecheck memcheck; do
  echo "== compute-sanitizer $tool (d64 cases: three warpgroups, both ping-pongs; two warpgroups) $(date -u +%T)"
  BATON_ATTN_CASES="d64" timeout 60 compute-sanitizer --tool $tool ./gpu_attention --nocapture --test-threads=1 gpu_attention_matches 2>&1 | grep -E "PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|hazard|test result|Invalid|panicked" | head -20
done
date -u
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
