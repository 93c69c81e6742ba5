#!/usr/bin/env bash
# Session 25, call 6 (H200): issue #19's 20 shapes by DeepGEMM's method on
# the final FP8 code (359b5d1: 256x88 in the plan): ours vs cuBLASLt
# (`bench gemm-fp8 --flush-l2`, the anchor's shapes), then DeepGEMM itself
# (anchor run.py, --no-torch) in the same call. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
timeout 110 /tmp/baton bench gemm-fp8 --flush-l2 --json $O/ours.json > $O/ours.txt 2>&1; echo "ours rc=$? t=${SECONDS}s"; tail -3 $O/ours.txt
SH=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
cd $D/deepgemm && PYTHONUNBUFFERED=1 timeout 220 python3 run.py --shapes $SH --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1; echo "deepgemm rc=$? t=${SECONDS}s"; tail -4 $O/deepgemm.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
