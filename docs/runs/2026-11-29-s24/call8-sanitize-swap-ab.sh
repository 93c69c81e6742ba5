#!/usr/bin/env bash
# Session 24, call 8 (H200): compute-sanitizer (memcheck, racecheck,
# synccheck, initcheck) on the swap-AB tests, which now include the 128-row
# narrow tile (bundle of ea5db4d; kernels unchanged since). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
mkdir -p $O/sanitize
OUT="$O/sanitize" SANITIZE_DEADLINE=200 timeout 240 bash tools/gpu-suite.sh --sanitize $B swap_ab > "$O/sanitize/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -8 "$O/sanitize/stdout.txt"
cd $OUT && tar czf r.tar.gz r && rm -rf r
