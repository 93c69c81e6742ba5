#!/usr/bin/env bash
# Session 13 final call A (merged main): GPU suite, attention bench + SDPA on the same 16 shapes,
# the d = 128 cross-tile experiment (bench + its GPU test), pytest on the wheel, sanitizers on gpu_attention.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/a"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb /tmp/xp; mkdir -p /tmp/fb /tmp/xp && tar xJf $C/final-bundle.tar.xz -C /tmp/fb && tar xJf $C/exp.tar.xz -C /tmp/xp
B=/tmp/fb/.final-bundle
echo "extracted t=${SECONDS}s; $(head -1 $B/BUILD-INFO)"
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 240 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 60 $B/bin/baton bench attention --reps 10 --json "$O/attention.json" --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"; tail -17 "$O/attention.txt"
timeout 45 /tmp/xp/baton-d128xt bench attention --reps 10 --json "$O/attention-d128xt.json" --chart /tmp/x.png 2>&1 | filt > "$O/attention-d128xt.txt"
echo "d128xt rc=$? t=${SECONDS}s"; grep -E "d128" "$O/attention-d128xt.txt"
timeout 45 $B/bin/baton bench attention --reps 10 --json "$O/attention-2.json" --chart /tmp/x.png 2>&1 | filt > "$O/attention-2.txt"
echo "attention #2 rc=$? t=${SECONDS}s"; grep -E "d128|d64" "$O/attention-2.txt"
PYTHONUNBUFFERED=1 timeout 150 python3 attention/tools/sdpa_compare.py "$O/attention.json" > "$O/sdpa-compare.txt" 2>&1
echo "sdpa_compare rc=$? t=${SECONDS}s"; grep -v "Warning\|F.scaled" "$O/sdpa-compare.txt"
timeout 40 /tmp/xp/gpu_attention-d128xt --nocapture --test-threads=1 > "$O/gpu_attention-d128xt.txt" 2>&1
echo "d128xt test rc=$?"; grep -E "^FAIL|test result" "$O/gpu_attention-d128xt.txt"
if ls $C/*.whl >/dev/null 2>&1; then
  pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl > "$O/pip.txt" 2>&1
  PYTHONPATH=/tmp/pyb timeout 120 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
  echo "pytest rc=$? t=${SECONDS}s"; tail -2 "$O/pytest.txt"
fi
for f in gpu_attention; do
  OUT="$O/san-$f" SANITIZE_DEADLINE=60 timeout $((560 - SECONDS)) bash tools/gpu-suite.sh --sanitize $B $f > "$O/sanitize-$f.txt" 2>&1
  echo "sanitize $f rc=$? t=${SECONDS}s"; grep -E "^cells" "$O/san-$f/gpu-sanitize-summary.txt"
done
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf a.tar.gz a && rm -rf a
