#!/usr/bin/env bash
# Session 18, call 2: the batched D epilogue (rings of 4: one fence and two barriers per 4 sub-tiles)
# and the L2 prefetch of each CTA's first stages before its setup barrier.
# 1. GEMM correctness on the new kernels (bundle of the tree with both changes): BF16/FP8 f64 and cuBLAS tests.
# 2. The traced CLI (both changes) on call 1's shapes.
# 3. Three untraced CLIs on the same shapes: base (HEAD 358f779's kernels), epi (epilogue only), pf (both).
# 4. The BF16 sweep with base and with pf, one after the other.
set -uo pipefail
D=.lead-carry/s18; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-epi baton-pf baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $OUT/gpu.txt
T=$B/tests
{ for t in gpu_gemm gpu_gemm_swap_ab gpu_gemm_split_k gpu_gemm_fp8 gpu_gemm_views; do
    timeout 120 $T/baton-reference__$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked|FAIL" ; done; } > $OUT/tests.txt 2>&1
echo "tests t=${SECONDS}s"; grep -c " ok$" $OUT/tests.txt; grep -E "FAILED|failed|panicked" $OUT/tests.txt | head
S="--shape 1024x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096 --shape 512x1024x4096 --shape 1x1024x4096 --shape 1024x3072x4096 --shape 256x4104x2056 --shape 4096x4096x4096"
timeout 120 /tmp/b/baton-trace bench trace-gemm $S --reps 21 > $OUT/trace.txt 2>&1
echo "trace t=${SECONDS}s"; grep -E "^[0-9]+x" $OUT/trace.txt
for v in base epi pf base epi pf; do b=/tmp/b/baton; [ $v != base ] && b=/tmp/b/baton-$v
  timeout 100 $b bench gemm $S --reps 21 --chart /tmp/x.png 2>&1 | grep -E "^[0-9]+x|geometric" > $OUT/shapes-$v-$SECONDS.txt
  echo "== $v t=${SECONDS}s"; cat $OUT/shapes-$v-*.txt | tail -0; grep geometric $OUT/shapes-$v-$SECONDS.txt; done
for v in base pf; do b=/tmp/b/baton; [ $v != base ] && b=/tmp/b/baton-$v
  timeout 170 $b bench gemm --sweep --json $OUT/sweep-$v.json --heatmap $OUT/sweep-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $OUT/sweep-$v.txt
  echo "sweep $v t=${SECONDS}s"; grep -E "geometric|FAIL" $OUT/sweep-$v.txt | cut -c1-150; done
