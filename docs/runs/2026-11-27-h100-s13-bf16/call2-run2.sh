#!/usr/bin/env bash
# Lane BF16 (session 13), call 2: same binaries as call 1 (main e2e92f5 "base", branch "new" =
# uniform-datapath stage descriptors). The full sweep base then new (call 1 ran new then base and
# its base sweep was cut by the call's limit), the layouts f64 test (29 s in the suite; call 1
# cut it at 25 s), the issue-#6 set new then base, and forced split-K plans at N = 1024,
# K = 32768 (data for the cost model). Everything lands in one tarball (the tool returns 8 files).
set -u
L=.lane-bf16; O=$OUT/c2; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $O/gpu.txt 2>&1
mkdir -p /tmp/b && tar xJf $L/bins1.tar.xz -C /tmp/b; NEW=/tmp/b/baton-new; BASE=/tmp/b/baton-base
echo "setup ${SECONDS}s" >> $O/times.txt
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 100 $BASE bench gemm --sweep --json $O/base-sweep.json --heatmap $O/base-sweep.png 2>&1 | filt > $O/base-sweep.txt
echo "base sweep ${SECONDS}s" >> $O/times.txt
timeout 100 $NEW bench gemm --sweep --json $O/new-sweep.json --heatmap $O/new-sweep.png 2>&1 | filt > $O/new-sweep.txt
echo "new sweep ${SECONDS}s" >> $O/times.txt
LT=$((255 - SECONDS)); [ $LT -gt 50 ] && LT=50; timeout $LT /tmp/b/gpu_gemm_layouts every_layout_pair_matches_f64_reference --test-threads=1 > $O/test-layouts.txt 2>&1; echo "layouts rc=$? ${SECONDS}s" >> $O/times.txt
b() { local tag=$1 bin=$2; shift 2; echo "=== $tag $*" >> $O/bench.txt; timeout 30 $bin bench gemm --reps 15 "$@" 2>&1 | tr '\r' '\n' | grep -v "^\[" >> $O/bench.txt; }
[ $SECONDS -lt 205 ] && b "r2 new set6" $NEW; [ $SECONDS -lt 228 ] && b "r2 base set6" $BASE
echo "set6 ${SECONDS}s" >> $O/times.txt
S="--shape 256x1024x32768 --shape 512x1024x32768 --shape 128x1024x32768"
for cs in "128x128 8" "128x64 8" "128x256 16" "128x128c2 8"; do set -- $cs
  [ $SECONDS -lt 252 ] && b "new $1 split $2" $NEW --config $1 --split-k $2 $S; done
echo "split ${SECONDS}s" >> $O/times.txt
cat $O/times.txt; grep -hE "test result|panicked|FAILED" $O/test-*.txt
grep -E "^===|x[0-9]+x[0-9]+ |geometric" $O/bench.txt | grep -v "^verify" | cut -c1-160
grep -E "geometric|minimum|FAIL" $O/new-sweep.txt $O/base-sweep.txt
cd $OUT && tar czf c2.tar.gz c2 && rm -rf c2
