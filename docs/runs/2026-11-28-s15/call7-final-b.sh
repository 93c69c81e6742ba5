#!/usr/bin/env bash
# Session 15 final call B (same bundle and wheel as call A): issue #19's 20 shapes in DeepGEMM's harness
# (DeepGEMM, torch blockwise, baton_py in DeepGEMM's scale layout and in torch's), the BF16 sweep and the FP8
# sweep (each library its own cold inputs). Writes $OUT/g.tar.gz.
set -uo pipefail
C=$PWD/.lead-carry; O0="${OUT:-/tmp}"; O="$O0/g"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton; echo "$(head -1 /tmp/fb/.final-bundle/BUILD-INFO)"
filt() { tr '\r' '\n' | grep -v '^\[' ; }
mkdir -p /tmp/pyb && [ -d /tmp/pyb/baton ] || pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl
(cd $C/deepgemm && PYTHONPATH=/tmp/pyb PYTHONUNBUFFERED=1 timeout 200 python3 run.py --extra $PWD/../../python/bench/deepgemm_extra.py --json "$O/deepgemm.json" > "$O/deepgemm.txt" 2>&1; echo "deepgemm rc=$?" >> "$O/deepgemm.txt")
echo "deepgemm t=${SECONDS}s"; tail -28 "$O/deepgemm.txt" | cut -c1-170
for r in 1 2; do for cfg in plan 128x128-pingpong; do
  a=(); [ $cfg != plan ] && a=(--config $cfg)
  timeout 30 $BATON bench gemm --shape 256x7168x16384 --reps 15 "${a[@]}" --chart /tmp/x.png 2>&1 | tr '\r' '\n' | grep -E "^256x7168x16384|refus|rror" | sed "s|^|[$cfg] |"
done; done > "$O/bf16-256x7168x16384.txt"
echo "256x7168x16384 t=${SECONDS}s"; cat "$O/bf16-256x7168x16384.txt" | cut -c1-150
timeout 150 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | filt > "$O/gemm-sweep.txt"
echo "bf16 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL|x1024x32768" "$O/gemm-sweep.txt" | cut -c1-150
timeout $((590 - SECONDS)) $BATON bench gemm-fp8 --sweep --json "$O/gemm-fp8-sweep.json" --heatmap "$O/fp8-sweep.png" 2>&1 | filt > "$O/gemm-fp8-sweep.txt"
echo "fp8 sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL" "$O/gemm-fp8-sweep.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf g.tar.gz g && rm -rf g
