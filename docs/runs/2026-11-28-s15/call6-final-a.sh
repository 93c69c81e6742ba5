#!/usr/bin/env bash
# Session 15 final call A (merged main: BF16 split-K cost refit + cluster splits, FP8 A scales read in place
# if merged): GPU suite, pytest on the wheel, the BF16 plans that changed beside their old plans (one shape per
# invocation), the off-sweep coin flip 256x7168x16384, controls, issue #6's set. Writes $OUT/f.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/f"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; echo "$(head -1 $B/BUILD-INFO)"
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 260 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
BATON_SMALL=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm_views fp8 --test-threads=1 > "$O/memcheck-views-fp8.txt" 2>&1
echo "memcheck views fp8 rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|test result" "$O/memcheck-views-fp8.txt" | tail -2
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 100 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
row() { # shape [config split]
  local shape=$1; shift
  local args=(); [ $# -ge 2 ] && args=(--config "$1" --split-k "$2")
  timeout 40 $BATON bench gemm --shape "$shape" --reps 15 "${args[@]}" --chart /tmp/x.png 2>&1 \
    | tr '\r' '\n' | grep -E "^$shape|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[${*:-plan}] |"
}
{
for r in 1 2; do
  row 256x1024x32768; row 256x1024x32768 128x64 4; row 256x1024x32768 128x128 8
  row 512x1024x32768; row 512x1024x32768 128x128 4; row 512x1024x32768 128x256 8
  row 256x7168x16384; row 256x7168x16384 128x128-pingpong 1
done
for s in 128x1024x32768 256x1024x4096 512x1024x4096 1024x1024x4096 256x1024x24576 256x2048x24576; do row $s; done
row 256x1024x24576 128x64 3; row 256x2048x24576 128x128 4
} > "$O/bf16-rows.txt" 2>&1
echo "bf16 rows t=${SECONDS}s"; cat "$O/bf16-rows.txt" | cut -c1-150
timeout $((590 - SECONDS)) $BATON bench gemm --reps 15 2>&1 | tr '\r' '\n' | grep -v "^\[" > "$O/issue6.txt"
echo "issue6 rc=$? t=${SECONDS}s"; grep -E "^[0-9]|geometric|FAIL" "$O/issue6.txt" | cut -c1-150 | tail -12
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf f.tar.gz f && rm -rf f
