#!/usr/bin/env bash
# Session 22, call 5 (H200): the fixup slots per CTA from the role table (narrow swap-AB: one slot).
# The swap-AB and split-K GPU tests (every swap-AB configuration, split 1-9 and stream-K, vs f64),
# then memcheck and racecheck of the swap-AB split and stream-K tests. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
for f in swap_ab split_k; do OUT="$O/$f" SUITE_TEST_TIMEOUT=120 timeout 150 bash tools/gpu-suite.sh $B $f > "$O/suite-$f.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s $(tail -1 $O/$f/gpu-suite-summary.txt)"; grep FAIL $O/$f/gpu-suite-summary.txt | head; done
T=$B/tests/baton-reference__gpu_gemm_swap_ab
for t in $($T --list 2>/dev/null | grep ': test' | sed 's/: test//' | grep -E "split|stream_k"); do
  for tool in memcheck racecheck; do
    [ $SECONDS -lt 300 ] && { BATON_SMALL=1 timeout 90 compute-sanitizer --tool $tool $T --exact $t > $O/san-$tool-$t.txt 2>&1
    echo "$tool $t rc=$? t=${SECONDS}s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool-$t.txt | tail -1)"; }
  done; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
