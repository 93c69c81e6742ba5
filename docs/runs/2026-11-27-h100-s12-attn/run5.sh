#!/usr/bin/env bash
# Session 12 ATTN call 5: the review clean-up (one producer loop, no dead cross-tile tail) vs the final bundle.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W=/tmp/a5; rm -rf $W /tmp/fb; mkdir -p $W /tmp/fb; tar xJf "$B/bins5.tar.xz" -C $W
tar xJf .lead-carry/final-bundle.tar.xz -C /tmp/fb; cp /tmp/fb/.final-bundle/bin/baton $W/baton-final
L="$OUT/logs"; mkdir -p "$L"
exec > >(tee "$L/call5-run.txt") 2>&1
SECONDS=0; date -u
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 60 $W/gpu_attention-review --nocapture --test-threads=1 > "$L/call5-gpu_attention.txt" 2>&1
echo "gpu_attention rc=$?"; grep -E "^FAIL|test result" "$L/call5-gpu_attention.txt"
for r in final review final review; do
  echo "== bench $r t=$SECONDS"
  timeout 45 $W/baton-$r bench attention --reps 10 --chart /tmp/x.png 2>&1 | filt | grep -E "^b"
done
echo "t=$SECONDS"
