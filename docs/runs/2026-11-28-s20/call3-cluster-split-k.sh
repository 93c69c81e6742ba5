#!/usr/bin/env bash
# Session 20, call 3 (H200): swap-AB split-K inside clusters (partials through distributed shared
# memory) against call 2's build (host schedule, global fixup: "hs"). (1) swap-AB, split-K and GEMM
# tests (the new bit-for-bit test: cluster vs global fixup), memcheck/racecheck/synccheck on the
# swap-AB split tests; (2) ncu kernel durations hs vs new at split shapes; (3) traces; (4) the
# small-M rows hs/new alternating twice; (5) the BF16 sweep on new. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s20; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-hs baton baton-trace-hs baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
mv /tmp/b/baton /tmp/b/baton-new; mv /tmp/b/baton-trace /tmp/b/baton-trace-new
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm_swap_ab gpu_gemm_split_k gpu_gemm; do
  timeout 150 $T/baton-reference__$t --test-threads=1 --nocapture > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
grep -E "outputs differ" $O/test-gpu_gemm_swap_ab.txt | awk '{print $NF=="" ? "" : $0}' | head -40 > $O/bitwise.txt; grep -c " 0 of " $O/bitwise.txt
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck synccheck; do
  for spec in "gpu_gemm_swap_ab swap_ab_cluster_split_k_matches_global_fixup_bit_for_bit" "gpu_gemm_swap_ab swap_ab_matches_f64_on_ragged_shapes"; do
    set -- $spec; BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__$1 --exact $2 --test-threads=1 > $O/san-$tool-$2.txt 2>&1
    echo "$tool $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$2.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
for v in hs new; do for s in 1x256x1024 1x1024x4096 32x1024x4096 64x1024x4096 8x1024x32768; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.max -k regex:baton -c 12 /tmp/b/baton-$v bench gemm --shape $s --reps 3 > "$O/ncu-$v-$s.txt" 2>&1
  echo "ncu $v $s rc=$? t=${SECONDS}s"; done; done
S="--shape 1x256x1024 --shape 1x1024x4096 --shape 32x1024x4096 --shape 64x1024x4096 --shape 8x1024x32768"
timeout 40 /tmp/b/baton-trace-new bench trace-gemm $S --reps 15 --per-cta $O/percta-new.csv > $O/trace-new.txt 2>&1; echo "trace new rc=$? t=${SECONDS}s"
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
for v in hs new new hs; do
  timeout 60 /tmp/b/baton-$v bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s $(grep geometric $O/small-$v-*.txt | tail -1)"; done
[ $SECONDS -lt 380 ] && { timeout 200 /tmp/b/baton-new bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16.txt
echo "sweep bf16 t=${SECONDS}s $(grep geometric $O/sweep-bf16.txt)"; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
