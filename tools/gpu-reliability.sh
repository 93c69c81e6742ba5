#!/usr/bin/env bash
# The reliability run of issue #21, in one device call (docs/SANITIZERS.md):
#
#   1. the CUDA C++ sanitizer twins (tools/sanitizer-twins/run.sh);
#   2. the fault tests (gpu_faults) in the GPU suite, with the deliberate
#      release-build hang switched on (BATON_FAULT_HANG=1) and a short
#      per-test limit: the suite must report that test as FAIL (timeout)
#      and go on, the other fault tests PASS;
#   3. the suite's sanitizer mode (tools/gpu-suite.sh --sanitize), given
#      what is left of the time budget;
#   4. the plain GPU suite, if time is left.
#
# Usage (on the device machine, from a bundle that holds this script, the
# suite scripts and the twins folder — see docs/SANITIZERS.md):
#   bash <bundle>/gpu-reliability.sh <bundle> [budget-seconds, default 560]
# Results go to $OUT: sanitizer-twins.txt, faults-suite.log,
# gpu-sanitize.log, gpu-sanitize-summary.txt, gpu-sanitize-logs.tar.gz,
# gpu-suite.log.
set -uo pipefail
BUNDLE="${1:?usage: gpu-reliability.sh <bundle> [budget-seconds]}"
BUDGET="${2:-560}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$(mktemp -d /tmp/gpu-reliability.XXXXXX)}"
export OUT
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
step() { printf '\n######## %s (at %ss)\n' "$*" "$(elapsed)"; }

step "1. sanitizer twins"
bash "$HERE/sanitizer-twins/run.sh" "/tmp/sanitizer-twins" 2>&1 | sed -n '1,40p'

step "2. fault tests, deliberate release hang on, 20 s per test"
SUITE_TEST_TIMEOUT=20 BATON_FAULT_HANG=1 bash "$HERE/gpu-suite.sh" "$BUNDLE" gpu_faults
echo "(suite exit status $?; the deliberate hang must make it 1)"
mv "$OUT/gpu-suite.log" "$OUT/faults-suite.log"
rm -f "$OUT/gpu-suite-summary.txt"

STIMEOUT="${SANITIZE_TEST_TIMEOUT:-150}"
LEFT=$((BUDGET - $(elapsed) - STIMEOUT - 10))
step "3. sanitizer mode: new jobs for ${LEFT}s, each at most ${STIMEOUT}s"
if ((LEFT > 30)); then
    SANITIZE_TEST_TIMEOUT="$STIMEOUT" SANITIZE_DEADLINE="$LEFT" SANITIZE_JOBS="${SANITIZE_JOBS:-12}" \
        bash "$HERE/gpu-suite.sh" --sanitize "$BUNDLE" | grep -v '^  [a-z]* *[0-9]*s  clean'
    echo "(sanitizer mode exit status ${PIPESTATUS[0]})"
else
    echo "no time left for the sanitizer mode"
fi

if (($(elapsed) < BUDGET - 90)); then
    step "4. the plain GPU suite"
    SUITE_TEST_TIMEOUT=60 bash "$HERE/gpu-suite.sh" "$BUNDLE" | sed -n '/### summary/,$p'
else
    step "4. the plain GPU suite: no time left"
fi
step "done"
