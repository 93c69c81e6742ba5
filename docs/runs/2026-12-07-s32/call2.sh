#!/usr/bin/env bash
# Session 32, second device call. .device-carry holds bundle2.tar.xz (make-device-bundle.sh,
# BUNDLE_TESTS='gpu_gemm_swap_ab', main with the cost model's MISALIGNED_IN_FLIGHT and the
# swap-AB 4-CTA-cluster kernel) and baton-trace.xz (the traced CLI). Sections in priority
# order, each only if time is left before LIMIT (timeout - 30):
#  1. the swap-AB GPU tests (the 4-CTA cluster kernel is new; the 2-CTA ones passed in call 1);
#  2. the plans MISALIGNED_IN_FLIGHT moves, against the plans they replace, same binary,
#     alternating: 1x4104x2056 (narrow 16 whole -> split 2), 64x4104x2056 (128-row swap-AB ->
#     narrow 64), with the unmoved K = 2056 rows beside them; 32x4104x2056 narrow 64 forced;
#  3. narrow 32 with 12 stages (baton-narrow12.xz) against 16, forced;
#  3b. the 4-CTA cluster tile against the narrow 64 one (call 1: 2-CTA clusters were slower at
#     5 of 6 rows);
#  4. FP8 timelines with L2-resident operands; 5. session 31's FP8 low / long-K forced rows.
set -uo pipefail
O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
mkdir -p /tmp/b && tar -C /tmp/b -xJf .device-carry/bundle2.tar.xz
D=/tmp/b/.device-bundle; B=$D/bin/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
head -1 $D/BUILD-INFO; echo "unpacked t=${SECONDS}s"
left 100 && { SUITE_TEST_TIMEOUT=80 timeout 100 bash tools/gpu-suite.sh $D swap_ab > $O/suite-swap-ab.txt 2>&1; echo "suite swap_ab rc=$? t=${SECONDS}s"; tail -8 $O/suite-swap-ab.txt; }
bf() { local name=$1 shapes=$2; shift 2; left 40 || { echo "skip $name"; return; }
  timeout 40 $B bench gemm --reps 31 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
R=1x4104x2056,8x4104x2056,32x4104x2056,64x4104x2056,128x4104x2056
bf plan-a $R
bf old1-a 1x4104x2056 --config 16x64-swapab --split-k 1
bf old64-a 64x4104x2056 --config 64x128-swapab --split-k 1
bf n64at32-a 32x4104x2056 --config 64x64-swapab --split-k 1
bf old64-b 64x4104x2056 --config 64x128-swapab --split-k 1
bf old1-b 1x4104x2056 --config 16x64-swapab --split-k 1
bf plan-b $R
# Narrow 16 / 32 with 12 stages instead of 16 (baton-narrow12.xz: MAX_NARROW_STAGES = 12, else
# this bundle's CLI), forced, alternating with the bundle's CLI.
if [ -f .device-carry/baton-narrow12.xz ]; then xz -dc .device-carry/baton-narrow12.xz > /tmp/baton-n12; chmod +x /tmp/baton-n12; fi
bx() { local bin=$1 name=$2 shapes=$3; shift 3; left 40 || { echo "skip $name"; return; }
  timeout 40 $bin bench gemm --reps 31 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
S32=32x4104x2056,32x4096x4096,32x5000x4096,32x8192x1024
bx $B n32s16-a $S32 --config 32x64-swapab --split-k 1
bx /tmp/baton-n12 n32s12-a $S32 --config 32x64-swapab --split-k 1
bx /tmp/baton-n12 n32s12-b $S32 --config 32x64-swapab --split-k 1
bx $B n32s16-b $S32 --config 32x64-swapab --split-k 1
S64=32x4104x2056,64x4104x2056,64x4096x4096,64x8192x1024,64x5000x4096,64x16384x4096
bf n64-a $S64 --config 64x64-swapab --split-k 1
bf q64-a $S64 --config 64x64c4-swapab --split-k 1
bf q64-b $S64 --config 64x64c4-swapab --split-k 1
bf n64-b $S64 --config 64x64-swapab --split-k 1
if [ -f .device-carry/baton-trace.xz ]; then xz -dc .device-carry/baton-trace.xz > /tmp/baton-trace; chmod +x /tmp/baton-trace; fi
tr() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton-trace bench trace-gemm-fp8 --per-cta $O/$name.csv "$@" > $O/$name.txt 2>&1
  echo "$name rc=$? t=${SECONDS}s"; cat $O/$name.txt; }
tr trace-hot 50 --reps 21 --hot $(args 64x32768x512,128x32768x512,64x7168x2048)
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim $B bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
P=baton_gemm_fp8_blockwise_
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
run low-plan 35 --reps 11 $(args $LOW)
run low-c2 35 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run lk-plan 25 --reps 11 $(args 256x1024x32768,384x1024x32768,512x1024x32768)
run lk-c2-s4 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
cd $OUT && tar czf r.tar.gz r && rm -rf r
