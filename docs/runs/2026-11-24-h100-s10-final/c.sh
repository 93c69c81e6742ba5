#!/usr/bin/env bash
# Final call C: after the attention Q-release change (every thread arrives) and the Python FP8 box/grid fix:
# attention GPU tests, sanitizers on them, pytest on the wheel, attention bench + SDPA anchor.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/c"; mkdir -p "$O"
SECONDS=0
mkdir -p /tmp/fb && tar xJf $C/bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle
OUT="$O" SUITE_TEST_TIMEOUT=120 bash tools/gpu-suite.sh $B attention > "$O/suite-stdout.txt" 2>&1
echo "suite(attention) rc=$? t=${SECONDS}s"; tail -2 "$O/gpu-suite-summary.txt"; grep -E "^FAIL" "$O/gpu-suite-summary.txt"
pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 200 python3 -m pytest -v python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -3 "$O/pytest.txt"
OUT="$O" timeout 200 bash tools/gpu-suite.sh --sanitize $B attention > "$O/sanitize-stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; grep -E "gpu_attention|cells" "$O"/gpu-sanitize-summary.txt | tail -5
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 60 $B/bin/baton bench attention --reps 10 --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"; tail -15 "$O/attention.txt"
timeout 100 python3 $C/sdpa.py > "$O/sdpa.txt" 2>&1
echo "sdpa rc=$? t=${SECONDS}s"
cd "$O0" && tar czf c.tar.gz c && rm -rf c
