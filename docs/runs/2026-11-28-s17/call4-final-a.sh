#!/usr/bin/env bash
# Session 17, final call A (bundle + wheel of s17-bn c7005e4 = main + 128x192c2/128x160c2, NARROW_PAIR_MIN_GAIN,
# baton_pitched_copy for the re-pack, REPACK_BYTES_PER_S 2.5e12): the GPU suite, pytest on the wheel.
# Writes $OUT/f.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/f"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 330 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 120 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf f.tar.gz f && rm -rf f
