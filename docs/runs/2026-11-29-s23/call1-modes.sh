#!/bin/bash
# Session 23 call 1: are the ~10 µs rows' two modes per process, shared by
# both libraries? Each shape in 4 separate processes, ours and cuBLAS.
set -u
R=$OUT/r; mkdir -p $R
xz -dc .lead-carry/s23/baton.xz > /tmp/baton; chmod +x /tmp/baton
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt
/tmp/baton info > $R/info.txt 2>&1
/tmp/baton bench gemm --shape 128x1024x4096 --reps 31 > $R/warm.txt 2>&1
for round in 1 2 3 4; do
  for s in 128x1024x4096 8x1024x4096 32x1024x4096 1x8192x1024 1024x1024x4096 64x4104x2056 128x4104x2056; do
    echo "== round $round $s $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)" >> $R/modes.txt
    /tmp/baton bench gemm --shape $s --reps 31 --chart /tmp/c.png >> $R/modes.txt 2>&1
  done
done
tar czf $OUT/r.tar.gz -C $OUT r
