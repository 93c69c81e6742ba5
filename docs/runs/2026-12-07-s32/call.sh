#!/usr/bin/env bash
# Session 32's first device call (rewritten while its requests were refused, so that one call
# does what matters most). .device-carry holds bundle2.tar.xz (make-device-bundle.sh,
# BUNDLE_TESTS='gpu_gemm_swap_ab|gpu_gemm_fp8$', at db5a4c3: main's FP8 kernels and the new
# swap-AB 2- and 4-CTA-cluster kernels), deepgemm (the anchor) and baton-trace.xz (the traced CLI).
# Sections in priority order, each only if time is left before LIMIT (timeout - 30):
#  1. the GPU suite's FP8 tests (the overlapped FP8 finalizer, a57cbb3, has not run them);
#  2. the swap-AB GPU tests (the new c2 kernels: f64 at ragged shapes, split-K, stream-K, cuBLAS);
#  3. BF16 A/B, one binary: narrow swap-AB alone against the same tile in 2- and 4-CTA clusters
#     sharing A, at M = 32..128 rows of the sweep, two passes in reverse order;
#  4. FP8 timelines at issue #19's low rows; 5. DeepGEMM and ours at the 12 small rows;
#  6. the swap-AB and FP8 tests under compute-sanitizer; 7. the BF16 sweep.
set -uo pipefail
O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
mkdir -p /tmp/b && tar -C /tmp/b -xJf .device-carry/bundle2.tar.xz
D=/tmp/b/.device-bundle; B=$D/bin/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
echo "unpacked t=${SECONDS}s"
left 150 && { SUITE_TEST_TIMEOUT=100 timeout 150 bash tools/gpu-suite.sh $D gpu_gemm_fp8 > $O/suite-fp8.txt 2>&1; echo "suite fp8 rc=$? t=${SECONDS}s"; tail -22 $O/suite-fp8.txt; }
left 120 && { SUITE_TEST_TIMEOUT=100 timeout 120 bash tools/gpu-suite.sh $D swap_ab > $O/suite-swap-ab.txt 2>&1; echo "suite swap_ab rc=$? t=${SECONDS}s"; tail -12 $O/suite-swap-ab.txt; }
bf() { local name=$1 shapes=$2; shift 2; left 40 || { echo "skip $name"; return; }
  timeout 40 $B bench gemm --reps 21 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
S64=32x4104x2056,64x4104x2056,64x4096x4096,64x8192x1024,64x5000x4096,64x16384x4096
S128=128x4104x2056,128x4096x4096,128x5000x4096,128x8192x1024
bf n64-a $S64 --config 64x64-swapab --split-k 1
bf c64-a $S64 --config 64x64c2-swapab --split-k 1
bf q64-a $S64 --config 64x64c4-swapab --split-k 1
bf n128-a $S128 --config 128x64-swapab --split-k 1
bf c128-a $S128 --config 128x64c2-swapab --split-k 1
bf q64-b $S64 --config 64x64c4-swapab --split-k 1
bf c64-b $S64 --config 64x64c2-swapab --split-k 1
bf n64-b $S64 --config 64x64-swapab --split-k 1
if [ -f .device-carry/baton-trace.xz ]; then xz -dc .device-carry/baton-trace.xz > /tmp/baton-trace; chmod +x /tmp/baton-trace; fi
tr() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton-trace bench trace-gemm-fp8 --per-cta $O/$name.csv "$@" > $O/$name.txt 2>&1
  echo "$name rc=$? t=${SECONDS}s"; cat $O/$name.txt; }
tr trace-cold 70 --reps 21 $(args 64x32768x512,128x32768x512,64x7168x2048,128x2112x7168)
rm -rf /tmp/dga && cp -r .device-carry/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
dg() { local name=$1 shapes=$2 lim=$3; left $lim || { echo "skip $name"; return; }
  (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout $lim python3 run.py --shapes $shapes --no-torch --json $O/$name.json > $O/$name.txt 2>&1)
  echo "$name rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/$name.txt | awk '{print $2, $3}'; }
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim $B bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
dg dg-small $SMALL 45
run small 120 --flush-l2 $(args $SMALL)
left 130 && { SANITIZE_DEADLINE=80 SANITIZE_TEST_TIMEOUT=100 timeout 125 bash tools/gpu-suite.sh --sanitize $D swap_ab_matches_f64 > $O/sanitize-swap-ab.txt 2>&1; echo "sanitize swap_ab rc=$? t=${SECONDS}s"; tail -14 $O/sanitize-swap-ab.txt; }
left 130 && { SANITIZE_DEADLINE=80 SANITIZE_TEST_TIMEOUT=100 timeout 125 bash tools/gpu-suite.sh --sanitize $D gpu_gemm_fp8 > $O/sanitize-fp8.txt 2>&1; echo "sanitize fp8 rc=$? t=${SECONDS}s"; tail -20 $O/sanitize-fp8.txt; }
left 150 && { timeout 150 $B bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
