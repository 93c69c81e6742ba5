#!/usr/bin/env bash
# Session 24, call 2 (H200): why 128x64 in clusters along N (A multicast) runs
# slower than 128x64 alone: per-CTA timelines of both (traced CLI, df60cbe),
# and forced 128x128 split 2 against 128x64 whole at 1024x1024x4096.
# Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
T=$O/trace.txt
for a in "1024x1024x4096 128x64 1" "1024x1024x4096 128x64n2 1" "128x8192x1024 128x64 1" "128x8192x1024 128x64n2 1" "512x1024x4096 128x64 2" "512x1024x4096 128x64n2 2"; do
  set -- $a; echo "== $a" >> $T; timeout 60 /tmp/b/baton-trace bench trace-gemm --shape $1 --config $2 --split-k $3 --per-cta $O/percta-$1-$2.csv >> $T 2>&1; done
echo "trace t=${SECONDS}s"
F=$O/forced.txt
for pass in 1 2; do
for a in "1024x1024x4096 128x64 1" "1024x1024x4096 128x128 2" "1024x1024x4096 128x128c2 2" "512x1024x4096 128x64 2" "512x1024x4096 128x128 4" "128x8192x1024 128x64 1" "128x8192x1024 128x128 2"; do
  set -- $a; echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape $1 --config $2 --split-k $3 --repack none --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; done; done
echo "forced t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
