#!/usr/bin/env bash
# Session 12 final call A (merged main: s12-fp8, s12-bf16, s12-attn): GPU suite, pytest on the wheel, sanitizers on the GPU tests
# whose kernels changed this session, attention bench (--json) + SDPA on the same 16 shapes.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/a"; mkdir -p "$O"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle
echo "extracted t=${SECONDS}s; $(head -1 $B/BUILD-INFO)"
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 240 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "^FAIL" "$O/gpu-suite-summary.txt"
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 80 $B/bin/baton bench attention --reps 10 --json "$O/attention.json" --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"; tail -19 "$O/attention.txt"
PYTHONUNBUFFERED=1 timeout 150 python3 attention/tools/sdpa_compare.py "$O/attention.json" > "$O/sdpa-compare.txt" 2>&1
echo "sdpa_compare rc=$? t=${SECONDS}s"; cat "$O/sdpa-compare.txt"
pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 150 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -2 "$O/pytest.txt"
for f in gpu_gemm_fp8 gpu_attention gpu_gemm; do
  OUT="$O/san-$f" timeout $((590 - SECONDS)) bash tools/gpu-suite.sh --sanitize $B $f > "$O/sanitize-$f.txt" 2>&1
  echo "sanitize $f rc=$? t=${SECONDS}s"; grep -E "^cells" "$O/san-$f/gpu-sanitize-summary.txt"
done
cd "$O0" && tar czf a.tar.gz a && rm -rf a
