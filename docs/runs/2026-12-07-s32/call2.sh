#!/usr/bin/env bash
# Session 32, a second device call: where the FP8 kernel loses to DeepGEMM at #19's low rows
# (per-CTA timelines of the traced CLI, `bench trace-gemm-fp8`, beside cuBLASLt blockwise and
# the untraced CLI's times in the same call), then session 31's call-second.sh FP8 part (the
# FP8 sweep's low rows and long-K rows against forced kernels). Carry .device-carry
# (bundle.tar.xz: main's CLI; baton-trace.xz: the traced CLI of ddbf4e9).
# Usage (device): LIMIT=<timeout - 30> bash docs/runs/2026-12-07-s32/call2.sh
set -uo pipefail
O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
mkdir -p /tmp/b && xz -dc .device-carry/bundle.tar.xz | tar -xf - -C /tmp/b
B=/tmp/b/.device-bundle/bin/baton
xz -dc .device-carry/baton-trace.xz > /tmp/baton-trace; chmod +x /tmp/baton-trace
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
tr() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton-trace bench trace-gemm-fp8 --per-cta $O/$name.csv "$@" > $O/$name.txt 2>&1
  echo "$name rc=$? t=${SECONDS}s"; cat $O/$name.txt; }
LOWDG=64x32768x512,128x32768x512,64x7168x2048,128x7168x2048,128x2112x7168
tr trace-cold 90 --reps 21 $(args $LOWDG)
tr trace-hot 45 --reps 21 --hot $(args 64x32768x512,128x32768x512,64x7168x2048)
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim $B bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
run untraced 40 --reps 21 $(args $LOWDG)
P=baton_gemm_fp8_blockwise_
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
run low-plan 35 --reps 11 $(args $LOW)
run low-c2 35 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run lk-plan 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
run lk-c2-s4 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
run lk-128-s8 25 --reps 11 --kernel ${P}128x128_db --fp8-split-k 8 $(args 256x1024x32768)
run low-mca 35 --reps 11 --kernel ${P}256x128_mca $(args $LOW)
run lk-plan-2 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
cd $OUT && tar czf r.tar.gz r && rm -rf r
