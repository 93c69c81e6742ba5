#!/usr/bin/env bash
# Lane BF16 (session 12), call 2: the model's new picks at N = 4104, K = 2048 (base vs new
# interleaved twice, and the forced tall configurations), then the BF16 sweep with this
# branch's binary and with main's (e095fa0), back to back (main's cut by the time left).
set -u
L=.lane-bf16; O=$OUT/c2; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $O/gpu.txt 2>&1
mkdir -p /tmp/b && tar xJf $L/bins2.tar.xz -C /tmp/b; NEW=/tmp/b/baton-new; BASE=/tmp/b/baton-base
$NEW info > /dev/null 2>&1; $BASE info > /dev/null 2>&1
echo "setup ${SECONDS}s" >> $O/times.txt
sh() { local a=""; for s in "$@"; do a="$a --shape $s"; done; echo $a; }
P="1024x4104x2056 1024x4104x2048 4096x4104x2048 16384x4104x2048"
b() { local tag=$1 bin=$2; shift 2; echo "=== $tag $*" >> $O/bench.txt; timeout 40 $bin bench gemm --reps 15 "$@" 2>&1 | tr '\r' '\n' | grep -v "^\[" >> $O/bench.txt; }
for r in 1 2; do
  b "r$r base picks" $BASE $(sh $P); b "r$r new picks" $NEW $(sh $P)
done
b "new 256x128c2" $NEW --config 256x128c2 $(sh $P)
echo "picks ${SECONDS}s" >> $O/times.txt
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout 200 $NEW bench gemm --sweep --json $O/new-sweep.json --heatmap $O/new-sweep.png 2>&1 | filt > $O/new-sweep.txt
echo "new sweep rc=$? ${SECONDS}s" >> $O/times.txt
timeout $((285 - SECONDS)) $BASE bench gemm --sweep --json $O/base-sweep.json --heatmap $O/base-sweep.png 2>&1 | filt > $O/base-sweep.txt
echo "base sweep rc=$? ${SECONDS}s" >> $O/times.txt
cat $O/times.txt; grep -E "^===|x[0-9]+x[0-9]+ " $O/bench.txt | grep -v "^verify" | cut -c1-150
grep -E "geometric|minimum|FAIL" $O/new-sweep.txt $O/base-sweep.txt
