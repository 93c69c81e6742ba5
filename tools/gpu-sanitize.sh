# The sanitizer mode of tools/gpu-suite.sh (`--sanitize`), sourced by it
# (it sets BUNDLE, FILTER and HERE, exports BATON_BIN, then calls
# sanitize_main). Every GPU test under compute-sanitizer memcheck,
# racecheck, synccheck and initcheck; one table, test x tool. Needs bash,
# coreutils, tar and compute-sanitizer (on PATH, in $CUDA_HOME/bin or
# /usr/local/cuda*/bin). See the header of tools/gpu-suite.sh and
# docs/SANITIZERS.md.

san_find() {
    local t
    for t in "${COMPUTE_SANITIZER:-}" "$(command -v compute-sanitizer 2>/dev/null)" \
        "${CUDA_HOME:-/nonexistent}/bin/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer \
        $(ls -d /usr/local/cuda-*/bin/compute-sanitizer 2>/dev/null | sort -V | tail -1); do
        [[ -n "$t" && -x "$t" ]] && { echo "$t"; return 0; }
    done
    return 1
}

# san_cell LOG RC -> the table cell for one sanitizer run.
san_cell() {
    local log="$1" rc="$2" n
    if [[ "$rc" == 124 || "$rc" == 137 ]]; then
        echo "FAIL (timeout)"
        return
    fi
    # An #[ignore]d test never runs (and never calls CUDA: the sanitizer
    # then exits with an error of its own).
    if grep -q 'test result: ok. 0 passed; 0 failed; 1 ignored' "$log"; then
        echo "ignored"
        return
    fi
    # A test that passed without ever calling CUDA (argument checks, layout
    # tables): the sanitizer had nothing to check and exits with an error.
    if grep -q 'Target application terminated before first instrumented API call' "$log" &&
        grep -q 'test result: ok. 1 passed' "$log"; then
        echo "no CUDA use"
        return
    fi
    if [[ "$rc" == 0 || "$rc" == 77 ]] && grep -q 'SKIPPED' "$log" && ! grep -q 'ERROR SUMMARY: [1-9]' "$log"; then
        echo "skip"
        return
    fi
    # Summed over every process the sanitizer followed (a test may run the CLI).
    if grep -q 'RACECHECK SUMMARY:' "$log"; then
        n="$(grep -o 'RACECHECK SUMMARY: .*' "$log" |
            sed -nE 's/.*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/p' |
            awk '{n += $1 + $2; k++} END {if (k) print n}')"
        [[ -n "$n" ]] || { echo "FAIL (unparsed racecheck summary)"; return; }
    elif grep -q 'ERROR SUMMARY:' "$log"; then
        # "ERROR SUMMARY: N errors" per process (not the "... M errors
        # were not printed" line that follows when N is over the print limit).
        n="$(grep -oE 'ERROR SUMMARY: [0-9]+ errors?$' "$log" | awk '{n += $3} END {print n}')"
    else
        echo "FAIL (no sanitizer summary, rc $rc)"
        return
    fi
    if grep -q 'Internal Sanitizer Error' "$log"; then
        echo "FAIL (sanitizer internal error, rc $rc)"
    elif [[ "$rc" != 0 ]]; then
        echo "FAIL (test rc $rc, $n reports)"
    elif [[ "${n:-0}" == 0 ]]; then
        echo "clean"
    elif [[ "$(san_races_outside_baton "$log" | wc -l)" == "$n" ]]; then
        # Every report is a race inside another library's kernel (cuBLAS's
        # nvjet_* references): none in baton's. The kernels go in the notes.
        printf 'clean (+%s not baton'"'"'s)\t%s\n' "$n" "$(san_races_outside_baton "$log" | sort -u | paste -sd ' ' -)"
    else
        echo "$n reports"
    fi
}

# san_races_outside_baton LOG -> one line per racecheck report whose first
# access is in a kernel not named baton_*: that kernel's name.
san_races_outside_baton() {
    grep -oE 'Race reported between (Read|Write) access at [A-Za-z_][A-Za-z0-9_]*' "$1" |
        awk '{print $NF}' | grep -v '^baton_'
}

# san_reports_by_kernel < LOG -> "COUNT KERNEL" per kernel that a
# memcheck/initcheck/synccheck report names ("at <kernel>(" / "at void
# <kernel><"), most first.
san_reports_by_kernel() {
    sed -nE 's/^=========     at (void )?([A-Za-z_][A-Za-z0-9_:]*).*/\2/p' | sort | uniq -c | sort -rn
}

# san_cell_baton_only LOG RC CELL KERNELS -> the cell after a rerun with
# only baton's kernels instrumented: "clean (+N not baton's)<TAB>KERNELS"
# when that run passed with 0 reports, else CELL.
san_cell_baton_only() {
    if [[ "$(san_cell "$1" "$2")" == clean ]]; then
        printf 'clean (+%s not baton'"'"'s)\t%s\n' "${3% reports}" "$4"
    else
        echo "$3"
    fi
}

# san_known TEST TOOL -> "KIND<TAB>REFERENCE" of the first line of
# sanitizer-known-false-positives.tsv that names this test and tool, or
# nothing. KIND: "known=N" (exactly N reports, explained) or "skip" (not
# run under this tool).
san_known() {
    local list="$HERE/sanitizer-known-false-positives.tsv" pat tool kind ref
    [[ -f "$list" ]] || return 0
    while IFS=$'\t' read -r pat tool kind ref; do
        [[ -z "$pat" || "$pat" == \#* ]] && continue
        if [[ "$1" == *"$pat"* && "$2" == "$tool" ]]; then
            printf '%s\t%s\n' "$kind" "$ref"
            return 0
        fi
    done < "$list"
}

sanitize_main() {
    local san tools jobs stimeout deadline exclude work log summary t0
    san="$(san_find)" || {
        echo "gpu-suite --sanitize: compute-sanitizer not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda*/bin)" >&2
        return 2
    }
    read -r -a tools <<< "${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}"
    jobs="${SANITIZE_JOBS:-$(($(nproc) < 8 ? $(nproc) : 8))}"
    stimeout="${SANITIZE_TEST_TIMEOUT:-300}"
    deadline="${SANITIZE_DEADLINE:-0}"
    exclude="${SANITIZE_EXCLUDE:-gpu_faults::|gpu_hang::|linear_stage_gpu_build::}"
    work="$(mktemp -d /tmp/gpu-sanitize.XXXXXX)"
    # A caller's $OUT may name a folder not made yet (OUT=$OUT/san-x): make
    # it, or the summary is lost (sessions 11 and 12 lost theirs so).
    [[ -n "${OUT:-}" ]] && mkdir -p "$OUT"
    log="${OUT:+$OUT/gpu-sanitize.log}"
    log="${log:-$work/gpu-sanitize.log}"
    summary="${OUT:+$OUT/gpu-sanitize-summary.txt}"
    summary="${summary:-$work/gpu-sanitize-summary.txt}"
    : > "$log"
    export BATON_SMALL=1
    t0=$(date +%s)
    slog() { printf '%s\n' "$*" | tee -a "$log"; }

    slog "gpu-suite --sanitize: bundle $BUNDLE"
    [[ -f "$BUNDLE/BUILD-INFO" ]] && sed 's/^/  /' "$BUNDLE/BUILD-INFO" | tee -a "$log"
    slog "  $("$san" --version | tail -1) ($san)"
    command -v nvidia-smi > /dev/null &&
        nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/  GPU /' | tee -a "$log"
    slog "  tools: ${tools[*]}; $jobs jobs at a time; ${stimeout}s per run; BATON_SMALL=1; excluded: $exclude"

    # Every kernel is instrumented, cuBLAS's too: with a --kernel-name
    # filter that leaves cuBLAS's kernels out, racecheck makes them fault
    # ("Internal Sanitizer Error: The Sanitizer failed to handle a hardware
    # exception"; twin cublas_gemm, docs/SANITIZERS.md). `baton info` first,
    # plainly, fills the JIT cache for the jobs that follow.
    "$BUNDLE/bin/baton" info > "$work/baton-info.log" 2>&1

    # The rows: name <TAB> command words (TAB-free), smoke CLI first.
    local rows=() exe_name exe_path exe t full
    if [[ -z "$FILTER" || "cli: baton smoke" == *"$FILTER"* ]]; then
        rows+=("cli: baton smoke"$'\t'"$BUNDLE/bin/baton smoke")
    fi
    while IFS=$'\t' read -r exe_name exe_path; do
        exe="$BUNDLE/$exe_path"
        while IFS= read -r t; do
            [[ -z "$t" ]] && continue
            full="$exe_name::$t"
            [[ -n "$FILTER" && "$full" != *"$FILTER"* ]] && continue
            [[ "$full" =~ $exclude ]] && continue
            rows+=("$full"$'\t'"$exe $t --exact --nocapture --test-threads=1")
        done < <("$exe" --list --format terse 2> /dev/null | sed -n 's/: test$//p')
    done < <(grep -i gpu "$BUNDLE/tests.tsv")
    # The examples' host binaries (tools/test-examples.sh --bundle), whole,
    # like the smoke CLI: each launches its kernel from the release and the
    # debug PTX and checks every element.
    if [[ -f "$BUNDLE/examples.tsv" ]]; then
        while IFS=$'\t' read -r exe_name exe_path; do
            [[ -n "$FILTER" && "$exe_name" != *"$FILTER"* ]] && continue
            rows+=("$exe_name"$'\t'"$BUNDLE/$exe_path")
        done < "$BUNDLE/examples.tsv"
    fi
    slog "  ${#rows[@]} tests x ${#tools[@]} tools"
    slog ""

    # Run every (row, tool) job, $jobs at a time.
    local i tool name cmd started=0
    for i in "${!rows[@]}"; do
        for tool in "${tools[@]}"; do
            while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
            if ((deadline > 0 && $(date +%s) - t0 >= deadline)); then
                echo "not run" > "$work/$i.$tool.cell"
                continue
            fi
            name="${rows[$i]%%$'\t'*}"
            cmd="${rows[$i]#*$'\t'}"
            if [[ "$(san_known "$name" "$tool" | cut -f1)" == skip ]]; then
                echo "skipped (listed)" > "$work/$i.$tool.cell"
                continue
            fi
            started=$((started + 1))
            (
                local s0 s1 rc cell
                s0=$(date +%s)
                # shellcheck disable=SC2086 # cmd is a word list without quoting
                timeout -k 10 "$stimeout" "$san" --tool "$tool" --target-processes all $cmd \
                    > "$work/$i.$tool.log" 2>&1
                rc=$?
                s1=$(date +%s)
                echo "$rc" > "$work/$i.$tool.rc"
                cell="$(san_cell "$work/$i.$tool.log" "$rc")"
                # memcheck/initcheck/synccheck print the first 100 reports
                # only. When every printed one is in another library's
                # kernel (cuBLAS's split-K reduction reads its workspace
                # before writing it, say), run again with only baton's
                # kernels instrumented (--kernel-name kns=baton_): the cell
                # is "clean in baton's kernels" only if that run passes
                # with no report.
                if [[ "$tool" != racecheck && "$cell" == *" reports" ]] &&
                    [[ -n "$(san_reports_by_kernel < "$work/$i.$tool.log")" ]] &&
                    ! san_reports_by_kernel < "$work/$i.$tool.log" | grep -q ' baton_'; then
                    # shellcheck disable=SC2086 # cmd is a word list without quoting
                    timeout -k 10 "$stimeout" "$san" --tool "$tool" --target-processes all \
                        --kernel-name kns=baton_ $cmd > "$work/$i.$tool.baton-only.log" 2>&1
                    cell="$(san_cell_baton_only "$work/$i.$tool.baton-only.log" "$?" "$cell" \
                        "$(san_reports_by_kernel < "$work/$i.$tool.log" | awk '{print $2}' | paste -sd ' ' -)")"
                fi
                echo "$cell" > "$work/$i.$tool.cell"
                printf '  %-9s %4ss  %-26s %s\n' "$tool" "$((s1 - s0))" "${cell%%$'\t'*}" "$name" | tee -a "$log"
            ) &
        done
    done
    wait

    # The table.
    local width=4 cell extra ref row ncl=0 nother=0 nsk=0 nfp=0 nlist=0 nrep=0 nfail=0 nnot=0 notes=()
    for i in "${!rows[@]}"; do
        name="${rows[$i]%%$'\t'*}"
        ((${#name} > width)) && width=${#name}
    done
    {
        echo ""
        echo "### sanitizer summary (compute-sanitizer, BATON_SMALL=1; $(($(date +%s) - t0)) s wall)"
        row="$(printf "%-${width}s" test)"
        for tool in "${tools[@]}"; do row+="$(printf ' | %-24s' "$tool")"; done
        echo "$row"
        for i in "${!rows[@]}"; do
            name="${rows[$i]%%$'\t'*}"
            row="$(printf "%-${width}s" "$name")"
            for tool in "${tools[@]}"; do
                cell="$(cat "$work/$i.$tool.cell" 2> /dev/null || echo "not run")"
                extra=""
                [[ "$cell" == *$'\t'* ]] && extra="${cell#*$'\t'}" && cell="${cell%%$'\t'*}"
                ref="$(san_known "$name" "$tool")"
                case "$cell" in
                    clean) ncl=$((ncl + 1)) ;;
                    "clean (+"*)
                        nother=$((nother + 1))
                        extra="${cell#clean (+}: $extra"
                        notes+=("$name / $tool: no report in baton's kernels; ${extra/)/}")
                        ;;
                    skip | ignored | "no CUDA use") nsk=$((nsk + 1)) ;;
                    "skipped (listed)")
                        nlist=$((nlist + 1))
                        notes+=("$name / $tool: not run: ${ref#*$'\t'}")
                        ;;
                    "not run") nnot=$((nnot + 1)) ;;
                    FAIL*) nfail=$((nfail + 1)) ;;
                    *reports)
                        if [[ "${ref%%$'\t'*}" == "known=${cell% reports}" ]]; then
                            cell="$cell (known)"
                            notes+=("$name / $tool: ${ref#*$'\t'}")
                            nfp=$((nfp + 1))
                        else
                            nrep=$((nrep + 1))
                        fi
                        ;;
                esac
                row+="$(printf ' | %-24s' "$cell")"
            done
            echo "$row"
        done
        echo ""
        for ref in "${notes[@]}"; do echo "note: $ref"; done
        echo "cells: clean $ncl, clean in baton's kernels (reports only in other libraries' kernels) $nother, skip $nsk, known reports $nfp, not run by the known list $nlist, unexplained reports $nrep, FAIL $nfail, not run (deadline) $nnot"
    } > "$summary"
    tee -a "$log" < "$summary"
    if [[ -n "${OUT:-}" ]]; then
        tar -C "$work" -czf "$OUT/gpu-sanitize-logs.tar.gz" . 2> /dev/null
    else
        slog "logs: $work"
    fi
    ((nrep == 0 && nfail == 0 && nnot == 0))
}
