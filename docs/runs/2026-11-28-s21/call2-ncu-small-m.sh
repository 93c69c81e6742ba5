#!/usr/bin/env bash
# Session 21, call 2 (H200): ncu of ours vs cuBLAS's kernel at the worst small-M sweep rows
# (call 1's ncu caught only the verify launches: here filtered by kernel name). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/baton && chmod +x /tmp/b/baton
M=gpu__time_duration.sum,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed
for s in 64x4104x2056 128x4104x2056 64x4096x4096 8x4104x2056 1024x1024x4096 128x1024x32768; do
  timeout 40 ncu --clock-control none --metrics $M -k 'regex:baton_gemm|nvjet|sm90|cutlass' -c 24 /tmp/b/baton bench gemm --shape $s --reps 3 > "$O/ncu-$s.txt" 2>&1
  echo "ncu $s rc=$? t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
