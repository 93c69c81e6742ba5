#!/usr/bin/env bash
# Session 26, call 4 (H200): issue #19's 20 shapes by DeepGEMM's method on
# the final code (A multicast wherever the tile columns pair, 256x88_mca in
# the plan): ours vs cuBLASLt (`bench gemm-fp8 --flush-l2`, in two halves),
# DeepGEMM itself (anchor run.py, --no-torch) in the same call; FP8 GPU
# tests and compute-sanitizer on the A-multicast test. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s26; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
timeout 150 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours large rc=$? t=${SECONDS}s"
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 220 python3 run.py --shapes $SMALL,$LARGE --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; tail -3 $O/deepgemm.txt
timeout 150 /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/ours-small.json > $O/ours-small.txt 2>&1; echo "ours small rc=$? t=${SECONDS}s"
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
cd $OUT && tar czf r.tar.gz r && rm -rf r
