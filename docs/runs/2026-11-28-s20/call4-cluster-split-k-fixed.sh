#!/usr/bin/env bash
# Session 20, call 4 (H200): call 3's cluster split-K hung at its first launch; this build replaces
# the early cluster arrive + one late waiter with a full cluster barrier at setup. Short timeouts
# first: (1) the new bit-for-bit test and the swap-AB tests, memcheck/racecheck/synccheck; (2) ncu
# kernel durations hs (call 2's build, global fixup) vs new; (3) traces; (4) the small-M rows
# hs/new alternating twice. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s20; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-hs baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
mv /tmp/b/baton /tmp/b/baton-new; mv /tmp/b/baton-trace /tmp/b/baton-trace-new
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
T=$B/tests
timeout 40 $T/baton-reference__gpu_gemm_swap_ab --exact swap_ab_cluster_split_k_matches_global_fixup_bit_for_bit --nocapture > $O/test-bitwise.txt 2>&1
rc=$?; echo "bitwise rc=$rc t=${SECONDS}s $(grep 'test result' $O/test-bitwise.txt) $(grep -c ': 0 of ' $O/test-bitwise.txt) zero-diff lines"
if [ $rc -ne 0 ]; then cd $OUT && tar czf r.tar.gz r && rm -rf r; exit 1; fi
timeout 100 $T/baton-reference__gpu_gemm_swap_ab --test-threads=1 > $O/test-gpu_gemm_swap_ab.txt 2>&1; echo "swap_ab rc=$? t=${SECONDS}s $(grep 'test result' $O/test-gpu_gemm_swap_ab.txt)"
timeout 100 $T/baton-reference__gpu_gemm_split_k --test-threads=1 > $O/test-gpu_gemm_split_k.txt 2>&1; echo "split_k rc=$? t=${SECONDS}s $(grep 'test result' $O/test-gpu_gemm_split_k.txt)"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck synccheck; do
  BATON_SMALL=1 timeout 60 $SAN --tool $tool $T/baton-reference__gpu_gemm_swap_ab --exact swap_ab_cluster_split_k_matches_global_fixup_bit_for_bit > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool.txt | tr '\n' ' ') t=${SECONDS}s"; done
for v in hs new; do for s in 1x256x1024 1x1024x4096 32x1024x4096 64x1024x4096 8x1024x32768; do
  timeout 30 ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.max -k regex:baton -c 12 /tmp/b/baton-$v bench gemm --shape $s --reps 3 > "$O/ncu-$v-$s.txt" 2>&1
  echo "ncu $v $s rc=$? t=${SECONDS}s"; done; done
S="--shape 1x256x1024 --shape 1x1024x4096 --shape 32x1024x4096 --shape 64x1024x4096 --shape 8x1024x32768"
timeout 30 /tmp/b/baton-trace-new bench trace-gemm $S --reps 15 --per-cta $O/percta-new.csv > $O/trace-new.txt 2>&1; echo "trace new rc=$? t=${SECONDS}s"
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
for v in hs new new hs; do
  timeout 40 /tmp/b/baton-$v bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s $(grep geometric $O/small-$v-*.txt | tail -1)"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
