#!/usr/bin/env bash
# Prepared in session 15 (no device time left to run it) for the next session: calibration rows for the FP8 split-K cost (issue #18's FP8 sweep floor is the N = 1024,
# K = 32768 column: 0.83-0.93x cuBLASLt). `baton bench gemm-fp8 --flush-l2 --shape S [--kernel K
# --fp8-split-k N]`, one invocation per row (DeepGEMM's method, ours vs cuBLASLt blockwise). Writes $OUT/i.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/i"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton
K=baton_gemm_fp8_blockwise_
row() { # shape [kernel split]
  local s=$1; shift; local a=(); [ $# -ge 2 ] && a=(--kernel $K$1 --fp8-split-k $2)
  timeout 25 $BATON bench gemm-fp8 --flush-l2 --shape $s "${a[@]}" 2>&1 | tr '\r' '\n' | grep -E "^\| [0-9]+×|refus|rror|FAIL" | sed "s|^|[${*:-plan}] |"
}
{
row 512x1024x32768; row 512x1024x32768 128x128_db 4; row 512x1024x32768 128x64_db 2; row 512x1024x32768 256x128_sk 8; row 512x1024x32768 128x128_db_c2 4
row 256x1024x32768; row 256x1024x32768 128x128_db 8; row 256x1024x32768 256x128_sk 16; row 256x1024x32768 128x128_db_c2 8
row 32x1024x32768; row 32x1024x32768 128x64_db 8; row 32x1024x32768 128x32_db 4; row 32x1024x32768 128x128_db 16
} > "$O/rows.txt" 2>&1
cat "$O/rows.txt" | cut -c1-170
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf i.tar.gz i && rm -rf i
