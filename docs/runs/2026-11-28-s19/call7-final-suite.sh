#!/usr/bin/env bash
# Session 19, call 7 (H200): the GPU suite and pytest on the final tree (kernels of 9385ce1: unit-by-
# unit split-K, setup overlap, GPU-scope fixup flags). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 330 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 90 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
cd $OUT && tar czf r.tar.gz r && rm -rf r
