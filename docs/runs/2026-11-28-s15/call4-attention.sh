#!/usr/bin/env bash
# Session 15, call 4: merged main with the d = 128 cross-tile entries (d637ae2): attention bench and
# SDPA's backends in one call (issue #17's table), gpu_attention, memcheck + racecheck (BATON_SMALL=1).
# Carry: .lead-carry/final-bundle.tar.xz. Writes $OUT/d.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/d"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; echo "$(head -1 $B/BUILD-INFO)"
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 60 $B/bin/baton bench attention --reps 10 --json "$O/attention.json" --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"
PYTHONUNBUFFERED=1 timeout 150 python3 attention/tools/sdpa_compare.py "$O/attention.json" > "$O/sdpa-compare.txt" 2>&1
echo "sdpa_compare rc=$? t=${SECONDS}s"; grep -v "Warning\|F.scaled" "$O/sdpa-compare.txt"
timeout 60 $B/tests/baton-attention__gpu_attention --nocapture --test-threads=1 > "$O/gpu_attention.txt" 2>&1
echo "gpu_attention rc=$?"; grep -E "^FAIL|test result" "$O/gpu_attention.txt"
for tool in memcheck racecheck; do
  BATON_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 $B/tests/baton-attention__gpu_attention --test-threads=1 > "$O/san-$tool.txt" 2>&1
  echo "$tool rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" "$O/san-$tool.txt" | tail -2
done
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf d.tar.gz d && rm -rf d
