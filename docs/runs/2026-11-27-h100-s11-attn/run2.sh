#!/usr/bin/env bash
# Session 11 ATTN, device call 2: the three-warpgroup d = 64 kernel's
# softmax variants (exp2 on the FMA pipe for every EMU-th accumulator chunk;
# O rescaled early, under S's wgmmas), one binary each, d = 64 shapes,
# interleaved twice, with the two-warpgroup kernels (--warpgroups two) as
# the reference; then the GPU test + sanitizers of the best candidates and
# sdpa.py. Run from the repository root: bash .lane-attn/run2.sh.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins2.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run2.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
filt() { tr '\r' '\n' | grep -v '^\[' | grep -E "d64|warpgroups" ; }
for round in 1 2; do
  echo "== two (reference) round $round $(date -u +%T)"
  timeout 15 ./baton-new bench attention --reps 10 --filter d64 --warpgroups two --chart /tmp/x.png 2>&1 | filt
  for r in new emu4 emu2 emu4early early; do
    echo "== $r round $round $(date -u +%T)"
    timeout 15 ./baton-$r bench attention --reps 10 --filter d64 --chart /tmp/x.png 2>&1 | filt
  done
done
for r in emu4 emu2 emu4early early; do
  echo "== gpu_attention $r (d64 cases) $(date -u +%T)"
  BATON_ATTN_CASES=d64 timeout 20 ./gpu_attention-$r --nocapture --test-threads=1 gpu_attention_matches 2>&1 | grep -E "PASS|FAIL|test result|panicked"
done
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 30 python3 sdpa.py 2>&1 | grep -E "d64|NVIDIA"
date -u
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
