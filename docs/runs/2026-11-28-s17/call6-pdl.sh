#!/usr/bin/env bash
# Session 17, call 6 (bundle + wheel of main 41324f4 = s17-bn + programmatic dependent launch for the BF16
# GEMM): the GPU suite and pytest (every BF16 launch now carries the PDL attribute), then the BF16 sweep
# twice in one call: BATON_PDL=0 (attribute off) and default (on). Writes $OUT/p.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/p"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
sweep() { local t=$1; shift; timeout 150 env "$@" $BATON bench gemm --sweep --json "$O/gemm-sweep-$t.json" --heatmap "$O/bf16-sweep-$t.png" 2>&1 | tr '\r' '\n' | grep -v '^\[' > "$O/gemm-sweep-$t.txt"
  echo "sweep $t rc=$? t=${SECONDS}s"; grep -E "geometric|FAIL" "$O/gemm-sweep-$t.txt" | cut -c1-150; }
sweep pdl-off BATON_PDL=0
sweep pdl-on BATON_PDL=1
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 300 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 100 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf p.tar.gz p && rm -rf p
