#!/usr/bin/env bash
# Session 16, final call A (bundle + wheel of main b5a7fbf: the BF16 re-pack with its refit, the FP8 split-K
# refit): the GPU suite, pytest on the wheel, FP8 off-sweep shapes whose plan the refit moved (old plan
# forced beside the new), and ncu kernel durations at two small BF16 shapes (ours vs cuBLAS). Writes $OUT/f.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/f"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 250 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $C/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 90 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
K=baton_gemm_fp8_blockwise_
frow() { local s=$1; shift; local a=(); [ $# -ge 2 ] && a=(--kernel $K$1 --fp8-split-k $2)
  timeout 25 $BATON bench gemm-fp8 --reps 21 --shape $s "${a[@]}" 2>&1 | tr '\r' '\n' | grep -E "^\| [0-9]+×|refus|rror|FAIL" | sed "s|^|[${*:-plan}] |"; }
{ for p in 1 2; do
  frow 256x5000x16384; frow 256x5000x16384 256x128_sk 3
  frow 160x2112x7168; frow 160x2112x7168 128x64_db 2
  frow 1024x1024x7168; frow 1024x1024x7168 128x64_db 1
  frow 16x2112x7168; frow 16x2112x7168 128x64_db 4
done; } > "$O/fp8-offsweep-rows.txt" 2>&1
echo "fp8 off-sweep t=${SECONDS}s"; cut -c1-170 "$O/fp8-offsweep-rows.txt"
for s in 64x1024x4096 512x1024x4096; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size -c 40 $BATON bench gemm --shape $s --reps 3 --chart /tmp/x.png > "$O/ncu-$s.txt" 2>&1
  echo "ncu $s rc=$? t=${SECONDS}s"
  grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|launch__grid_size" "$O/ncu-$s.txt" | paste - - - | sed 's/  */ /g' | cut -c1-200 | tail -14
done
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf f.tar.gz f && rm -rf f
