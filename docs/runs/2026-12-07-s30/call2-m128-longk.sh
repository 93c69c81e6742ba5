#!/usr/bin/env bash
# Session 30 call 2 (H100 wanted): (1) issue #19: the 64-row tiles at M = 96..128 against
# the plan, by DeepGEMM's method, one call; (2) issue #18's FP8 long-K rows (N = 1024,
# K = 32768): the plan against forced split plans (queued, as the sweep); (3) the FP8 sweep.
set -uo pipefail
D=${D:-.lead-carry/s30a}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-570}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
P=baton_gemm_fp8_blockwise_
M128=128x24576x1536,128x7168x2048,128x32768x512,128x7168x16384,128x4096x7168,128x2112x7168,128x8192x1024,128x4096x4096,128x16384x4096,128x5000x4096,96x24576x1536,112x7168x2048,128x1024x4096,128x28672x2048
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|^[0-9]+x[0-9]+x[0-9]+ |geometric|FAIL|rror' $O/$name.txt | head -40; }
run m128-plan 90 --flush-l2 $(args $M128)
run m128-64x128 80 --flush-l2 --kernel ${P}64x128_db $(args $M128)
run m128-64x64 80 --flush-l2 --kernel ${P}64x64_db $(args $M128)
LK=8x1024x32768,32x1024x32768,64x1024x32768,128x1024x32768,256x1024x32768,512x1024x32768
run lk-plan 40 --reps 11 $(args $LK)
run lk-c2-s4 30 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 --shape 256x1024x32768 --shape 512x1024x32768
run lk-c2-s8 30 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 8 --shape 256x1024x32768 --shape 512x1024x32768
run lk-256sk-s8 30 --reps 11 --kernel ${P}256x128_sk --fp8-split-k 8 $(args 256x1024x32768,512x1024x32768)
run lk-128x128-s8 30 --reps 11 --kernel ${P}128x128_db --fp8-split-k 8 $(args 128x1024x32768,256x1024x32768,512x1024x32768)
run lk-128x64-s8 30 --reps 11 --kernel ${P}128x64_db --fp8-split-k 8 $(args 8x1024x32768,128x1024x32768,256x1024x32768)
left 130 && { timeout $((LIMIT-SECONDS-10)) /tmp/baton bench gemm-fp8 --sweep --reps 11 --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png > $O/sweep-fp8.txt 2>&1; echo "sweep fp8 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-fp8.txt; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
