#!/usr/bin/env bash
# Profiling helpers for the GPU machine (run through the device tool with
# carry [".device-bundle"]): Nsight Compute sections for one launch of a
# GEMM kernel at one shape, written to $OUT/<name>.ncu.txt.
#
# Usage: tools/device-profile.sh <bundle> <name> <kernel-regex> <skip> -- <baton args...>
#   skip: matching launches to skip (verification launches come first).
set -uo pipefail
BUNDLE="$1"; NAME="$2"; KREGEX="$3"; SKIP="$4"; shift 5
OUTF="${OUT:-/tmp}/$NAME.ncu.txt"
ncu --target-processes all -k "regex:$KREGEX" --launch-skip "$SKIP" --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section Occupancy \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes.sum \
    "$BUNDLE/bin/baton" "$@" > "$OUTF" 2>&1
echo "== $NAME: $(wc -l < "$OUTF") lines in $OUTF"
grep -E "Duration|gmma|Throughput|Busy|Stall|Issue Slot|Shared|L2 Hit|Registers|Warp Cycles|No Eligible|Active Warps" "$OUTF" | head -60
