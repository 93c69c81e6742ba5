#!/usr/bin/env bash
# Session 32, a second device call. Carry .device-bundle.tar.xz (make-device-bundle.sh with
# BUNDLE_TESTS='gpu_gemm_swap_ab|gpu_gemm_fp8$' at 26a62b1 or later: the swap-AB narrow
# 2-CTA-cluster kernels) and .device-carry (baton-trace.xz: the traced CLI of ddbf4e9).
# Sections in priority order, each only if time is left before LIMIT (timeout - 30):
#  1. the swap-AB GPU tests (every SWAP_AB configuration, the new c2 ones included, vs f64 at
#     ragged shapes, split-K, stream-K, vs cuBLAS);
#  2. BF16 A/B, same binary, alternating: narrow swap-AB 64 / 128 alone against the same tile
#     in 2-CTA clusters sharing A (`--config 64x64-swapab` / `64x64c2-swapab`, `128x64-swapab` /
#     `128x64c2-swapab`), and the plan, at M = 32..128 rows of the BF16 sweep;
#  3. the swap-AB tests under compute-sanitizer (memcheck, racecheck, synccheck, initcheck);
#  4. FP8 timelines (`bench trace-gemm-fp8`) at issue #19's rows below 0.95 and two above;
#  5. session 31's call-second.sh FP8 part (low and long-K rows, forced kernels).
set -uo pipefail
O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
mkdir -p /tmp/b && tar -C /tmp/b -xJf .device-bundle.tar.xz
D=/tmp/b/.device-bundle; B=$D/bin/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
left 150 && { SUITE_TEST_TIMEOUT=120 timeout 150 bash tools/gpu-suite.sh $D swap_ab > $O/suite-swap-ab.txt 2>&1; echo "suite swap_ab rc=$? t=${SECONDS}s"; tail -12 $O/suite-swap-ab.txt; }
bf() { local name=$1 shapes=$2; shift 2; left 45 || { echo "skip $name"; return; }
  timeout 45 $B bench gemm --reps 21 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
S64=32x4104x2056,64x4104x2056,64x4096x4096,64x8192x1024,64x5000x4096,64x1024x4096,64x16384x4096
S128=128x4104x2056,128x4096x4096,128x5000x4096,128x8192x1024,128x1024x4096
bf n64-a $S64 --config 64x64-swapab --split-k 1
bf c64-a $S64 --config 64x64c2-swapab --split-k 1
bf n128-a $S128 --config 128x64-swapab --split-k 1
bf c128-a $S128 --config 128x64c2-swapab --split-k 1
bf plan-a $S64,$S128
bf c64-b $S64 --config 64x64c2-swapab --split-k 1
bf n64-b $S64 --config 64x64-swapab --split-k 1
bf c128-b $S128 --config 128x64c2-swapab --split-k 1
bf n128-b $S128 --config 128x64-swapab --split-k 1
left 130 && { SANITIZE_DEADLINE=80 SANITIZE_TEST_TIMEOUT=100 timeout 125 bash tools/gpu-suite.sh --sanitize $D swap_ab_matches_f64 > $O/sanitize-swap-ab.txt 2>&1; echo "sanitize swap_ab rc=$? t=${SECONDS}s"; tail -14 $O/sanitize-swap-ab.txt; }
if [ -f .device-carry/baton-trace.xz ]; then xz -dc .device-carry/baton-trace.xz > /tmp/baton-trace; chmod +x /tmp/baton-trace; fi
tr() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton-trace bench trace-gemm-fp8 --per-cta $O/$name.csv "$@" > $O/$name.txt 2>&1
  echo "$name rc=$? t=${SECONDS}s"; cat $O/$name.txt; }
LOWDG=64x32768x512,128x32768x512,64x7168x2048,128x7168x2048,128x2112x7168
tr trace-cold 80 --reps 21 $(args $LOWDG)
tr trace-hot 40 --reps 21 --hot $(args 64x32768x512,128x32768x512,64x7168x2048)
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim $B bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
P=baton_gemm_fp8_blockwise_
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
run low-plan 35 --reps 11 $(args $LOW)
run low-c2 35 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run lk-plan 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
run lk-c2-s4 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
run low-mca 35 --reps 11 --kernel ${P}256x128_mca $(args $LOW)
cd $OUT && tar czf r.tar.gz r && rm -rf r
