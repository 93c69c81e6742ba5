#!/usr/bin/env bash
# Session 26, call 3 (H200): the A-multicast K rule (MCAST_A_MAX_K_BLOCKS,
# from session 10's queued H100 runs) re-measured: forced 256x128 vs
# 256x128_mca and 256x88 vs 256x88_mca, queued (the sweep's method) and
# L2-flushed (DeepGEMM's), alternating, two passes; and Nsight Compute's
# full set with SASS sampling on ours at 64x4096x7168 (128x32_db, the same
# tiles as DeepGEMM's 64x32 there; call 1 profiled DeepGEMM's).
set -uo pipefail
D=.lead-carry/s26; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton-mca.xz > /tmp/b/base && chmod +x /tmp/b/*
T=$O/ab.txt
run() { echo "== $1 $2 $3 $4" >> $T; timeout 40 /tmp/b/base bench gemm-fp8 $2 --shape $3 --kernel $4 2>&1 | grep -E "^\| [0-9]|rror" >> $T; }
for pass in 1 2; do
  for s in 4096x7168x16384 8192x8192x8192 4096x4096x7168 4096x4096x4096 4096x7168x2048; do for k in 256x128 256x128_mca; do run $pass "" $s $k; done; done
  for k in 256x88 256x88_mca; do run $pass "" 4096x2112x7168 $k; done
  echo "queued pass $pass t=${SECONDS}s"
done
for s in 4096x4096x4096 4096x7168x8192 6144x6144x6144; do for k in 256x128 256x128_mca; do run 1 --flush-l2 $s $k; done; done
echo "flush t=${SECONDS}s"
timeout 120 ncu --clock-control none -k "regex:^baton_gemm_fp8_blockwise_128x32_db\$" --launch-skip 6 --launch-count 1 --set full --import-source no \
  -o $O/ncu-ours-m64n4096 /tmp/b/base bench gemm-fp8 --shape 64x4096x7168 --kernel 128x32_db > $O/ncu-ours.log 2>&1
ncu -i $O/ncu-ours-m64n4096.ncu-rep --page source --print-source sass --csv > $O/src-ours-m64n4096.csv 2>&1
ncu -i $O/ncu-ours-m64n4096.ncu-rep --page details > $O/det-ours-m64n4096.txt 2>&1
echo "ncu t=${SECONDS}s $(grep -m1 Duration $O/det-ours-m64n4096.txt)"
cd $OUT && tar czf r.tar.gz r && rm -rf r
