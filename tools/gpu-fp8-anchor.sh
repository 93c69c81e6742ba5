#!/usr/bin/env bash
# Issue #19's same-call comparison: baton's blockwise FP8 GEMM and cuBLASLt
# blockwise timed by the DeepGEMM anchor's method (`baton bench gemm-fp8
# --flush-l2`), then DeepGEMM and torch's blockwise scaled_mm in the anchor's
# own runner, in one device call.
#
#   here:   mkdir -p .anchors && cp -r ../shared/anchors/deepgemm .anchors/   (.anchors/ git-ignored)
#   device: bash tools/gpu-fp8-anchor.sh <baton-binary> .anchors/deepgemm   (carry the binary's folder and .anchors)
#
# Results (text and JSON) go to $OUT (or /tmp).
set -u
BATON="${1:?usage: tools/gpu-fp8-anchor.sh <baton-binary> <deepgemm-anchor-dir>}"
ANCHOR="${2:?usage: tools/gpu-fp8-anchor.sh <baton-binary> <deepgemm-anchor-dir>}"
O="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 240 "$BATON" bench gemm-fp8 --flush-l2 --json "$O/baton-flushed.json" > "$O/baton-flushed.txt" 2>&1
echo "baton rc=$?"
grep -E "^\||geometric|FAIL" "$O/baton-flushed.txt" | tail -24
(cd "$ANCHOR" && PYTHONUNBUFFERED=1 timeout 330 python3 run.py --json "$O/deepgemm.json" > "$O/deepgemm.txt" 2>&1)
echo "deepgemm rc=$?"
tail -40 "$O/deepgemm.txt"
