#!/usr/bin/env bash
# Session 16, call 2: the BF16 re-pack of a misaligned operand (commit 73cfede; bundle built from its tree).
# (a) gpu_gemm's repack tests (f64 at ragged shapes, A and B on 5 configs; relaunch with fresh data; the
#     heuristic's pick vs cuBLAS) and the same under compute-sanitizer memcheck (BATON_SMALL=1);
# (b) forced rows on the ragged column (K = 2056): the same configuration with --repack none / a / b;
# (c) the BF16 sweep (its ragged column now re-packs at M >= 128; every other shape's plan is unchanged).
# Writes $OUT/r.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/r"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
timeout 120 $B/tests/baton-reference__gpu_gemm repack --test-threads=1 --nocapture > "$O/gpu_gemm-repack.txt" 2>&1
echo "(a) tests rc=$? t=${SECONDS}s"; grep -E "rel |test result|panicked|FAIL" "$O/gpu_gemm-repack.txt" | cut -c1-150
BATON_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm repack --test-threads=1 > "$O/memcheck-repack.txt" 2>&1
echo "(a) memcheck rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|test result" "$O/memcheck-repack.txt" | tail -2
N=0
brow() { local s=$1 c=$2 r=$3; N=$((N+1))
  timeout 30 $BATON bench gemm --shape "$s" --reps 21 --config $c --repack $r --chart /tmp/x.png --json "$O/b$N-$s-$c-$r.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$c $r] |"; }
{
for p in 1 2; do
  for r in none a b; do brow 128x4104x2056 128x64 $r; done
  for r in none a b; do brow 512x4104x2056 128x128c2 $r; done; brow 512x4104x2056 128x224c2 none
  for r in none a b; do brow 2048x4104x2056 256x128c2 $r; done; brow 2048x4104x2056 128x224c2 none
  for r in none a; do brow 8192x4104x2056 256x128c2 $r; done; brow 8192x4104x2056 128x256c2 b
  for r in none b; do brow 16384x4104x2056 128x224c2 $r; done; for r in none b; do brow 16384x4104x2056 128x256c2 $r; done
done
} > "$O/ragged-rows.txt" 2>&1
echo "(b) t=${SECONDS}s"; cut -c1-150 "$O/ragged-rows.txt"
timeout 200 $BATON bench gemm --sweep --json "$O/gemm-sweep.json" --heatmap "$O/bf16-sweep.png" 2>&1 | tr '\r' '\n' | grep -v '^\[' > "$O/gemm-sweep.txt"
echo "(c) sweep rc=$? t=${SECONDS}s"; grep -E "geometric|minimum|FAIL|x4104x2056" "$O/gemm-sweep.txt" | cut -c1-150
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf r.tar.gz r && rm -rf r
