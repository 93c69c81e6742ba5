#!/usr/bin/env bash
# Lane FP8, session 13, call 2: base (main e2e92f5) vs new (s13-fp8 ef1416f, the binary of call 1),
# interleaved base/new/new/base on the changed-kernel shapes call 1 could not pair (its bench runs
# hit their 60 s limits), by --flush-l2; then forced 256-row kernels at 4096x2112x7168 (cost model).
set -u
L=.lane-fp8
R=$OUT/r2; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd $OUT && tar czf r2.tgz.tmp r2 && mv r2.tgz.tmp r2.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
left() { echo $(( 262 - $(el) )); }
mkdir -p /tmp/k && tar xJf $L/new.tar.xz -C /tmp/k && xz -dc $L/base-baton.xz > /tmp/k/base-baton && chmod +x /tmp/k/base-baton
BASE=/tmp/k/base-baton; NEW=/tmp/k/new/baton
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
S=""; for s in 4096x2112x7168 128x32768x512 128x7168x2048 64x7168x2048 128x4096x7168 64x4096x7168 128x2112x7168; do S="$S --shape $s"; done
run() { # name binary
  local t=$(( $(left) - 8 )); [ $t -gt 52 ] && t=52
  if [ $t -gt 15 ]; then timeout $t $2 bench gemm-fp8 --flush-l2 $S --json $R/$1.json > $R/$1.txt 2>&1; echo "rc=$?" >> $R/$1.txt; fi
}
stamp base-1; run base1 $BASE
stamp new-1;  run new1 $NEW
stamp new-2;  run new2 $NEW
stamp base-2; run base2 $BASE
stamp forced
for kk in baton_gemm_fp8_blockwise_256x96 baton_gemm_fp8_blockwise_256x128; do
  if [ $(left) -gt 12 ]; then timeout $(( $(left) - 2 )) $NEW bench gemm-fp8 --flush-l2 --shape 4096x2112x7168 --kernel $kk --json $R/forced-$kk.json > $R/forced-$kk.txt 2>&1; echo "rc=$?" >> $R/forced-$kk.txt; fi
done
stamp done
save
