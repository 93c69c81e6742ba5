#!/usr/bin/env bash
# Session 19, call 5 (H200): the stream-K flags at GPU scope (st.release.gpu / ld.acquire.gpu instead
# of a Rust atomic's system scope). (1) split-K, swap-AB, stream-K and FP8 tests, memcheck + racecheck
# on the split tests; (2) traces base3 (call 4's new) vs new at split plans, per CTA; (3) the small-M
# BF16 rows base3/new alternating twice; (4) both sweeps on new. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base3 baton-new baton-trace-base3 baton-trace-new; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm_split_k gpu_gemm_swap_ab gpu_gemm gpu_gemm_fp8; do
  timeout 150 $T/baton-reference__$t --test-threads=1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck; do
  for spec in "gpu_gemm_split_k bf16_split_k_matches_f64_on_ragged_shapes" "gpu_gemm_split_k fp8_split_k_matches_f64_on_ragged_shapes"; do
    set -- $spec; BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__$1 --exact $2 --test-threads=1 > $O/san-$tool-$2.txt 2>&1
    echo "$tool $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$2.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
S="--shape 1x1024x4096 --shape 64x1024x4096 --shape 128x1024x4096 --shape 8x1024x32768"
for v in base3 new; do
  timeout 40 /tmp/b/baton-trace-$v bench trace-gemm $S --reps 15 --per-cta $O/percta-$v.csv > $O/trace-$v.txt 2>&1; echo "trace $v rc=$? t=${SECONDS}s"; done
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
for v in base3 new base3 new; do
  timeout 60 /tmp/b/baton-$v bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s"; done
timeout 200 /tmp/b/baton-new bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16.txt
echo "sweep bf16 t=${SECONDS}s $(grep geometric $O/sweep-bf16.txt)"
timeout 150 /tmp/b/baton-new bench gemm-fp8 --sweep --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-fp8.txt
echo "sweep fp8 t=${SECONDS}s $(grep geometric $O/sweep-fp8.txt)"
cd $OUT && tar czf r.tar.gz r && rm -rf r
