#!/usr/bin/env bash
# Session 21, call 1 (H200): the FP8 sweep on session 20's final tree (it did not finish in session
# 20's call 5), and where the small-M BF16 rows lose: ncu of ours vs cuBLAS (duration, DRAM
# throughput, grid) at the worst sweep rows, and forced plans (configuration × split count) there,
# ours vs cuBLAS in one process. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
timeout 150 /tmp/b/baton bench gemm-fp8 --sweep --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-fp8.txt
echo "sweep fp8 t=${SECONDS}s $(grep geometric $O/sweep-fp8.txt)"
for p in 64x4104x2056:64x128-swapab:1 64x4104x2056:64x128-swapab:2 64x4104x2056:64x128-swapab:3 64x4104x2056:64x128-swapab:4 \
         64x4104x2056:128x64:1 64x4104x2056:128x64:3 \
         64x4096x4096:128x64:1 64x4096x4096:128x64:2 64x4096x4096:64x128-swapab:1 64x4096x4096:64x128-swapab:2 64x4096x4096:64x128-swapab:4 \
         8x4104x2056:16x128-swapab:1 8x4104x2056:16x128-swapab:2 8x4104x2056:16x128-swapab:4 \
         128x4104x2056:128x64:1 128x4104x2056:128x64:2 128x4104x2056:128x64:3 \
         1024x1024x4096:128x64:1 1024x1024x4096:128x128-pingpong:1 1024x1024x4096:128x64:2; do
  IFS=: read -r s c k <<< "$p"
  [ $SECONDS -lt 280 ] && timeout 20 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^[0-9]+x" | sed "s/^/$c:$k  /" >> $O/forced.txt
done; echo "forced t=${SECONDS}s"
for s in 64x4104x2056 64x4096x4096 8x4104x2056 128x4104x2056 1024x1024x4096; do
  timeout 50 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active -c 12 /tmp/b/baton bench gemm --shape $s --reps 3 > "$O/ncu-$s.txt" 2>&1
  echo "ncu $s rc=$? t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
