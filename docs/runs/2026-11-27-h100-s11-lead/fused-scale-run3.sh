#!/usr/bin/env bash
# Session 11 ATTN, prepared (not run by the lane): FUSED_SCALE on in every
# entry (baton-fused, gpu_attention-fused) against the branch's default
# (baton-new: the same kernels as h-attn's head with FUSED_SCALE off, PTX
# identical to call 1's). ~120 s. bash .lane-attn/run3.sh (carry .lane-attn).
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$B"
tar xJf bins3.tar.xz
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/run3.txt") 2>&1
date -u
filt() { tr '\r' '\n' | grep -v '^\[' ; }
echo "== gpu_attention fused"
timeout 40 ./gpu_attention-fused --nocapture --test-threads=1 2>&1 | grep -E "PASS|FAIL|test result|panicked"
for r in new fused new fused; do
  echo "== bench $r $(date -u +%T)"
  timeout 40 ./baton-$r bench attention --reps 10 --chart /tmp/x.png 2>&1 | filt
done
echo "== sdpa.py $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 90 python3 sdpa.py
date -u
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
