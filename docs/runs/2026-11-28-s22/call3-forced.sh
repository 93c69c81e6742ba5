#!/usr/bin/env bash
# Session 22, call 3 (H200): forced plans at the shapes whose plan the device-DRAM cost model and the
# narrow K-block floor move (base plan vs candidates), two passes in alternating order, after a warm-up.
# One process per row: ours and cuBLAS in it. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton-base.xz > /tmp/b/baton && chmod +x /tmp/b/baton
timeout 60 /tmp/b/baton bench gemm --shape 4096x4096x4096 --reps 200 > /dev/null 2>&1   # warm-up
ROWS="1x1024x4096:16x64-swapab:3 1x1024x4096:16x64-swapab:5 1x1024x4096:16x128-swapab:5
1x8192x1024:16x64-swapab:1 1x8192x1024:16x128-swapab:1
1x5000x4096:16x64-swapab:1 1x5000x4096:16x128-swapab:1
8x1024x32768:16x64-swapab:4 8x1024x32768:16x64-swapab:5 8x1024x32768:16x128-swapab:5
32x1024x4096:32x128-swapab:5 32x1024x4096:32x64-swapab:3 32x1024x4096:32x64-swapab:5
32x1024x32768:32x128-swapab:5 32x1024x32768:32x64-swapab:3 32x1024x32768:32x64-swapab:5
32x8192x1024:32x64-swapab:1 32x8192x1024:32x128-swapab:1
64x1024x4096:64x64-swapab:3 64x1024x4096:64x64-swapab:4 64x1024x4096:64x64-swapab:5
64x1024x32768:64x64-swapab:4 64x1024x32768:64x64-swapab:5 64x1024x32768:64x128-swapab:5
64x4104x2056:64x128-swapab:1 64x4104x2056:64x128-swapab:2 64x4104x2056:64x64-swapab:2 64x4104x2056:64x64-swapab:1
128x4104x2056:128x64:1:a 128x4104x2056:128x128:3:none
128x4096x4096:128x64:1 128x4096x4096:128x64:2
128x1024x32768:128x64:4 128x1024x32768:128x64:8"
for pass in 1 2; do
  list="$ROWS"; [ $pass = 2 ] && list=$(echo "$ROWS" | tr ' ' '\n' | tac)
  for r in $list; do IFS=: read -r s c k rp <<< "$r"; extra=""; [ -n "${rp:-}" ] && extra="--repack $rp"
    [ $SECONDS -lt 420 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k $extra 2>&1 | grep -E "^ *[0-9]+x[0-9]+x[0-9]+ |rror" | head -1 | sed "s/^/p$pass $c:$k:${rp:-}  /" >> $O/forced.txt
  done; echo "pass $pass t=${SECONDS}s"
done
sort -k3,3 -k2,2 $O/forced.txt | awk '{print}' > $O/forced-sorted.txt; cat $O/forced-sorted.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
