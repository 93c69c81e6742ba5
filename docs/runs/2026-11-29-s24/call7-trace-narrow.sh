#!/usr/bin/env bash
# Session 24, call 7 (H200): per-CTA timelines of 128x64 against the narrow
# swap-AB 128 tile where it won (1024x1024x4096), lost (256x4096x4096) and
# gained a little (128x5000x4096): input for the cost model's refit.
# Traced CLI of 8db7106. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton-trace.xz > /tmp/b/baton-trace && chmod +x /tmp/b/baton-trace
T=$O/trace.txt
for a in "1024x1024x4096 128x64" "1024x1024x4096 128x64-swapab" "256x4096x4096 128x64" "256x4096x4096 128x64-swapab" "128x5000x4096 128x64" "128x5000x4096 128x64-swapab"; do
  set -- $a; echo "== $a" >> $T; timeout 60 /tmp/b/baton-trace bench trace-gemm --shape $1 --config $2 --split-k 1 --per-cta $O/percta-$1-$2.csv >> $T 2>&1; done
echo "trace t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
