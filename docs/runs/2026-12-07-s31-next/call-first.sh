#!/usr/bin/env bash
# Prepared in session 31 for the next session's first device call. $D is a device bundle
# (tools/make-device-bundle.sh $D: bin/baton + the GPU test executables; see README.md here for
# keeping it under the carry limit) with a copy of ../shared/anchors/deepgemm at $D/deepgemm and,
# optionally, $D/baton-stm.xz (main + stmatrix-epilogue.patch). Sections in priority order,
# each only if time is left before LIMIT (seconds; set it to the call's timeout − 30):
#  1. the GPU suite's FP8 tests on main (the overlapped FP8 finalizer landed in session 31
#     without them: ragged shapes, split-K, the c2 kernel);
#  2. issue #19's 12 small rows, DeepGEMM and ours (12 rows + verify take > 75 s on the H100);
#  3. issue #19's 8 large rows, DeepGEMM and ours (last on the H100 in session 28);
#  4. the BF16 sweep on the H100 (not run since session 28; ping-pong L2 rule since session 29);
#  5. the FP8 split rows of the cost model's finalizer fit, with the overlapped finalizer;
#  6. optional: the stmatrix epilogue A/B on the issue-#6 BF16 set.
set -uo pipefail
D=${D:-.device-bundle}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
B=$D/bin/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim $B bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
dg() { local name=$1 shapes=$2 lim=$3; left $lim || { echo "skip $name"; return; }
  (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout $lim python3 run.py --shapes $shapes --no-torch --json $O/$name.json > $O/$name.txt 2>&1)
  echo "$name rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/$name.txt | awk '{print $2, $3}'; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
left 200 && { SUITE_TEST_TIMEOUT=60 timeout 200 bash tools/gpu-suite.sh $D fp8 > $O/suite-fp8.txt 2>&1; echo "suite fp8 rc=$? t=${SECONDS}s"; tail -25 $O/suite-fp8.txt; }
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
dg dg-small $SMALL 45
run small 130 --flush-l2 $(args $SMALL)
# Added in session 32: the FP8 tests under compute-sanitizer (a57cbb3 has not run under it).
left 150 && { SANITIZE_DEADLINE=90 SANITIZE_TEST_TIMEOUT=110 timeout 140 bash tools/gpu-suite.sh --sanitize $D fp8 > $O/sanitize-fp8.txt 2>&1; echo "sanitize fp8 rc=$? t=${SECONDS}s"; tail -30 $O/sanitize-fp8.txt; }
dg dg-large $LARGE 60
run large 90 --flush-l2 $(args $LARGE)
left 150 && { timeout 150 $B bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt; }
# The FP8 split rows the cost model's finalizer fit uses (fp8.rs tests QUEUED_SPLIT_ROWS and
# FLUSHED_ROWS), re-measured with the overlapped finalizer (branch s31-fp8-finalizer-model
# lands after a refit to these).
P=baton_gemm_fp8_blockwise_
fq() { run q-$1-s$2 30 --reps 11 --kernel $P$1 --fp8-split-k $2 $(args $3); }
fl() { run f-$1-s$2 35 --flush-l2 --kernel $P$1 --fp8-split-k $2 $(args $3); }
fq 128x64_db 7 8x1024x32768,32x1024x32768
fq 128x32_db 4 64x1024x32768,128x1024x32768,8x1024x4096,32x1024x4096,64x1024x4096,128x1024x4096
fq 128x64_db 4 256x1024x32768; fq 128x128_db 4 512x1024x32768; fq 128x32_db 2 256x1024x4096
fl 128x128_db 4 512x1024x32768; fl 128x64_db 2 512x1024x32768; fl 128x64_db 4 256x1024x32768,64x2112x7168,128x2112x7168
fl 128x128_db 8 256x1024x32768; fl 128x64_db 8 32x1024x32768; fl 128x32_db 4 32x1024x32768; fl 128x128_db 16 32x1024x32768
fl 128x32_db 2 64x2112x7168,128x2112x7168; fl 128x64_db 2 64x4096x7168,128x4096x7168
fl 256x128_sk 8 512x1024x32768; fl 256x128_sk 16 256x1024x32768
if [ -f $D/baton-stm.xz ]; then xz -dc $D/baton-stm.xz > /tmp/baton-stm; chmod +x /tmp/baton-stm
  for b in $B /tmp/baton-stm /tmp/baton-stm $B; do left 70 && { n=$(basename $b)-$SECONDS; timeout 65 $b bench gemm --json $O/set6-$n.json --chart /tmp/c.png > $O/set6-$n.txt 2>&1; echo "set6 $n rc=$? t=${SECONDS}s"; grep -E 'FAIL|geometric' $O/set6-$n.txt; }; done; fi
cd $OUT && tar czf r.tar.gz r && rm -rf r
