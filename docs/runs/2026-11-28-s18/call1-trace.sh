#!/usr/bin/env bash
# Session 18, call 1: timeline stamps of small BF16 shapes (issue #18's ~20 rows below 0.90),
# the traced CLI (BATON_TRACE=1) beside the untraced one of the same tree.
set -uo pipefail
D=.lead-carry/s18
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $OUT/gpu.txt
S="--shape 1024x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096 --shape 512x1024x4096 --shape 1x1024x4096 --shape 1024x3072x4096 --shape 256x4104x2056 --shape 4096x4096x4096"
timeout 200 /tmp/b/baton-trace bench trace-gemm $S --reps 21 2>&1 | tee $OUT/trace.txt
timeout 120 /tmp/b/baton bench gemm $S --reps 21 --chart /tmp/x.png 2>&1 | grep -v "^\s*$" | tee $OUT/untraced.txt
