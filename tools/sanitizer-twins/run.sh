#!/usr/bin/env bash
# Builds the CUDA C++ sanitizer twins (this folder's *.cu) with nvcc and runs
# each variant plainly (its own output check) and under compute-sanitizer
# racecheck, then prints one table: variant, output check, racecheck
# summary, and the hazard sites racecheck named. See docs/SANITIZERS.md.
#
# Usage: tools/sanitizer-twins/run.sh [work-dir]   (needs nvcc and
# compute-sanitizer: on PATH, in $CUDA_HOME/bin, or /usr/local/cuda*/bin)
# With $OUT set, the table and the full logs go to $OUT/sanitizer-twins.txt.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${1:-$(mktemp -d /tmp/sanitizer-twins.XXXXXX)}"
mkdir -p "$WORK"

find_tool() { # name -> path, or empty
    local t
    for t in "$(command -v "$1" 2>/dev/null)" "${CUDA_HOME:-/nonexistent}/bin/$1" /usr/local/cuda/bin/"$1" $(ls -d /usr/local/cuda-*/bin/"$1" 2>/dev/null | sort -V | tail -1); do
        [[ -n "$t" && -x "$t" ]] && { echo "$t"; return; }
    done
}
NVCC="$(find_tool nvcc)"
SAN="$(find_tool compute-sanitizer)"
[[ -n "$NVCC" && -n "$SAN" ]] || { echo "sanitizer-twins: need nvcc and compute-sanitizer (nvcc: '${NVCC}', compute-sanitizer: '${SAN}')" >&2; exit 2; }
REPORT="${OUT:+$OUT/sanitizer-twins.txt}"
REPORT="${REPORT:-$WORK/sanitizer-twins.txt}"
: > "$REPORT"
say() { printf '%s\n' "$*" | tee -a "$REPORT"; }

say "sanitizer twins: $("$NVCC" --version | tail -1); $("$SAN" --version | tail -1)"
command -v nvidia-smi >/dev/null && say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
BIN="$WORK/epi_load_handoff"
if ! "$NVCC" -O3 -arch=sm_90a -lineinfo -o "$BIN" "$HERE/epi_load_handoff.cu" 2>&1 | tee -a "$REPORT"; then
    say "sanitizer-twins: nvcc failed"; exit 1
fi
[[ -x "$BIN" ]] || { say "sanitizer-twins: nvcc produced no binary"; exit 1; }

ROWS=()
for v in elected all_lanes one_writer warp_reader; do
    plain="$(timeout 60 "$BIN" "$v" 2>&1)"; prc=$?
    timeout 300 "$SAN" --tool racecheck "$BIN" "$v" > "$WORK/racecheck-$v.log" 2>&1
    rrc=$?
    summary="$(grep -o 'RACECHECK SUMMARY: .*' "$WORK/racecheck-$v.log" | tail -1)"
    [[ -n "$summary" ]] || summary="no summary (rc $rrc)"
    sites="$(grep -oE '(Read|Write) access at [^[]*\+0x[0-9a-f]+' "$WORK/racecheck-$v.log" | sed -E 's/^(Read|Write) access at .*(\+0x[0-9a-f]+)$/\1 \2/' | sort | uniq -c | sort -rn | head -8 | awk '{print $2 " " $3 " x" $1}' | paste -sd ',' -)"
    ROWS+=("$(printf '%-12s | %-28s | %-58s | %s' "$v" "$( [[ $prc == 0 ]] && echo "$plain" | grep -o '[0-9]* wrong' || echo "FAIL rc $prc")" "$summary" "${sites:-none}")")
    { echo; echo "=== $v: plain run (rc $prc)"; echo "$plain"; echo "=== $v: racecheck (rc $rrc)"; head -c 20000 "$WORK/racecheck-$v.log"; } >> "$REPORT.logs"
done
# synccheck and memcheck of baton's pattern, for completeness.
for tool in synccheck memcheck; do
    timeout 300 "$SAN" --tool "$tool" "$BIN" elected > "$WORK/$tool-elected.log" 2>&1
    ROWS+=("$(printf '%-12s | %-28s | %s' "elected" "($tool)" "$(grep -o 'ERROR SUMMARY: .*' "$WORK/$tool-elected.log" | tail -1)")")
done
# The cuBLAS twin: baton's cuBLAS reference call, alone, under each tool
# (racecheck with and without the suite's kernel filter).
CUBLAS_BIN="$WORK/cublas_gemm"
CUBLAS_FLAGS=(-lcublas)
if ! "$NVCC" -O2 -arch=sm_90a -o "$CUBLAS_BIN" "$HERE/cublas_gemm.cu" "${CUBLAS_FLAGS[@]}" >> "$REPORT.logs" 2>&1; then
    # No cuBLAS in the toolkit: the wheel's (nvidia-cublas, as PyTorch installs it).
    lib="$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null ||
        find / -path '*nvidia/cublas/lib/libcublas.so*' 2>/dev/null | head -1 | xargs -r dirname | xargs -r dirname)"
    [[ -n "$lib" ]] && CUBLAS_FLAGS=(-I"$lib/include" -L"$lib/lib" -l:"$(ls "$lib/lib" | grep -m1 '^libcublas\.so')" -Xlinker -rpath="$lib/lib")
    "$NVCC" -O2 -arch=sm_90a -o "$CUBLAS_BIN" "$HERE/cublas_gemm.cu" "${CUBLAS_FLAGS[@]}" >> "$REPORT.logs" 2>&1 ||
        ROWS+=("cublas_gemm  | could not be built (no cuBLAS headers/library found; see the log)")
fi
if [[ -x "$CUBLAS_BIN" ]]; then
    for mode in plain memcheck racecheck "racecheck --kernel-name kns=baton_" synccheck initcheck; do
        f="$WORK/cublas-$(printf '%s' "$mode" | tr -c 'a-z0-9' '_').log"
        if [[ "$mode" == plain ]]; then
            timeout 120 "$CUBLAS_BIN" 512 > "$f" 2>&1
        else
            # shellcheck disable=SC2086 # mode is "tool [options]"
            timeout 300 "$SAN" --tool $mode "$CUBLAS_BIN" 512 > "$f" 2>&1
        fi
        rc=$?
        verdict="$(grep -oE 'cublas_gemm [0-9^]+: [0-9]+ of [0-9]+ sampled outputs wrong|Internal Sanitizer Error[^.]*|(RACECHECK|ERROR) SUMMARY: .*' "$f" | paste -sd ';' -)"
        ROWS+=("$(printf '%-12s | %-28s | rc %s: %s' cublas_gemm "$mode" "$rc" "${verdict:-no output}")")
        { echo; echo "=== cublas_gemm $mode (rc $rc)"; head -c 8000 "$f"; } >> "$REPORT.logs"
    done
fi
say ""
say "$(printf '%-12s | %-28s | %-58s | %s' variant "output check" "racecheck" "hazard sites (count: kind at pc)")"
for r in "${ROWS[@]}"; do say "$r"; done
cat "$REPORT.logs" >> "$REPORT" && rm -f "$REPORT.logs"
