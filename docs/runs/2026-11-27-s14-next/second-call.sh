#!/usr/bin/env bash
# Session 14's plan for a second device call (same carry as first-call.sh, bundle of merged main),
# about 9 minutes, timeout_s 600:
#  1. racecheck + memcheck of the d128xt experiment's gpu_attention;
#  2. DeepGEMM's harness at small-M / long-K shapes with baton's Python path (split-K now) as --extra,
#     in DeepGEMM's scale layout and in torch's (the padded copy at M not a multiple of 4);
#  3. calibration rows for the BF16 cost model at few tiles with long K (#18: 256×1024×32768 runs
# 128x64 split 4 at 0.72 of cuBLAS; the model predicts 40 µs for it, it measured 56 µs, and it
# scores 128x128 split 8 at 42.6 µs: math 24.6, DRAM 29.1, L2 23.1, fix-up 13.5). One shape per
# invocation (an invocation stops at its first plan the runtime refuses); each invocation also runs
# the CLI's verification first (a few seconds). 27 invocations, about 4-5 minutes.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/b"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton
mkdir -p /tmp/xp && [ -x /tmp/xp/gpu_attention-d128xt ] || tar xJf $C/exp.tar.xz -C /tmp/xp
for tool in racecheck memcheck; do
  BATON_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 /tmp/xp/gpu_attention-d128xt --test-threads=1 > "$O/san-d128xt-$tool.txt" 2>&1
  echo "d128xt $tool rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/san-d128xt-$tool.txt" | tail -2
done
mkdir -p /tmp/pyb && [ -d /tmp/pyb/baton ] || pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl
(cd $C/deepgemm && PYTHONPATH=/tmp/pyb PYTHONUNBUFFERED=1 timeout 200 python3 run.py \
  --shapes 66x512x8192,130x1024x8192,64x1024x32768,128x1024x32768,64x2112x7168,64x7168x2048,128x7168x16384 \
  --extra ../../python/bench/deepgemm_extra.py --json "$O/deepgemm-small-m.json" > "$O/deepgemm-small-m.txt" 2>&1)
echo "deepgemm small-M rc=$? t=${SECONDS}s"; grep -E "baton|deepgemm|torch" "$O/deepgemm-small-m.txt" | tail -30 | cut -c1-140
row() { # shape [config split]
  local shape=$1; shift
  local args=(); [ $# -ge 2 ] && args=(--config "$1" --split-k "$2")
  timeout 40 $BATON bench gemm --shape "$shape" --reps 15 "${args[@]}" --chart /tmp/x.png 2>&1 \
    | tr '\r' '\n' | grep -E "^$shape|refus|error" | sed "s|^|[${*:-plan}] |"
}
for s in 256x1024x32768 512x1024x32768 128x1024x32768; do
  row $s
  for cs in "128x128 8" "128x256 16" "128x256 8" "128x128c2 8"; do row $s $cs; done
done
for s in 256x1024x4096 512x1024x4096 1024x1024x4096; do
  row $s
  for cs in "128x128 4" "128x256 4" "128x64 1"; do row $s $cs; done
done
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf b.tar.gz b && rm -rf b
