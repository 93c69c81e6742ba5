#!/usr/bin/env bash
# Session 32, a short last call (call 2 never got a machine): the swap-AB tests with the 4-CTA
# cluster kernel, then forced A/Bs, same binary, alternating: the two plans that the cost
# model's MISALIGNED_IN_FLIGHT moves (1x4104x2056 narrow 16 whole -> split 2; 64x4104x2056
# 128-row swap-AB -> narrow 64), the 4-CTA cluster tile against narrow 64, and narrow 32 with 12
# stages (baton-narrow12.xz) against 16. Carry .device-carry. LIMIT = timeout - 20.
set -uo pipefail
O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-280}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
mkdir -p /tmp/b && tar -C /tmp/b -xJf .device-carry/bundle2.tar.xz
D=/tmp/b/.device-bundle; B=$D/bin/baton
xz -dc .device-carry/baton-narrow12.xz > /tmp/baton-n12; chmod +x /tmp/baton-n12
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
head -1 $D/BUILD-INFO; echo "unpacked t=${SECONDS}s"
left 60 && { SUITE_TEST_TIMEOUT=50 timeout 60 bash tools/gpu-suite.sh $D swap_ab_matches > $O/suite-swap-ab.txt 2>&1; echo "suite swap_ab rc=$? t=${SECONDS}s"; grep -E "^(PASS|FAIL)|total" $O/suite-swap-ab.txt | tail -4; }
bx() { local bin=$1 name=$2 shapes=$3; shift 3; left 25 || { echo "skip $name"; return; }
  timeout 25 $bin bench gemm --reps 31 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
bx $B m1s1-a 1x4104x2056,8x4104x2056 --config 16x64-swapab --split-k 1
bx $B m1s2-a 1x4104x2056,8x4104x2056 --config 16x64-swapab --split-k 2
bx $B m64o-a 64x4104x2056 --config 64x128-swapab --split-k 1
bx $B m64n-a 64x4104x2056 --config 64x64-swapab --split-k 1
bx $B m64n-b 64x4104x2056 --config 64x64-swapab --split-k 1
bx $B m64o-b 64x4104x2056 --config 64x128-swapab --split-k 1
bx $B m1s2-b 1x4104x2056,8x4104x2056 --config 16x64-swapab --split-k 2
bx $B m1s1-b 1x4104x2056,8x4104x2056 --config 16x64-swapab --split-k 1
S64=64x4104x2056,64x4096x4096,64x8192x1024
bx $B q64-a $S64 --config 64x64c4-swapab --split-k 1
bx $B n64-a $S64 --config 64x64-swapab --split-k 1
S32=32x4104x2056,32x4096x4096,32x8192x1024
bx $B n32s16-a $S32 --config 32x64-swapab --split-k 1
bx /tmp/baton-n12 n32s12-a $S32 --config 32x64-swapab --split-k 1
bx /tmp/baton-n12 n32s12-b $S32 --config 32x64-swapab --split-k 1
bx $B n32s16-b $S32 --config 32x64-swapab --split-k 1
