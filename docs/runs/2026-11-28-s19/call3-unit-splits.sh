#!/usr/bin/env bash
# Session 19, call 3 (H200): stream-K ranges cut unit by unit where the region's workers are a
# multiple of its units (split-K): no worker is a contributor of one unit and the finalizer of
# the next. (1) correctness: the split-K, swap-AB, stream-K and FP8 GPU tests (uneven counts 3, 5,
# 6, 9, 13 among them), memcheck + racecheck on the split tests; (2) traces base/new at split plans
# with uneven counts (per-CTA CSV); (3) base/new alternating on the small-M rows and FP8 split rows.
# Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton-new baton-trace baton-trace-new; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm_split_k gpu_gemm_swap_ab gpu_gemm gpu_gemm_fp8 gpu_gemm_views; do
  timeout 150 $T/baton-reference__$t --test-threads=1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck; do
  for spec in "gpu_gemm_split_k bf16_split_k_matches_f64_on_ragged_shapes" "gpu_gemm_split_k fp8_split_k_matches_f64_on_ragged_shapes" "gpu_gemm_swap_ab swap_ab_matches_f64_on_ragged_shapes"; do
    set -- $spec; BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__$1 --exact $2 --test-threads=1 > $O/san-$tool-$2.txt 2>&1
    echo "$tool $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$2.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
S="--shape 1x1024x4096 --shape 64x1024x4096 --shape 8x1024x32768 --shape 64x4104x2056"
for v in base new; do tb=/tmp/b/baton-trace; [ $v = new ] && tb=/tmp/b/baton-trace-new
  timeout 60 $tb bench trace-gemm $S --reps 15 --per-cta $O/percta-$v.csv > $O/trace-$v.txt 2>&1; echo "trace $v rc=$? t=${SECONDS}s"
  timeout 30 $tb bench trace-gemm --shape 256x1024x4096 --config 128x64 --split-k 3 --reps 15 --per-cta $O/percta-coop3-$v.csv > $O/trace-coop3-$v.txt 2>&1; echo "trace coop3 $v rc=$? t=${SECONDS}s"; done
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
F="--shape 8x1024x32768 --shape 32x1024x32768 --shape 64x1024x32768 --shape 128x1024x32768 --shape 64x2112x7168 --shape 128x2112x7168 --shape 128x1024x8192 --shape 256x1024x32768"
for v in base new base new; do b=/tmp/b/baton-$v
  timeout 100 $b bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s"
  timeout 100 $b bench gemm-fp8 --reps 21 $F > $O/fp8-$v-$SECONDS.txt 2>&1; echo "fp8 $v rc=$? t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
