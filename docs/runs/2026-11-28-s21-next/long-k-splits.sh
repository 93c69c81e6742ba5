#!/usr/bin/env bash
# Prepared in session 21 (not run: the device budget was spent): why narrow swap-AB split 3 lost at N = 1024, K = 32768 (M = 1, 8):
# forced split counts of the narrow and the 128-row 16-row tiles, ours vs cuBLAS per process.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
for s in 1x1024x32768 8x1024x32768; do
  for p in 16x64-swapab:3 16x64-swapab:4 16x64-swapab:6 16x64-swapab:8 16x128-swapab:5 16x128-swapab:8; do
    IFS=: read -r c k <<< "$p"
    [ $SECONDS -lt 60 ] && timeout 10 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^[0-9]+x|rror" | sed "s/^/$c:$k  /" >> $O/forced.txt
  done
done; echo "forced t=${SECONDS}s"; cat $O/forced.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
