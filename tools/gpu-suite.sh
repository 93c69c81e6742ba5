#!/usr/bin/env bash
# Runs a device bundle (tools/make-device-bundle.sh) on the GPU machine:
# the CLI's `baton info` and `baton smoke`, then every test of every bundled
# test executable, one test per process, then the examples' host binaries
# (examples.tsv, when bundled), and prints a summary table last
# (test, PASS/FAIL/SKIP, seconds). Needs bash and coreutils only: the device
# machine has no registry and no Rust toolchain.
#
# A test counts as SKIP when it passes and prints "SKIPPED" (GPU tests do so
# without a usable GPU). Each test is limited to $SUITE_TEST_TIMEOUT seconds
# (default 120); a timeout is a FAIL (a hung mbarrier wait, say).
#
# When $OUT is set (the device tool), the full log and the table are also
# written to $OUT/gpu-suite.log and $OUT/gpu-suite-summary.txt.
#
# Usage: tools/gpu-suite.sh [--sanitize] <bundle-dir | bundle.tar.xz> [substring-filter]
# (a .tar.xz is the packed bundle that make-device-bundle.sh writes when the
# folder is over the carry limit; it is unpacked under /tmp first)
# Exit status: 0 when nothing failed, 1 otherwise.
#
# --sanitize: every GPU test (the executables named *gpu*, and `baton
# smoke`) under compute-sanitizer memcheck, racecheck, synccheck and
# initcheck, at small sizes (BATON_SMALL=1), one process per test and tool,
# $SANITIZE_JOBS at a time (default: CPUs, at most 8), each limited to
# $SANITIZE_TEST_TIMEOUT seconds (default 300); with $SANITIZE_DEADLINE
# (seconds) no new job starts after that long. Every kernel is
# instrumented, the cuBLAS references' too.
# Tests that fault on purpose and the build-only test ($SANITIZE_EXCLUDE, an
# extended regex; default gpu_faults::, gpu_hang::, linear_stage_gpu_build::)
# are left out. Prints one table, test x tool: clean, skip (no usable GPU),
# ignored (#[ignore]), no CUDA use (the test never called CUDA), N reports,
# N reports (known), skipped (listed), FAIL (...), not run (deadline).
# sanitizer-known-false-positives.tsv beside this script lists explained
# reports (test substring, tool, known=N, reference: exactly N reports, each
# a false positive shown by a CUDA C++ twin or a deliberate API error) and
# runs left out (..., skip, reason); see docs/SANITIZERS.md. Exit 0 only
# when no cell is unexplained reports, FAIL or not run.
# With $OUT set: $OUT/gpu-sanitize.log (the table and
# progress), $OUT/gpu-sanitize-summary.txt and $OUT/gpu-sanitize-logs.tar.gz
# (every sanitizer log).
set -uo pipefail

SANITIZE=0
if [[ "${1:-}" == "--sanitize" ]]; then
    SANITIZE=1
    shift
fi
BUNDLE="${1:?usage: tools/gpu-suite.sh [--sanitize] <bundle-dir | bundle.tar.xz> [filter]}"
FILTER="${2:-}"
if [[ -f "$BUNDLE" && "$BUNDLE" == *.tar.xz ]]; then
    # A packed bundle (make-device-bundle.sh packs one over the carry limit).
    UNPACKED="$(mktemp -d /tmp/gpu-suite-bundle.XXXXXX)"
    tar -C "$UNPACKED" -xJf "$BUNDLE" || { echo "gpu-suite: cannot unpack $BUNDLE" >&2; exit 2; }
    BUNDLE="$(find "$UNPACKED" -mindepth 2 -maxdepth 2 -name tests.tsv -printf '%h\n' | head -1)"
    BUNDLE="${BUNDLE:-$UNPACKED}"
fi
TIMEOUT="${SUITE_TEST_TIMEOUT:-120}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -f "$BUNDLE/tests.tsv" && -x "$BUNDLE/bin/baton" ]] || {
    echo "gpu-suite: $BUNDLE is not a device bundle (no tests.tsv or bin/baton); make one with tools/make-device-bundle.sh" >&2
    exit 2
}
BUNDLE="$(cd "$BUNDLE" && pwd)"
# Tests that run the CLI find it here (their build-time path is not on this machine).
export BATON_BIN="$BUNDLE/bin/baton"
if [[ $SANITIZE == 1 ]]; then
    # shellcheck source=tools/gpu-sanitize.sh
    source "$HERE/gpu-sanitize.sh"
    sanitize_main
    exit $?
fi
[[ -n "${OUT:-}" ]] && mkdir -p "$OUT"
LOG="${OUT:+$OUT/gpu-suite.log}"
LOG="${LOG:-$(mktemp /tmp/gpu-suite.XXXXXX.log)}"
SUMMARY="${OUT:+$OUT/gpu-suite-summary.txt}"
SUMMARY="${SUMMARY:-${LOG%.log}-summary.txt}"
: > "$LOG"
ROWS=()
NPASS=0 NFAIL=0 NSKIP=0
TMP="$(mktemp)"
trap 'rm -f "$TMP"; [[ -n "${UNPACKED:-}" ]] && rm -rf "$UNPACKED"' EXIT

log() { printf '%s\n' "$*" | tee -a "$LOG"; }

# record NAME RC SECONDS OUTPUT-FILE
record() {
    local name="$1" rc="$2" secs="$3" file="$4" status
    if [[ "$rc" == 0 ]]; then
        # SKIPPED: no usable GPU; "1 ignored": an #[ignore] test that did not run.
        if grep -q -e 'SKIPPED' -e '0 passed; 0 failed; 1 ignored' "$file"; then status=SKIP; else status=PASS; fi
    elif [[ "$rc" == 77 ]]; then
        status=SKIP
    elif [[ "$rc" == 124 || "$rc" == 137 ]]; then
        status="FAIL(timeout ${TIMEOUT}s)"
    else
        status="FAIL(rc $rc)"
    fi
    case "$status" in PASS) NPASS=$((NPASS + 1)) ;; SKIP) NSKIP=$((NSKIP + 1)) ;; *) NFAIL=$((NFAIL + 1)) ;; esac
    local row
    row="$(printf '%-4s %7s  %s' "${status%%(*}" "$secs" "$name")"
    [[ "$status" == *"("* ]] && row="$row  [${status#*(}" && row="${row%)}]"
    ROWS+=("$row")
    # Progress line, so a run cut short still shows what finished.
    echo "  $row"
}

run_one() { # NAME -- command...
    local name="$1"; shift; shift
    local t0 t1 rc
    t0=$(date +%s.%N)
    # -k: a process that ignores SIGTERM (stuck in the driver) is killed.
    timeout -k 10 "$TIMEOUT" "$@" > "$TMP" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    { echo "=== $name (rc $rc)"; cat "$TMP"; } >> "$LOG"
    record "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" "$TMP"
}

log "gpu-suite: bundle $BUNDLE"
[[ -f "$BUNDLE/BUILD-INFO" ]] && sed 's/^/  /' "$BUNDLE/BUILD-INFO" | tee -a "$LOG"
log "host: $(uname -srm), $(nproc) CPUs"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/  GPU /' | tee -a "$LOG"
else
    log "  nvidia-smi: not found (GPU tests will SKIP)"
fi

# 1. The CLI: its output goes to the console in full (the smoke table).
for sub in info smoke; do
    if [[ -z "$FILTER" || "baton $sub" == *"$FILTER"* ]]; then
        log ""
        log "### baton $sub"
        t0=$(date +%s.%N)
        timeout -k 10 "$TIMEOUT" "$BUNDLE/bin/baton" "$sub" > "$TMP" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        tee -a "$LOG" < "$TMP"
        record "cli: baton $sub" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" "$TMP"
    fi
done

# 2. Every test of every bundled executable, one per process.
log ""
log "### tests, smoke then other GPU ones first (output of each in $LOG)"
while IFS=$'\t' read -r exe_name exe_path; do
    exe="$BUNDLE/$exe_path"
    tests="$("$exe" --list --format terse 2>/dev/null | sed -n 's/: test$//p')"
    [[ -z "$tests" ]] && continue
    while IFS= read -r t; do
        full="$exe_name::$t"
        [[ -n "$FILTER" && "$full" != *"$FILTER"* ]] && continue
        run_one "$full" -- "$exe" --exact "$t" --nocapture --test-threads=1
    done <<< "$tests"
done < <(grep -i smoke "$BUNDLE/tests.tsv"; grep -i gpu "$BUNDLE/tests.tsv" | grep -vi smoke; grep -vi gpu "$BUNDLE/tests.tsv")

# 3. The examples' host binaries (examples/*/, bundled by
#    tools/test-examples.sh --bundle): each launches its kernel on fresh
#    random input and checks every output element; PASS/FAIL lines per case.
if [[ -f "$BUNDLE/examples.tsv" ]]; then
    log ""
    log "### examples"
    while IFS=$'\t' read -r ex_name ex_path; do
        [[ -n "$FILTER" && "$ex_name" != *"$FILTER"* ]] && continue
        run_one "$ex_name" -- "$BUNDLE/$ex_path"
    done < "$BUNDLE/examples.tsv"
fi

{
    echo ""
    echo "### summary"
    printf '%-4s %7s  %s\n' "res" "secs" "test"
    printf '%s\n' "${ROWS[@]}"
    echo ""
    echo "total: $((NPASS + NFAIL + NSKIP)) — PASS $NPASS, FAIL $NFAIL, SKIP $NSKIP"
} > "$SUMMARY"
cat "$SUMMARY" | tee -a "$LOG"
[[ "$NFAIL" == 0 ]]
