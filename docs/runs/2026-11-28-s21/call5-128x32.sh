#!/usr/bin/env bash
# Session 21, call 5 (H200): the 128×32 cooperative tile. The cooperative GEMM tests (gpu_gemm,
# gpu_gemm_split_k: GemmConfig::ALL holds 128x32), then forced 128x32 vs 128x64 rows at few
# tile rows (M = 64–256), whole and split, ours vs cuBLAS in one process each. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for t in gpu_gemm gpu_gemm_split_k; do
  timeout 150 $B/tests/baton-reference__$t --test-threads 1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"
done
for p in 64x4096x4096:1 128x4096x4096:1 128x4096x4096:2 128x5000x4096:1 128x1024x4096:2 128x1024x4096:4 128x4104x2056:1 128x8192x1024:1 256x4096x4096:1 128x1024x32768:4 128x1024x32768:8; do
  IFS=: read -r s k <<< "$p"
  for c in 128x64 128x32; do
    [ $SECONDS -lt 380 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^[0-9]+x|rror" | sed "s/^/$c:$k  /" >> $O/forced.txt
  done
done; echo "forced t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
