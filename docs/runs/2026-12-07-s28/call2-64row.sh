#!/usr/bin/env bash
# Session 28, call 2: the 64-row FP8 kernels (64x128_db, 64x64_db, 64x56_db,
# 64x32_db; one consumer warpgroup, 256 threads; forced only) rebuilt from
# session 27's notes (its branch was lost). Their GPU test and the
# refusal test, then issue #19's M = 64/128 rows by DeepGEMM's method:
# the plan, each 64-row kernel forced, DeepGEMM, same call; last,
# compute-sanitizer (4 tools) on the 64-row test (BATON_SMALL) in the time
# left before LIMIT seconds (default 590). On an H100
# also the 8 large rows (ours and DeepGEMM), so the call gives all 20 of
# issue #19's rows on the issue's device.
set -uo pipefail
D=.lead-carry/s28c; O=$OUT/r; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in fp8_64_row fp8_stream_k_is_refused; do OUT="$O/$f" SUITE_TEST_TIMEOUT=120 timeout 130 bash tools/gpu-suite.sh $B $f > "$O/suite-$f.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$f/gpu-suite-summary.txt)"; grep -h "64-row\|FAIL\|panicked" $O/$f/gpu-suite.log 2>/dev/null | head -20; done
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
timeout 70 /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/plan.json > $O/plan.txt 2>&1; echo "plan rc=$? t=${SECONDS}s"
for kern in 64x32_db 64x56_db 64x64_db 64x128_db; do
  timeout 70 /tmp/baton bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$kern $(args $SMALL) --json $O/f-$kern.json > $O/f-$kern.txt 2>&1; echo "$kern rc=$? t=${SECONDS}s"; done
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
ALLS=$SMALL; grep -q H100 $O/gpu.txt && ALLS=$SMALL,$LARGE
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 150 python3 run.py --shapes $ALLS --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"
grep -q H100 $O/gpu.txt && { timeout 70 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours large rc=$? t=${SECONDS}s"; }
left=$((${LIMIT:-590}-SECONDS-20)); [ $left -gt 40 ] && { mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=$((left-15)) timeout $left bash tools/gpu-suite.sh --sanitize $B fp8_64_row > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -6 "$O/san/stdout.txt"; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
