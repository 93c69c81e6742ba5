#!/usr/bin/env bash
# Session 23, call 6 (H200): per-CTA traces of the worst rows that are not
# K = 2056 (256/128 x 1024 x 32768, 64 x 5000 x 4096, 128 x 8192 x 1024), and
# forced split counts at 256 x 1024 x 32768.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
timeout 120 /tmp/b/baton-trace bench trace-gemm --reps 15 --shape 256x1024x32768 --shape 128x1024x32768 --shape 64x5000x4096 --shape 128x8192x1024 --per-cta $O/per-cta.csv > $O/trace.txt 2>&1; echo "trace rc=$? t=${SECONDS}s"
F=$O/forced.txt
for pass in 1 2; do
for a in "128x128c2 8" "128x128c2 4" "128x128c2 16" "128x256c2 8" "128x256c2 16" "128x128 16" "128x64 8" "128x64 16"; do
  set -- $a; echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape 256x1024x32768 --config $1 --split-k $2 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; done; done
echo "forced t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
