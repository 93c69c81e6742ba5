#!/usr/bin/env bash
# Session 27, call 2 (H200): the 256-row kernels with a whole tile of D
# staging (256x128 and 256x128_mca: 3 stages + a ring of 8 sub-tiles per
# warpgroup; 256x88(_mca): 4 stages + a ring of 4; `store_pipelined`)
# against main 5f2be26 (4 stages, rings of 2), by DeepGEMM's method
# (`bench gemm-fp8 --flush-l2`, the library's plans), alternating
# base/new/new/base on issue #19's 8 large shapes, one pass each on 6
# shapes outside it; then `gpu_gemm_fp8` on the new bundle.
set -uo pipefail
D=.lead-carry/s27b; O=$OUT/r; mkdir -p $O; SECONDS=0
for v in base new; do xz -dc $D/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
EXTRA=2048x7168x2048,6144x6144x6144,4096x2112x4096,8192x4096x512,3072x6144x1536,4096x14336x4096
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
i=0; for v in base new new base; do i=$((i+1))
  timeout 110 /tmp/$v bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/large-$i-$v.json > $O/large-$i-$v.txt 2>&1; echo "large $i $v rc=$? t=${SECONDS}s"; done
for v in base new; do
  timeout 100 /tmp/$v bench gemm-fp8 --flush-l2 $(args $EXTRA) --json $O/extra-$v.json > $O/extra-$v.txt 2>&1; echo "extra $v rc=$? t=${SECONDS}s"; done
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 180 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
cd $OUT && tar czf r.tar.gz r && rm -rf r
