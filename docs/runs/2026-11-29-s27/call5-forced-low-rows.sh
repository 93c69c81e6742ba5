#!/usr/bin/env bash
# Session 27, call 5 (H200): the rows of issue #19 still below 0.95 (and
# 64x4096x7168) on every existing kernel that could run them, forced, by
# DeepGEMM's method (`bench gemm-fp8 --flush-l2 --kernel K
# --fp8-split-k S`), main dff9c50's CLI; DeepGEMM on the same shapes in
# the same call. Data for the cost model: does the plan miss a faster
# kernel we already have?
set -uo pipefail
D=.lead-carry/s27e; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
ALL=64x7168x16384,64x32768x512,128x32768x512,64x4096x7168
LONG=64x7168x16384,64x4096x7168
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
run() { # kernel split shapes
  timeout 60 /tmp/baton bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$1 --fp8-split-k $2 $(args $3) --json $O/f-$1-s$2.json > $O/f-$1-s$2.txt 2>&1; echo "$1 split $2 rc=$? t=${SECONDS}s"; }
timeout 60 /tmp/baton bench gemm-fp8 --flush-l2 $(args $ALL) --json $O/plan.json > $O/plan.txt 2>&1; echo "plan rc=$? t=${SECONDS}s"
run 128x128_db 1 $ALL
run 128x128_db 2 $LONG
run 128x64_db 1 $ALL
run 128x64_db 2 $LONG
run 128x96_db 1 $ALL
run 128x32_db 1 $LONG
run 128x32_db 2 $LONG
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && timeout 60 python3 run.py --shapes $ALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
