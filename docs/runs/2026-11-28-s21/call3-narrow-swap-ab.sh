#!/usr/bin/env bash
# Session 21, call 3 (H200): the narrow swap-AB kernels (64 of N per tile, one consumer warpgroup).
# Their GPU tests (every swap-AB configuration vs f64 at ragged shapes, split 1–9, and vs cuBLAS),
# memcheck and racecheck of the small set; then forced plans at the small-M sweep rows — narrow
# whole and split, the 128-row swap-AB tile — with the new heuristic's plan and session 20's
# (base CLI), ours vs cuBLAS in one process each; ncu of the narrow kernels vs cuBLAS at two
# rows. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
T=$B/tests/baton-reference__gpu_gemm_swap_ab
timeout 90 $T --test-threads 1 > $O/swap-ab-tests.txt 2>&1; echo "swap-ab tests rc=$? t=${SECONDS}s"; grep -E "^test |test result" $O/swap-ab-tests.txt | tail -6
for tool in memcheck racecheck; do
  BATON_SMALL=1 timeout 120 compute-sanitizer --tool $tool $T --exact swap_ab_matches_f64_on_ragged_shapes > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? t=${SECONDS}s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | tail -1)"
done
for s in 1x4104x2056 8x4104x2056 32x4104x2056 64x4104x2056 8x4096x4096 64x4096x4096 32x5000x4096 64x5000x4096 1x1024x4096 64x1024x32768 8x8192x1024 64x16384x4096; do
  m=${s%%x*}; w=16; [ $m -gt 16 ] && w=32; [ $m -gt 32 ] && w=64
  for v in base new; do [ $SECONDS -lt 400 ] && timeout 15 /tmp/b/baton-$v bench gemm --reps 31 --shape $s 2>&1 | grep -E "^[0-9]+x" | sed "s/^/plan-$v  /" >> $O/forced.txt; done 2>/dev/null
  for p in ${w}x64-swapab:1 ${w}x64-swapab:2 ${w}x64-swapab:3 ${w}x128-swapab:1; do
    IFS=: read -r c k <<< "$p"
    [ $SECONDS -lt 400 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^[0-9]+x|rror" | sed "s/^/$c:$k  /" >> $O/forced.txt
  done
done; echo "forced t=${SECONDS}s"
M=gpu__time_duration.sum,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg
for s in 64x4104x2056 8x4104x2056; do
  m=${s%%x*}; w=16; [ $m -gt 16 ] && w=32; [ $m -gt 32 ] && w=64
  [ $SECONDS -lt 440 ] && timeout 30 ncu --clock-control none --metrics $M -k 'regex:baton_gemm|nvjet|sm90' -c 24 /tmp/b/baton bench gemm --shape $s --config ${w}x64-swapab --reps 3 > "$O/ncu-$s.txt" 2>&1
done; echo "ncu t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
