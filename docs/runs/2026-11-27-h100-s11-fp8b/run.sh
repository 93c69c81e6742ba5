#!/usr/bin/env bash
# Lane FP8b (session 11 round 2), the one device call: new tests + sanitizers on 128x32_db (10 stages),
# then the anchor-method bench: main's plan, 128x32 forced whole and split 2 with 8 stages (base) and 10 (new).
set -u
L=.lane-fp8b
R=/tmp/r; mkdir -p $R
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
save() { (cd /tmp && tar czf $OUT/r.tgz.tmp r && mv $OUT/r.tgz.tmp $OUT/r.tgz); }
stamp() { echo "[$(el) s] $*" | tee -a $R/timeline.txt; save; }
lim() { local want=$1 left=$(( 232 - $(el) )); [ $left -lt $want ] && want=$left; [ $want -lt 1 ] && want=1; echo $want; }
mkdir -p /tmp/n /tmp/b && tar xJf $L/new.tar.xz -C /tmp/n && tar xJf $L/base.tar.xz -C /tmp/b
NEW=/tmp/n/new; BASE=/tmp/b/new
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/gpu.txt 2>&1
A=64x2112x7168; B=64x4096x7168; C=128x2112x7168; D=128x4096x7168; X=64x7168x2048
stamp tests
timeout $(lim 40) $NEW/gpu_gemm_fp8 --test-threads 1 --nocapture fp8_narrow_tiles fp8_widths_not_powers > $R/test.txt 2>&1; echo "rc=$?" >> $R/test.txt
stamp memcheck
BATON_SMALL=1 timeout $(lim 22) compute-sanitizer --tool memcheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_narrow_tiles > $R/san-memcheck.txt 2>&1; echo "rc=$?" >> $R/san-memcheck.txt
stamp racecheck
BATON_SMALL=1 timeout $(lim 25) compute-sanitizer --tool racecheck $NEW/gpu_gemm_fp8 --test-threads 1 fp8_narrow_tiles > $R/san-racecheck.txt 2>&1; echo "rc=$?" >> $R/san-racecheck.txt
stamp base-plan
timeout $(lim 36) $BASE/baton bench gemm-fp8 --flush-l2 --shape $A --shape $B --shape $C --shape $D --shape $X > $R/base-plan.txt 2>&1; echo "rc=$?" >> $R/base-plan.txt
stamp new-128x32-s1
timeout $(lim 30) $NEW/baton bench gemm-fp8 --flush-l2 --kernel 128x32_db --fp8-split-k 1 --shape $A --shape $B --shape $C --shape $D > $R/new-s1.txt 2>&1; echo "rc=$?" >> $R/new-s1.txt
stamp new-128x32-s2
timeout $(lim 19) $NEW/baton bench gemm-fp8 --flush-l2 --kernel 128x32_db --fp8-split-k 2 --shape $A --shape $C > $R/new-s2.txt 2>&1; echo "rc=$?" >> $R/new-s2.txt
stamp base-128x32-s1
timeout $(lim 19) $BASE/baton bench gemm-fp8 --flush-l2 --kernel 128x32_db --fp8-split-k 1 --shape $B --shape $D > $R/base-s1.txt 2>&1; echo "rc=$?" >> $R/base-s1.txt
stamp base-128x32-s2
timeout $(lim 19) $BASE/baton bench gemm-fp8 --flush-l2 --kernel 128x32_db --fp8-split-k 2 --shape $A --shape $C > $R/base-s2.txt 2>&1; echo "rc=$?" >> $R/base-s2.txt
stamp done
cp $R/timeline.txt $OUT/timeline.txt
