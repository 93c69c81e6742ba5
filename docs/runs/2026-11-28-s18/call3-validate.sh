#!/usr/bin/env bash
# Session 18, call 3: the batched D epilogue (BF16 rings of 4; FP8 256-row kernels' rings of 2) validated
# and measured. Bundle of main 2bb7a1d + the FP8 256-row batch (store_one_at_a_time for the rest). Writes $OUT/r.tar.gz.
# 1. GEMM tests (BF16, swap-AB, split-K, FP8, views, layouts) vs f64 and cuBLAS; memcheck and racecheck
#    (BATON_SMALL=1) on the BF16 ragged f64 test and the FP8 ragged/half-empty tests.
# 2. Traced CLI (epilogue only) on call 1's shapes.
# 3. BF16 sweep, new CLI (call 2 measured base's: 0.905 on this H200).
# 4. FP8, DeepGEMM's method (--flush-l2), base (HEAD 358f779 kernels) and new, alternating, on the 256-row shapes.
set -uo pipefail
D=.lead-carry/s18; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-new baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm gpu_gemm_swap_ab gpu_gemm_split_k gpu_gemm_fp8 gpu_gemm_views gpu_gemm_layouts; do
  timeout 150 $T/baton-reference__$t --test-threads=1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck; do
  for spec in "gpu_gemm gemm_matches_f64_reference_on_ragged_shapes" "gpu_gemm_fp8 fp8_half_empty_tiles_and_equal_wave_grids_match_f64" "gpu_gemm_fp8 fp8_gemm_matches_f64_reference_on_ragged_shapes" "gpu_gemm_fp8 fp8_a_multicast_clusters_match_f64"; do
    set -- $spec; BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__$1 --exact $2 --test-threads=1 > $O/san-$tool-$2.txt 2>&1
    echo "$tool $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$2.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
S="--shape 1024x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096 --shape 512x1024x4096 --shape 1x1024x4096 --shape 1024x3072x4096 --shape 256x4104x2056 --shape 4096x4096x4096"
timeout 60 /tmp/b/baton-trace bench trace-gemm $S --reps 21 > $O/trace.txt 2>&1; echo "trace t=${SECONDS}s"
timeout 170 /tmp/b/baton-new bench gemm --sweep --json $O/sweep-new.json --heatmap $O/sweep-new.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-new.txt
echo "sweep t=${SECONDS}s"; grep -E "geometric|FAIL" $O/sweep-new.txt | cut -c1-150
F="--shape 4096x7168x16384 --shape 4096x4096x7168 --shape 8192x8192x8192 --shape 4096x2112x7168 --shape 4096x24576x1536 --shape 4096x32768x512 --shape 4096x7168x2048 --shape 4096x4096x4096"
for v in base new base new; do b=/tmp/b/baton; [ $v = new ] && b=/tmp/b/baton-new
  timeout 90 $b bench gemm-fp8 --flush-l2 $F > $O/fp8-$v-$SECONDS.txt 2>&1; echo "fp8 $v rc=$? t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
