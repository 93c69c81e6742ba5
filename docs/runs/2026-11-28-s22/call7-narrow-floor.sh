#!/usr/bin/env bash
# Session 22, call 7 (H200): data for next session's fit of the narrow tiles' K-block floor per tile
# height (NARROW_K_BLOCK_US was fitted at M <= 32): forced split counts of the narrow 16/32/64-row
# tiles at several K, two passes (the second reversed), one process per row. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
timeout 30 /tmp/b/baton bench gemm --shape 4096x4096x4096 --reps 200 > /dev/null 2>&1   # warm-up
ROWS="64x1024x32768:64x64-swapab:3 64x1024x32768:64x64-swapab:4 64x1024x32768:64x64-swapab:6 64x1024x32768:64x64-swapab:8
64x1024x8192:64x64-swapab:2 64x1024x8192:64x64-swapab:4 64x1024x8192:64x64-swapab:8
64x2048x16384:64x64-swapab:1 64x2048x16384:64x64-swapab:2 64x2048x16384:64x64-swapab:4
32x2048x16384:32x64-swapab:1 32x2048x16384:32x64-swapab:2 32x2048x16384:32x64-swapab:4
16x2048x16384:16x64-swapab:1 16x2048x16384:16x64-swapab:2 16x2048x16384:16x64-swapab:4"
for pass in 1 2; do
  list="$ROWS"; [ $pass = 2 ] && list=$(echo "$ROWS" | tr ' ' '\n' | tac)
  for r in $list; do IFS=: read -r s c k <<< "$r"
    [ $SECONDS -lt 170 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^ *[0-9]+x[0-9]+x[0-9]+ |rror" | head -1 | sed "s/^/p$pass $c:$k  /" >> $O/forced.txt
  done; echo "pass $pass t=${SECONDS}s"
done
awk '{printf "%s %s %.1f %.1f\n", $3, $2, $6*1000, $7*1000}' $O/forced.txt | sort
cd $OUT && tar czf r.tar.gz r && rm -rf r
