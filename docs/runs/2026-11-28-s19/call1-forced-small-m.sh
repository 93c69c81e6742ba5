#!/usr/bin/env bash
# Session 19, call 1 (H200): the small-M BF16 rows of the sweep (#18's rows below 0.90), every
# candidate configuration forced at split counts 1-8, each row with cuBLAS in the same process
# (`bench gemm --config C --split-k S`, cold input sets). Which plan is best per shape, and how far
# the heuristic's pick is from it. Then the traced CLI, cold vs --hot (operands L2-resident), at two
# shapes (next step 2 of session 18: first-stage latency = descriptor fetch or DRAM?). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
shapes() { for m in "$@"; do for nk in $NK; do echo -n " --shape ${m}x$nk"; done; done; }
# Only the shapes where a forced split is allowed (units · splits ≤ 132, splits ≤ K/64): the bench
# refuses the whole list otherwise.
valid() { # bm bn splits shapes... -> the --shape args allowed
  local bm=$1 bn=$2 s=$3; shift 3
  for m in "$@"; do for nk in $NK; do n=${nk%x*}; k=${nk#*x}
    u=$(( ((m + bm - 1) / bm) * ((n + bn - 1) / bn) ))
    [ $((u * s)) -le 132 ] && [ $s -le $((k / 64)) ] && echo -n " --shape ${m}x$nk"; done; done; }
run() { # config bm bn splits shapes...
  local c=$1 bm=$2 bn=$3 s=$4; shift 4; local a; a=$(valid $bm $bn $s "$@")
  [ -n "${SPLITS_ONLY:-}" ] && [ $s = 1 ] && return  # (SPLITS_ONLY=1: the rerun of call 1b)
  [ -z "$a" ] && { echo "$c s$s: no shape"; return; }
  timeout 100 /tmp/b/baton bench gemm --reps 15 --config $c --split-k $s $a > $O/f-$c-s$s.txt 2>&1
  echo "$c s$s rc=$? t=${SECONDS}s"; }
[ -n "${SPLITS_ONLY:-}" ] || timeout 100 /tmp/b/baton bench gemm --reps 15 $(shapes 1 8 32 64 128 256) > $O/f-heuristic.txt 2>&1; echo "heuristic rc=$? t=${SECONDS}s"
for s in 1 2 3 4 5 8; do run 16x128-swapab 16 128 $s 1 8; done
for s in 1 2 3 4 5 8; do run 32x128-swapab 32 128 $s 32; done
for s in 1 2 3 4 5 8; do run 64x128-swapab 64 128 $s 64; done
for s in 1 2 3 4 8; do run 128x64 128 64 $s 8 32 64 128 256; done
for s in 1 2 4 8; do run 128x128 128 128 $s 64 128 256; done
[ -z "${SPLITS_ONLY:-}" ] && [ $SECONDS -lt 480 ] && { T="--shape 1024x1024x4096 --shape 64x4104x2056 --shape 1x1024x4096"
  timeout 40 /tmp/b/baton-trace bench trace-gemm $T --reps 15 > $O/trace-cold.txt 2>&1; echo "trace cold rc=$? t=${SECONDS}s"
  timeout 40 /tmp/b/baton-trace bench trace-gemm $T --reps 15 --hot > $O/trace-hot.txt 2>&1; echo "trace hot rc=$? t=${SECONDS}s"; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
