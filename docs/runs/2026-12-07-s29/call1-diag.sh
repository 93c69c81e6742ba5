#!/usr/bin/env bash
# Session 29, call 1 (H100 wanted): branch s29-s4 = main + three
# experiment kernels with 4 stages (64x128_db_s4, 64x64_db_s4,
# 128x128_db_s4, 128x96_db_s4: a quarter to a third of the unrolled K loop's copies;
# DeepGEMM runs 4 stages at K = 512) and a bench-only change (a forced
# FP8 run verifies only the forced kernel, vs f64). nvidia-smi logs SM
# clock, power, temperature and clock-event reasons every 100 ms through
# the whole call (it never changes them). In order, each section only if
# time is left before LIMIT (default 560 s):
#  1. FP8 by DeepGEMM's method, the small rows: each base kernel and its
#     4-stage twin forced; DeepGEMM on the same rows.
#  2. ncu (--clock-control none) of ours (forced) and DeepGEMM's kernel at
#     64x32768x512 and 64x7168x16384.
#  3. BF16 65536x8192x1024 and 16384x8192x1024: the plan (ping-pong) and
#     the cooperative 128x256c2 / 256x128c2 forced, ours and cuBLAS in one
#     process each (throttling check with the smi log).
#  4. BF16 K = 2056 at M = 64 and 1: swap-AB forced with split-K 1/2/4,
#     beside N x K = 4096 x 2048.
#  5. FP8 8192^3 and 4096x7168x16384: 256x128_mca and _mca_3stage forced.
set -uo pipefail
D=.lead-carry/s29a; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $O/smi.csv 2>&1 &
SMI=$!
mark() { echo "MARK $1 $(date -u +%T.%N) t=${SECONDS}s" | tee -a $O/marks.txt; }
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
S=64x32768x512,128x32768x512,64x7168x2048,64x4096x7168,64x24576x1536,128x24576x1536,128x7168x2048
for k in 64x128_db 64x128_db_s4 64x64_db 64x64_db_s4 128x128_db 128x128_db_s4 128x96_db 128x96_db_s4; do
  left 60 || break; mark "fp8-$k"
  timeout 50 /tmp/baton bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$k $(args $S) --json $O/f-$k.json > $O/f-$k.txt 2>&1
  echo "fp8 $k rc=$? t=${SECONDS}s"; grep -E '^\| [0-9]|FAIL' $O/f-$k.txt; done
left 60 && { mark deepgemm; (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 60 python3 run.py --shapes $S --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt; }
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
NS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
for sk in 64x32768x512:64x128_db 64x7168x16384:64x64_db; do s=${sk%:*}; k=${sk#*:}
  left 70 || break
  mark "ncu-ours-$s"; timeout 45 $NCU --clock-control none -k regex:baton_gemm_fp8_blockwise_$k --launch-skip 20 --launch-count 1 $NS /tmp/baton bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$k --shape $s > $O/ncu-ours-$s.txt 2>&1; echo "ncu ours $s rc=$? t=${SECONDS}s"
  mark "ncu-dg-$s"; (cd /tmp/dga && timeout 45 $NCU --clock-control none -k regex:fp8 --launch-skip 12 --launch-count 1 $NS python3 run.py --shapes $s --no-torch --reps 5 > $O/ncu-dg-$s.txt 2>&1); echo "ncu dg $s rc=$? t=${SECONDS}s"; done
for c in plan 128x256c2 256x128c2; do
  left 45 || break; cfg=""; [ $c != plan ] && cfg="--config $c"
  mark "bf16-$c"; timeout 40 /tmp/baton bench gemm $cfg --shape 65536x8192x1024 --shape 16384x8192x1024 --json $O/bf16-$c.json --chart /tmp/c.png > $O/bf16-$c.txt 2>&1
  echo "bf16 $c rc=$? t=${SECONDS}s"; grep -E '^\| *[0-9]' $O/bf16-$c.txt | head -4; done
for cs in 64x128-swapab:64 16x64-swapab:1; do c=${cs%:*}; m=${cs#*:}
  for sk in 1 2 4; do
    left 35 || break; mark "bf16-$c-sk$sk"; timeout 30 /tmp/baton bench gemm --config $c --split-k $sk --shape ${m}x4104x2056 --shape ${m}x4096x2048 --json $O/bf16-$c-sk$sk.json --chart /tmp/c.png > $O/bf16-$c-sk$sk.txt 2>&1
    echo "bf16 $c split $sk rc=$? t=${SECONDS}s"; grep -E '^\| *[0-9]' $O/bf16-$c-sk$sk.txt | head -4; done; done
for k in 256x128_mca 256x128_mca_3stage; do
  left 45 || break; mark "fp8-$k"; timeout 40 /tmp/baton bench gemm-fp8 --flush-l2 --kernel baton_gemm_fp8_blockwise_$k --shape 8192x8192x8192 --shape 4096x7168x16384 --json $O/fp8-$k.json > $O/fp8-$k.txt 2>&1
  echo "fp8 $k rc=$? t=${SECONDS}s"; grep -E '^\| [0-9]' $O/fp8-$k.txt; done
mark end; kill $SMI
cd $OUT && tar czf r.tar.gz r && rm -rf r
