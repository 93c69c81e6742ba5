#!/usr/bin/env bash
# Session 14's plan for the next session's first device call (session 14 had no device time left).
# Carry: .lead-carry/ with final-bundle.tar.xz (tools/make-device-bundle.sh .final-bundle, then
# tar cJf .lead-carry/final-bundle.tar.xz -C . .final-bundle), the wheel (pip wheel ./python), the
# d128xt experiment (its baton CLI + gpu_attention test binary as exp.tar.xz), and deepgemm/ (a copy of
# ../shared/anchors/deepgemm). About 8 minutes; run with timeout_s 600. In order:
#  1. attention bench + sdpa_compare.py in one call: #17's min (s1k d64 causal, landed compact mask).
#  2. GPU suite of merged main: includes fp8_strided_a_scales_and_split_k_match_f64_reference (new).
#  3. pytest on the wheel: includes the FP8 split-K / torch-layout tests and the capture refusal (new).
#  4. d128xt experiment: its bench and its gpu_attention (sanitizers: second-call.sh).
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/a"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb /tmp/xp; mkdir -p /tmp/fb /tmp/xp && tar xJf $C/final-bundle.tar.xz -C /tmp/fb && tar xJf $C/exp.tar.xz -C /tmp/xp
B=/tmp/fb/.final-bundle
echo "extracted t=${SECONDS}s; $(head -1 $B/BUILD-INFO)"
filt() { tr '\r' '\n' | grep -v '^\[' ; }
# The number #17 waits for first.
timeout 60 $B/bin/baton bench attention --reps 10 --json "$O/attention.json" --chart "$O/attention-bench.png" 2>&1 | filt > "$O/attention.txt"
echo "attention rc=$? t=${SECONDS}s"; tail -17 "$O/attention.txt"
PYTHONUNBUFFERED=1 timeout 150 python3 attention/tools/sdpa_compare.py "$O/attention.json" > "$O/sdpa-compare.txt" 2>&1
echo "sdpa_compare rc=$? t=${SECONDS}s"; grep -v "Warning\|F.scaled" "$O/sdpa-compare.txt"
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 240 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
pip install -q --no-deps --no-index --target /tmp/pyb $C/*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 120 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -2 "$O/pytest.txt"
timeout 45 /tmp/xp/baton-d128xt bench attention --reps 10 --json "$O/attention-d128xt.json" --chart /tmp/x.png 2>&1 | filt > "$O/attention-d128xt.txt"
echo "d128xt rc=$? t=${SECONDS}s"; grep -E "d128" "$O/attention-d128xt.txt"
timeout 40 /tmp/xp/gpu_attention-d128xt --nocapture --test-threads=1 > "$O/gpu_attention-d128xt.txt" 2>&1
echo "d128xt test rc=$?"; grep -E "^FAIL|test result" "$O/gpu_attention-d128xt.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf a.tar.gz a && rm -rf a
