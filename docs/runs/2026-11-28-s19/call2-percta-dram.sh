#!/usr/bin/env bash
# Session 19, call 2 (H200): (1) per-CTA timelines (SM of each CTA) at small shapes, cold inputs:
# are the slow CTAs of a launch where they ran? (2) the BF16 heuristic at this GPU's DRAM peak
# (`Gpu::bf16_machine`, new) against the H100's rates (base, HEAD's CLI) on the small-M rows of
# call 1, alternating base/new twice. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-base baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.max.mem,power.limit,driver_version --format=csv | tee $O/gpu.txt
T="--shape 1x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096 --shape 1024x1024x4096 --shape 1x4096x4096"
timeout 60 /tmp/b/baton-trace bench trace-gemm $T --reps 15 --per-cta $O/percta.csv > $O/trace.txt 2>&1; echo "trace rc=$? t=${SECONDS}s"
timeout 30 /tmp/b/baton-trace bench trace-gemm --shape 64x1024x4096 --config 128x64 --split-k 4 --reps 15 --per-cta $O/percta-forced.csv > $O/trace-forced.txt 2>&1; echo "trace forced rc=$? t=${SECONDS}s"
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
S=""; for m in 1 8 32 64 128 256; do for nk in $NK; do S="$S --shape ${m}x$nk"; done; done
for v in base new base new; do b=/tmp/b/baton; [ $v = base ] && b=/tmp/b/baton-base
  timeout 100 $b bench gemm --reps 21 $S > $O/small-$v-$SECONDS.txt 2>&1; echo "$v rc=$? t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
