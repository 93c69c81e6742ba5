#!/usr/bin/env bash
# Session 12 ATTN call 4: the epilogue shared by both tile loops (store_o) and the K/V block loop as
# one macro (dedup; PTX differs from the final bundle's by a few epilogue instructions) vs the
# final bundle's binary (call A/B), interleaved.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a4; rm -rf $W /tmp/fb; mkdir -p $W /tmp/fb; tar xJf "$B/bins4.tar.xz" -C $W
tar xJf .lead-carry/final-bundle.tar.xz -C /tmp/fb; cp /tmp/fb/.final-bundle/bin/baton $W/baton-final
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call4-run.txt") 2>&1
SECONDS=0; date -u
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 60 $W/gpu_attention-dedup --nocapture --test-threads=1 > "$L/call4-gpu_attention.txt" 2>&1
echo "gpu_attention rc=$?"; grep -E "^FAIL|test result" "$L/call4-gpu_attention.txt"
for r in final dedup final dedup; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png 2>&1 | filt | grep -E "^b"
done
echo "t=$SECONDS"
