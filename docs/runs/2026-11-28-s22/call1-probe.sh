#!/usr/bin/env bash
# Session 22, call 1 (H200): (a) the swap-AB stream-K GPU test written in session 21;
# (b) session 21's long-K probe (narrow vs 128-row swap-AB split counts at N = 1024, K = 32768);
# (c) FP8 at M = 64 by DeepGEMM's method (--flush-l2): the plan vs forced split counts, to tell a
#     latency-bound single-warpgroup chain from a bandwidth limit; (d) ncu warp states of the FP8
#     plan at 64x4096x7168. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton-base.xz > /tmp/b/baton && chmod +x /tmp/b/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 120 bash tools/gpu-suite.sh $B swap_ab > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL|stream_k" "$O/gpu-suite-summary.txt" | head
for s in 1x1024x32768 8x1024x32768; do
  for p in 16x64-swapab:3 16x64-swapab:4 16x64-swapab:6 16x64-swapab:8 16x128-swapab:5 16x128-swapab:8; do
    IFS=: read -r c k <<< "$p"
    [ $SECONDS -lt 150 ] && timeout 10 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^ *[0-9]+x|rror" | sed "s/^/$c:$k  /" >> $O/forced.txt
  done
done; echo "long-k t=${SECONDS}s"; cat $O/forced.txt
F=baton_gemm_fp8_blockwise
for s in 64x4096x7168 64x2112x7168 64x7168x2048 64x32768x512; do
  [ $SECONDS -lt 300 ] && timeout 30 /tmp/b/baton bench gemm-fp8 --flush-l2 --shape $s 2>&1 | grep -vE '^\[' | tail -4 | sed "s/^/plan  /" >> $O/fp8.txt
  for p in 128x32_db:1 128x32_db:2 128x64_db:1 128x64_db:2 128x64_db:4; do IFS=: read -r kk sp <<< "$p"
    [ $SECONDS -lt 300 ] && timeout 30 /tmp/b/baton bench gemm-fp8 --flush-l2 --shape $s --kernel ${F}_$kk --fp8-split-k $sp 2>&1 | grep -vE '^\[' | tail -2 | sed "s/^/$kk:$sp  /" >> $O/fp8.txt
  done
done; echo "fp8 t=${SECONDS}s"; cat $O/fp8.txt
[ $SECONDS -lt 380 ] && timeout 90 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -k regex:baton_gemm_fp8 --launch-skip 6 -c 1 /tmp/b/baton bench gemm-fp8 --flush-l2 --shape 64x4096x7168 > $O/ncu-fp8-64x4096x7168.txt 2>&1
echo "ncu t=${SECONDS}s"; grep -E "Duration|Stall|Throughput|Issued|Eligible|Active Warps" $O/ncu-fp8-64x4096x7168.txt | head -40
cd $OUT && tar czf r.tar.gz r && rm -rf r
