#!/usr/bin/env bash
# Session 32's device call: unpacks the xz'd device bundle that .device-carry holds
# (tar of .device-bundle, built with BUNDLE_TESTS='gpu_gemm'; the plain bundle is 194 MiB, over
# the 64 MiB carry limit) and DeepGEMM's anchor, then runs session 31's call-first.sh, with the
# FP8 tests under compute-sanitizer after its small rows when time is left.
# Usage (device): LIMIT=<timeout - 30> bash docs/runs/2026-12-07-s32/call.sh
set -uo pipefail
T0=$SECONDS
mkdir -p /tmp/b && xz -dc .device-carry/bundle.tar.xz | tar -xf - -C /tmp/b
cp -r .device-carry/deepgemm /tmp/b/.device-bundle/
echo "unpacked in $((SECONDS-T0)) s"
export D=/tmp/b/.device-bundle
export LIMIT=$(( ${LIMIT:-560} - (SECONDS-T0) ))
bash docs/runs/2026-12-07-s31-next/call-first.sh
