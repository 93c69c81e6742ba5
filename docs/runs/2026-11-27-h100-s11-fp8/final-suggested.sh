#!/usr/bin/env bash
# What this lane could not run (device budget), for a merged bundle: the new GPU test after
# its fixes, sanitizers on the prefetch build, the FP8 anchor set (20 shapes) and DeepGEMM's
# runner in one call, pytest's FP8 cases. About 6-7 minutes: the flushed bench needs ~5.5 s
# a shape (host-side inputs), run.py ~2-3 min (JIT). Usage (repo root, on the device):
#   bash docs/runs/2026-11-27-h100-s11-fp8/final-suggested.sh BUNDLE_DIR ANCHOR_DIR
set -u
B=${1:-.device-bundle}; A=${2:-.lane-fp8/deepgemm}; R=$OUT/fp8; mkdir -p $R
T=$B/tests/baton-reference__gpu_gemm_fp8
timeout 150 $T --test-threads 1 > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
for tool in memcheck racecheck; do
  BATON_SMALL=1 timeout 60 compute-sanitizer --tool $tool $T --test-threads 1 fp8_half_empty fp8_a_multicast > $R/san-$tool.txt 2>&1; echo "rc=$?" >> $R/san-$tool.txt
done
timeout 200 $B/bin/baton bench gemm-fp8 --flush-l2 --json $R/baton.json > $R/baton.txt 2>&1
(cd $A && PYTHONUNBUFFERED=1 timeout 300 python3 run.py --json $R/deepgemm.json) > $R/deepgemm.txt 2>&1
