#!/usr/bin/env bash
# Session 18, call 6: the GPU suite and pytest on the final tree (bundle and wheel of ae1c393's code:
# the batched D epilogue, the FP8 256-row batch, the trace build's stamps compiled out). Writes $OUT/p.tar.gz.
set -uo pipefail
C=.lead-carry/s18; O0="${OUT:-/tmp}"; O="$O0/p"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 420 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 100 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf p.tar.gz p && rm -rf p
