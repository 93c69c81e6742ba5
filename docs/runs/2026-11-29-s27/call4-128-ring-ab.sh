#!/usr/bin/env bash
# Session 27, call 4 (H200): the 128-row kernels' whole-tile D rings
# (a22c6b9: 128x128_db_4stage in the plan up to K = 2048; 128x96_db with a
# ring of 4; 128x64_db / 128x96_db / 128x128_db_4stage storing a tile as
# one batch, `store_pipelined`) against dff9c50, by DeepGEMM's method
# (`bench gemm-fp8 --flush-l2`, the library's plans): issue #19's 12 small
# rows base, new; the 6 rows whose plan changed new, base again; forced
# 128x128_db against 128x128_db_4stage (new CLI) at K = 512 … 4096 outside
# the issue; `gpu_gemm_fp8`; compute-sanitizer on the half-empty-tile test
# (BATON_SMALL: 128x64 and 128x128_db_4stage, CTAs walking 2-3 tiles).
set -uo pipefail
D=.lead-carry/s27d; O=$OUT/r; mkdir -p $O; SECONDS=0
for v in base new; do xz -dc $D/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
CHANGED=64x24576x1536,64x32768x512,64x7168x2048,128x24576x1536,128x32768x512,128x7168x2048
FORCED=256x16384x512,1024x8192x1024,2048x7168x2048,1024x8192x3072,2048x4096x4096
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
for v in base new; do timeout 110 /tmp/$v bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/small-$v.json > $O/small-$v.txt 2>&1; echo "small $v rc=$? t=${SECONDS}s"; done
for v in new base; do timeout 60 /tmp/$v bench gemm-fp8 --flush-l2 $(args $CHANGED) --json $O/changed-$v.json > $O/changed-$v.txt 2>&1; echo "changed $v rc=$? t=${SECONDS}s"; done
for kk in 128x128_db 128x128_db_4stage; do timeout 60 /tmp/new bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$kk $(args $FORCED) --json $O/forced-$kk.json > $O/forced-$kk.txt 2>&1; echo "forced $kk rc=$? t=${SECONDS}s"; done
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 150 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=90 timeout 110 bash tools/gpu-suite.sh --sanitize $B fp8_half_empty > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -5 "$O/san/stdout.txt"
cd $OUT && tar czf r.tar.gz r && rm -rf r
