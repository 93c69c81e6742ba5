#!/usr/bin/env bash
# Session 27, call 3 (H200): main dff9c50 (256x128_mca_3stage in the plan
# up to K = 2048): issue #19's 20 shapes by DeepGEMM's method (ours and
# cuBLASLt: `bench gemm-fp8 --flush-l2`; DeepGEMM: anchor run.py
# --no-torch), same call; `gpu_gemm_fp8`; compute-sanitizer (4 tools) on
# the A-multicast test (BATON_SMALL: 300x392x256 and 1024x4352x128, two
# units per cluster, on the three A-multicast kernels).
set -uo pipefail
D=.lead-carry/s27c; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/new.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
timeout 110 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours large rc=$? t=${SECONDS}s"
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 150 python3 run.py --shapes $SMALL,$LARGE --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"
timeout 110 /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/ours-small.json > $O/ours-small.txt 2>&1; echo "ours small rc=$? t=${SECONDS}s"
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 150 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=140 timeout 170 bash tools/gpu-suite.sh --sanitize $B fp8_a_multicast > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -6 "$O/san/stdout.txt"
cd $OUT && tar czf r.tar.gz r && rm -rf r
