#!/usr/bin/env bash
# Session 18, call 7: the CLIs after the cold-input refactor (host only): bench gemm and trace-gemm run and check.
set -uo pipefail
D=.lead-carry/s18f; mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
timeout 60 /tmp/b/baton bench gemm --shape 2048x2048x2048 --shape 300x520x1000 --reps 11 --chart /tmp/x.png 2>&1 | grep -E "^[0-9]+x|geometric|FAIL|verify" | tee $OUT/gemm.txt
timeout 60 /tmp/b/baton-trace bench trace-gemm --shape 1024x1024x4096 --shape 4096x4096x4096 --reps 11 2>&1 | tee $OUT/trace.txt | grep -E "^[0-9]+x|FAIL|last main loop"
timeout 30 /tmp/b/baton bench trace-gemm --shape 256x256x256 --reps 3 2>&1 | tail -2 | tee $OUT/not-traced.txt; echo "untraced rc=${PIPESTATUS[0]}"
