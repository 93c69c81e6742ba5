#!/usr/bin/env bash
# Session 20, call 2 (H200): the stream-K schedule computed on the host (no division in any CTA's
# setup) and the swap-AB epilogue per warp pair. (1) split-K, swap-AB, stream-K and FP8 tests,
# memcheck + racecheck on the split and swap-AB tests; (2) ncu kernel durations base vs new at small
# shapes; (3) traces base vs new; (4) the small-M BF16 rows base/new alternating twice, with clocks
# logged per process. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s20; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton baton-trace-base baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
mv /tmp/b/baton /tmp/b/baton-new; mv /tmp/b/baton-trace /tmp/b/baton-trace-new
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm_split_k gpu_gemm_swap_ab gpu_gemm gpu_gemm_fp8; do
  timeout 150 $T/baton-reference__$t --test-threads=1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck; do
  for spec in "gpu_gemm_split_k bf16_split_k_matches_f64_on_ragged_shapes" "gpu_gemm_split_k fp8_split_k_matches_f64_on_ragged_shapes" "gpu_gemm_swap_ab swap_ab_matches_f64_on_ragged_shapes"; do
    set -- $spec; BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__$1 --exact $2 --test-threads=1 > $O/san-$tool-$2.txt 2>&1
    echo "$tool $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$2.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
for v in base new; do for s in 1x256x1024 1x1024x4096 64x1024x4096 64x4104x2056 1x128x64; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.max -k regex:baton -c 12 /tmp/b/baton-$v bench gemm --shape $s --reps 3 > "$O/ncu-$v-$s.txt" 2>&1
  echo "ncu $v $s rc=$? t=${SECONDS}s"; done; done
S="--shape 1x256x1024 --shape 1x1024x4096 --shape 64x1024x4096 --shape 128x1024x4096 --shape 8x1024x32768 --shape 1x128x64 --shape 64x4104x2056"
for v in base new; do
  timeout 40 /tmp/b/baton-trace-$v bench trace-gemm $S --reps 15 --per-cta $O/percta-$v.csv > $O/trace-$v.txt 2>&1; echo "trace $v rc=$? t=${SECONDS}s"; done
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
for v in base new new base; do
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader > $O/clk-$v-$SECONDS.txt
  timeout 60 /tmp/b/baton-$v bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s $(grep geometric $O/small-$v-*.txt | tail -1)"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
