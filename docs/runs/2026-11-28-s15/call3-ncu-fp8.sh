#!/usr/bin/env bash
# Session 15, call 3: why baton's FP8 GEMM trails DeepGEMM at M = 64/128 with few K blocks (issue #19).
# ncu (--clock-control none, default cache flush before each profiled launch) of DeepGEMM's kernel and
# baton's (through the Python op, its plan) in the anchor's runner at 4 shapes: 64x32768x512 (0.90),
# 128x32768x512 (0.93, same tiling as DeepGEMM), 64x4096x7168 (0.95, same tiling), 64x7168x2048 (0.93, DG BN=56).
# Carry: .lead-carry (wheel, deepgemm/). Writes $OUT/c.tar.gz.
set -uo pipefail
C=$PWD/.lead-carry; O0="${OUT:-/tmp}"; O="$O0/c"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/pyb && [ -d /tmp/pyb/baton ] || pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl
SH=64x32768x512,128x32768x512,64x4096x7168,64x7168x2048
EX=$PWD/python/bench/deepgemm_extra.py
cd $C/deepgemm
# Plain timing first (also fills the JIT cache).
PYTHONPATH=/tmp/pyb PYTHONUNBUFFERED=1 timeout 150 python3 run.py --shapes $SH --no-torch --extra $EX > "$O/timing.txt" 2>&1
echo "timing rc=$? t=${SECONDS}s"; grep -E "^(deepgemm|baton_py) " "$O/timing.txt" | cut -c1-120
# One profiled launch per kernel and shape: warmup 1, reps 1; the first matching launches are
# DG's check, warm-up and timed call, then baton_py's, then baton_py_torch_sa's, per shape.
PYTHONPATH=/tmp/pyb timeout 300 ncu --clock-control none --set full --import-source no \
  -k regex:'fp8_gemm|baton_gemm_fp8' -c 40 -o "$O/prof" -f \
  python3 run.py --shapes $SH --no-torch --extra $EX --warmup 1 --reps 1 --max-sets 1 > "$O/ncu-run.txt" 2>&1
echo "ncu rc=$? t=${SECONDS}s"; tail -3 "$O/ncu-run.txt"
ncu -i "$O/prof.ncu-rep" --page details --csv > "$O/details.csv" 2>/dev/null
ncu -i "$O/prof.ncu-rep" --page raw --csv > "$O/raw.csv" 2>/dev/null
ls -la "$O"; date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf c.tar.gz c && rm -rf c
