#!/usr/bin/env bash
# Prepared in session 31 (never ran; its BF16 part partly ran in call 1, see BENCHMARKS.md
# "Session 31"): a second call for the next session. Forced BF16 plans at the sweep's rows below 0.90 (issue #18): the plan
# (same binary, same call) against other tiles and split-K counts, most at full SM use
# (the ragged K = 2056 column at M = 32..256 runs 33-66 CTAs); then the FP8 low rows from
# call-first.sh (c2 / mca forced). $D holds baton.xz (main).
set -uo pipefail
D=${D:-.lead-carry/s31a}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-570}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
# bf NAME SHAPES [--config C --split-k S]
bf() { local name=$1 shapes=$2; shift 2; left 30 || { echo "skip $name"; return; }
  timeout 30 /tmp/baton bench gemm --reps 21 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
R=32x4104x2056,64x4104x2056,128x4104x2056,256x4104x2056
bf plan-r $R,256x5000x4096,512x1024x4096,1x5000x4096,64x4096x4096,128x5000x4096
bf r-64x128sw-s2 32x4104x2056,64x4104x2056 --config 64x128-swapab --split-k 2
bf r-64x128sw-s4 32x4104x2056,64x4104x2056 --config 64x128-swapab --split-k 4
bf r-64x64sw-s1 32x4104x2056,64x4104x2056 --config 64x64-swapab --split-k 1
bf r-64x64sw-s2 32x4104x2056,64x4104x2056,128x4104x2056 --config 64x64-swapab --split-k 2
bf r-32x64sw-s2 32x4104x2056 --config 32x64-swapab --split-k 2
bf r-128x64sw-s1 128x4104x2056,256x4104x2056 --config 128x64-swapab --split-k 1
bf r-128x64sw-s2 128x4104x2056,256x4104x2056 --config 128x64-swapab --split-k 2
bf r-128x128-s2 128x4104x2056,256x4104x2056 --config 128x128 --split-k 2
bf r-128x64-s1 128x4104x2056,256x4104x2056 --config 128x64 --split-k 1
bf r-128x64-s2 128x4104x2056,256x4104x2056 --config 128x64 --split-k 2
bf r-128x128c2-s2 256x4104x2056 --config 128x128c2 --split-k 2
bf t-128x64-s2 512x1024x4096 --config 128x64 --split-k 2
bf t-128x128-s4 512x1024x4096 --config 128x128 --split-k 4
bf t-128x64sw-s2 512x1024x4096 --config 128x64-swapab --split-k 2
bf t-128x32-s1 512x1024x4096 --config 128x32 --split-k 1
bf w-128x128c2-s1 256x5000x4096 --config 128x128c2 --split-k 1
bf w-128x64-s1 256x5000x4096,128x5000x4096 --config 128x64 --split-k 1
bf w-64x64sw-s2 64x4096x4096,128x5000x4096 --config 64x64-swapab --split-k 2
bf w-16x128sw-s2 1x5000x4096 --config 16x128-swapab --split-k 2
bf w-16x64sw-s2 1x5000x4096 --config 16x64-swapab --split-k 2
bf plan-r-2 $R,256x5000x4096,512x1024x4096,1x5000x4096,64x4096x4096,128x5000x4096
P=baton_gemm_fp8_blockwise_
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
run low-plan 35 --reps 11 $(args $LOW)
run low-c2 35 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run lk-plan 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
run lk-c2-s4 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
run lk-128-s8 25 --reps 11 --kernel ${P}128x128_db --fp8-split-k 8 $(args 256x1024x32768)
run low-mca 35 --reps 11 --kernel ${P}256x128_mca $(args $LOW)
run lk-plan-2 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
cd $OUT && tar czf r.tar.gz r && rm -rf r
