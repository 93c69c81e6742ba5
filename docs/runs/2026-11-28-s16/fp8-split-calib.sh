#!/usr/bin/env bash
# Session 16: FP8 split-K calibration rows in the sweep's timing mode (queued, cold inputs rotated,
# ours vs cuBLASLt blockwise and tensorwise; `baton bench gemm-fp8 --shape S [--kernel K
# --fp8-split-k N] --reps 21 --json`), one invocation per row, every row twice (pass 1 then pass 2,
# same order) so run-to-run noise can be judged. Issue #18's FP8 floor is the N = 1024, K = 32768
# column; call 1's rows of it were L2-flushed (DeepGEMM's method), these are in the sweep's mode.
# Rows: M = 8..512 at N = 1024, K = 32768 (the bundle's plan, the pre-refit plan forced where it
# moved, 2-4 allowed kernel/split pairs: units * splits <= 132, 66 slots for the c2 clusters), then
# K = 4096 at N = 1024 (M = 32, 128, 256) and N = 4096 (M = 64), then 4 off-sweep shapes whose plan
# the refit moves (new and old). 43 rows x 2 passes, ~3 s each (~260 s).
# Bundle: .lead-carry/final-bundle.tar.xz built from branch s16-fp8-split (the commit named in the
# lane's report: --fp8-split-k without --flush-l2 needs it). Writes $OUT/s.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/s"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
K=baton_gemm_fp8_blockwise_
# row PASS SHAPE [KERNEL SPLITS]: one invocation; JSON to $O/pPASS-SHAPE-KERNEL-SPLITS.json.
row() { local p=$1 s=$2; shift 2; local a=() tag=plan
  if [ $# -ge 2 ]; then a=(--kernel $K$1 --fp8-split-k $2); tag="$1-$2"; fi
  timeout 25 $BATON bench gemm-fp8 --reps 21 --shape $s "${a[@]}" --json "$O/p$p-$s-$tag.json" 2>&1 \
    | tr '\r' '\n' | grep -E "^\| [0-9]+×|refus|rror|FAIL" | sed "s|^|[p$p ${*:-plan}] |"; }
rows() { local p=$1
  # N = 1024, K = 32768 (256 K blocks). "plan" is the bundle's (the session-16 refit: 128x32 split 4
  # at M <= 128); the pre-refit plans are forced (128x64 split 7 at M = 8, 32).
  row $p 8x1024x32768; row $p 8x1024x32768 128x64_db 7; row $p 8x1024x32768 128x64_db 8
  row $p 32x1024x32768; row $p 32x1024x32768 128x64_db 7; row $p 32x1024x32768 128x64_db 8
  row $p 32x1024x32768 128x128_db 16
  row $p 64x1024x32768; row $p 64x1024x32768 128x64_db 8; row $p 64x1024x32768 128x64_db 4
  row $p 128x1024x32768; row $p 128x1024x32768 128x64_db 8; row $p 128x1024x32768 128x128_db 16
  row $p 128x1024x32768 128x128_db 8
  row $p 256x1024x32768; row $p 256x1024x32768 128x128_db 8; row $p 256x1024x32768 128x32_db 2
  row $p 256x1024x32768 128x128_db_c2 8; row $p 256x1024x32768 128x64_db 2
  row $p 512x1024x32768; row $p 512x1024x32768 128x64_db 2; row $p 512x1024x32768 128x128_db_c2 4
  row $p 512x1024x32768 256x128_sk 8
  # N = 1024, K = 4096 (32 K blocks; plans unchanged by the refit).
  row $p 32x1024x4096; row $p 32x1024x4096 128x32_db 2; row $p 32x1024x4096 128x64_db 4
  row $p 32x1024x4096 128x64_db 8
  row $p 128x1024x4096; row $p 128x1024x4096 128x64_db 8; row $p 128x1024x4096 128x128_db 8
  row $p 256x1024x4096; row $p 256x1024x4096 128x32_db 1; row $p 256x1024x4096 128x64_db 4
  # N = 4096, K = 4096 (plan unchanged).
  row $p 64x4096x4096; row $p 64x4096x4096 128x64_db 2
  # Off the sweep, plans the refit moves (new = plan, old forced): even-split rule, SPEED_128X32,
  # fixup rate (docs/runs/2026-11-28-s16/fp8-cost-refit-plan-changes.txt).
  row $p 160x5000x16384; row $p 160x5000x16384 256x128_sk 3
  row $p 64x2112x8192; row $p 64x2112x8192 128x64_db 4
  row $p 512x1024x8192; row $p 512x1024x8192 128x64_db 2
  row $p 1024x1024x7168; row $p 1024x1024x7168 128x64_db 1
}
for p in 1 2; do rows $p > "$O/rows-p$p.txt" 2>&1; echo "pass $p t=${SECONDS}s"; done
paste -d'\n' "$O/rows-p1.txt" "$O/rows-p2.txt" | cut -c1-190
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf s.tar.gz s && rm -rf s
