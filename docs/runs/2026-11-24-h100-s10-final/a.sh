#!/usr/bin/env bash
# Final call A: GPU suite, pytest on the wheel, sanitizers (4 tools) — merged main.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/a"; mkdir -p "$O"
SECONDS=0
mkdir -p /tmp/fb && tar xJf $C/bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle
echo "extracted t=${SECONDS}s"
OUT="$O" SUITE_TEST_TIMEOUT=120 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -3 "$O/gpu-suite-summary.txt"; grep -E "^FAIL" "$O/gpu-suite-summary.txt"
pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 240 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -2 "$O/pytest.txt"
OUT="$O" timeout $((570 - SECONDS)) bash tools/gpu-suite.sh --sanitize $B > "$O/sanitize-stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; grep -iE "unexplained|FAIL" "$O"/gpu-sanitize-summary.txt | tail -5
cd "$O0" && tar czf a.tar.gz a && rm -rf a
