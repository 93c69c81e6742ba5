#!/usr/bin/env bash
# Session 22, call 2 (H200): the cost model at the device's DRAM bandwidth (Gpu::dram_bytes_per_s,
# OnGpu / fp8::plan_on) against session 21's final tree (base, H100 rates everywhere).
# BF16 sweep new then base, FP8 sweep base then new, and issue #19's 128x7168x16384 by DeepGEMM's
# method (its FP8 plan moves). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
for v in new base; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  timeout 110 $bin bench gemm --sweep --json $O/sweep-bf16-$v.json --heatmap $O/sweep-bf16-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16-$v.txt
  echo "sweep bf16 $v t=${SECONDS}s $(grep -m1 GPU: $O/sweep-bf16-$v.txt) $(grep geometric $O/sweep-bf16-$v.txt)"; done
for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 330 ] && { timeout 150 $bin bench gemm-fp8 --sweep --json $O/sweep-fp8-$v.json --heatmap $O/sweep-fp8-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-fp8-$v.txt
  echo "sweep fp8 $v t=${SECONDS}s $(grep geometric $O/sweep-fp8-$v.txt)"; }; done
for v in base new base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 540 ] && timeout 30 $bin bench gemm-fp8 --flush-l2 --shape 128x7168x16384 --shape 8x16384x4096 2>&1 | grep -E "^\| [0-9]" | sed "s/^/$v /" >> $O/fp8-flush.txt; done
echo "flush t=${SECONDS}s"; cat $O/fp8-flush.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
