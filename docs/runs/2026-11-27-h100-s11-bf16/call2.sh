#!/usr/bin/env bash
# Lane BF16, call 2 (session 11): after = h-bf16 (overlapped split-K/stream-K fixup in the cooperative
# BF16 kernels, even split counts only); before = main 1b9a3c8 (base bundle), before-forced = baton-c1
# (main + the bench's verify fallback for forced split counts).
set -u
SECONDS=0
O=$OUT/c2; mkdir -p $O /tmp/af /tmp/bb
tar xJf .lane-bf16/after.tar.xz -C /tmp/af; tar xJf .lane-bf16/base-bundle.tar.xz -C /tmp/bb .base-bundle/bin/baton
A=/tmp/af/baton; B=/tmp/bb/.base-bundle/bin/baton; C=.lane-bf16/baton-c1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1; date -u >> $O/gpu.txt
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
$A info > /dev/null 2>&1
# 1. correctness (foreground) + sanitizers (background, BATON_SMALL=1)
(BATON_SMALL=1 timeout 85 $SAN --tool memcheck --target-processes all /tmp/af/gpu_gemm_split_k bf16_split_k_matches_f64_on_ragged_shapes --exact --nocapture --test-threads=1 > $O/san-memcheck-splitk.txt 2>&1; echo "rc=$?" >> $O/san-memcheck-splitk.txt) &
(BATON_SMALL=1 timeout 85 $SAN --tool racecheck --target-processes all /tmp/af/gpu_gemm_split_k bf16_split_k_matches_f64_on_ragged_shapes --exact --nocapture --test-threads=1 > $O/san-racecheck-splitk.txt 2>&1; echo "rc=$?" >> $O/san-racecheck-splitk.txt) &
(BATON_SMALL=1 timeout 85 $SAN --tool memcheck --target-processes all /tmp/af/gpu_gemm stream_k_matches_f64_reference_on_ragged_shapes --exact --nocapture --test-threads=1 > $O/san-memcheck-streamk.txt 2>&1; echo "rc=$?" >> $O/san-memcheck-streamk.txt) &
timeout 60 /tmp/af/gpu_gemm_split_k --test-threads=1 > $O/test-split-k.txt 2>&1; echo "split_k rc=$? t=$SECONDS"
timeout 60 /tmp/af/gpu_gemm --test-threads=1 > $O/test-gemm.txt 2>&1; echo "gemm rc=$? t=$SECONDS"
wait; echo "sanitizers done t=$SECONDS"
for f in $O/san-*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result|rc=' $f | tr '\n' ' ')"; done
grep -E "test result|FAILED|panicked" $O/test-*.txt
# 2. before/after, default plans (reps 11), one process each
S="--shape 128x1024x4096 --shape 256x1024x4096 --shape 512x1024x4096 --shape 1024x1024x4096 --shape 128x1024x32768 --shape 256x1024x32768 --shape 512x1024x32768 --shape 192x1536x16384 --shape 128x2048x8192 --shape 256x3072x24576 --shape 384x1024x4096 --shape 256x2048x4096 --shape 640x1024x6144 --shape 512x2048x6144 --shape 256x2048x24576 --shape 8192x4104x2056 --shape 16384x4096x4096 --shape 8192x5000x4096 --shape 4096x4096x4096 --shape 1024x4104x2056"
f() { grep -E "^[0-9]+x|geometric" ; }
timeout 40 $B bench gemm --reps 11 $S > $O/ba-before.txt 2>&1; echo "before t=$SECONDS"
timeout 40 $A bench gemm --reps 11 $S > $O/ba-after.txt 2>&1; echo "after t=$SECONDS"
# 3. forced plans, same plan before (c1) / after
fr() { local tag=$1; shift; for bin in C A; do echo "=== $tag $bin $*"; eval timeout 20 \$$bin bench gemm --reps 11 "$@" 2>&1 | f; done; }
{ fr s4 --config 128x64 --split-k 4 --shape 128x1024x4096 --shape 256x1024x4096 --shape 256x1024x32768
  fr s8 --config 128x128 --split-k 8 --shape 256x1024x32768 --shape 128x1024x4096
  fr s8w --config 128x256 --split-k 8 --shape 512x1024x32768 --shape 256x1024x32768
  fr s3div --config 128x64 --split-k 3 --shape 256x1024x24576 --shape 256x1024x3072
  fr s4div --config 128x64 --split-k 4 --shape 256x1024x24576 --shape 256x1024x3072
  echo "=== ragged after only"; timeout 20 $A bench gemm --reps 11 --config 128x256c2 --stream-k 8 --sk-waves 0 --shape 1024x4104x2056 --shape 2048x4104x2056 --shape 4096x4104x2056 2>&1 | f
} > $O/forced.txt 2>&1; echo "forced t=$SECONDS"
cat $O/forced.txt
echo "--- default before"; f < $O/ba-before.txt; echo "--- default after"; f < $O/ba-after.txt
# 4. sweep, after binary, whatever time is left
left=$((243 - SECONDS)); echo "sweep with ${left}s"
timeout $left $A bench gemm --sweep --reps 7 --heatmap $O/bf16-sweep.png --json $O/gemm-sweep.json > $O/gemm-sweep.txt 2>&1; echo "sweep rc=$? t=$SECONDS"
tail -3 $O/gemm-sweep.txt
cd $OUT && tar czf c2.tar.gz c2
