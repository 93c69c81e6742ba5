#!/usr/bin/env bash
# LAYOUT lane device run: the new tests (batch in one launch, MN-major
# layouts vs f64 and cuBLAS), the existing BF16 GEMM tests on the changed
# kernels, then the same-call before/after bench of `baton bench gemm`
# (issue-#6 set, A B B A) and the layouts vs cuBLAS timing.
set -u
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
O="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
for t in ${TESTS:-gpu_gemm_layouts gpu_gemm_views gpu_gemm gpu_gemm_split_k}; do
    start=$(date +%s)
    timeout ${TEST_TIMEOUT:-120} "$B/tests/$t" --test-threads=1 --nocapture > "$O/$t.txt" 2>&1
    rc=$?
    echo "== $t rc=$rc ($(( $(date +%s) - start )) s)"
    grep -E "^test |test result|FAILED|panicked|SKIPPED|seed" "$O/$t.txt" | tail -30
done
if [ "${TIMING:-1}" = 1 ]; then
    start=$(date +%s)
    timeout 150 "$B/tests/gpu_gemm_layouts" layouts_vs_cublas_timing --ignored --test-threads=1 --nocapture > "$O/layouts_timing.txt" 2>&1
    echo "== layouts timing rc=$? ($(( $(date +%s) - start )) s)"
    grep -E "BENCH|panicked|test result" "$O/layouts_timing.txt"
fi
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
bench() { # side round
    local log="$O/ba-gemm-$1-$2.txt" start=$(date +%s)
    timeout 150 "$B/bin/baton-$1" bench gemm --reps ${REPS:-15} 2>&1 | filt > "$log"
    echo "-- $1 gemm round $2 ($(( $(date +%s) - start )) s)"
    grep -E '^(\| )?[0-9]+(x|×)[0-9]+|geometric|residual|FAIL|rror' "$log" | head -12
}
if [ "${SKIP_BENCH:-0}" != 1 ]; then
    bench before 1; bench after 1; bench after 2; bench before 2
fi
