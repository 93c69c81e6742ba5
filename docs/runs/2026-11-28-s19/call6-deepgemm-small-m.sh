#!/usr/bin/env bash
# Session 19, call 6 (H200): issue #19's M = 64/128 shapes in DeepGEMM's harness (anchor run.py, L2
# flushed, median of 50, BATON_PDL=0): DeepGEMM, then baton new (9385ce1: unit-by-unit split-K,
# GPU-scope flags), base (session 18's final wheel), new. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0; export BATON_PDL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
rm -rf /tmp/wbase /tmp/wnew; mkdir -p /tmp/wbase /tmp/wnew
python3 -m zipfile -e $D/base/baton-0.1.0-cp39-abi3-linux_x86_64.whl /tmp/wbase; python3 -m zipfile -e $D/baton-0.1.0-cp39-abi3-linux_x86_64.whl /tmp/wnew
SH=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
EX=$PWD/python/bench/deepgemm_extra.py
cd .lead-carry/deepgemm; i=0
for v in new base new; do
  i=$((i+1)); extra=(--no-deepgemm); [ $i = 1 ] && extra=()
  PYTHONPATH=/tmp/w$v PYTHONUNBUFFERED=1 timeout 170 python3 run.py --shapes $SH --no-torch "${extra[@]}" --extra $EX --json "$O/run$i-$v.json" > "$O/run$i-$v.txt" 2>&1
  echo "run$i $v rc=$? t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
