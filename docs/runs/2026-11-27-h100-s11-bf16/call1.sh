#!/usr/bin/env bash
# Lane BF16, call 1: forced configurations/splits on the long-K, tall and ragged losers
# (bench-only change to allow forced split-K), ncu of cuBLAS's kernel at 3 shapes, ncu of ours at 256x1024x32768.
set -u
B=.lane-bf16/baton-c1
O=$OUT/c1; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt 2>&1
L1=256x1024x32768; L2=512x1024x32768; T1=128x1024x4096; T2=256x1024x4096; T3=512x1024x4096; T4=1024x1024x4096; R=1024x4104x2056
X1=384x2048x16384; X2=768x1024x8192
sh() { local a=""; for s in "$@"; do a="$a --shape $s"; done; echo $a; }
run() { local tag=$1; shift; echo "=== $tag $*" >> $O/grid.txt; timeout 60 $B bench gemm --reps 7 "$@" 2>&1 | grep -v "^verify" >> $O/grid.txt; }
start=$(date +%s)
run default $(sh $L1 $L2 $T1 $T2 $T3 $T4 $R $X1 $X2)
run pp --config 128x128-pingpong $(sh $L1 $L2 $T1 $T2 $T3 $T4 $R $X1 $X2)
run c128 --config 128x128 --split-k 1 $(sh $L1 $L2 $T1 $T2 $T3 $T4 $R)
run c256c2 --config 128x256c2 --split-k 1 $(sh $L1 $L2 $T3 $T4 $R)
run c224c2 --config 128x224c2 --split-k 1 $(sh $R)
run c128c2 --config 128x128c2 --split-k 1 $(sh $T4 $R)
run c64s2 --config 128x64 --split-k 2 $(sh $L1 $L2 $T1 $T2 $T3)
run c64s4 --config 128x64 --split-k 4 $(sh $L1 $T1 $T2)
run c128s2 --config 128x128 --split-k 2 $(sh $L1 $L2 $T1 $T2 $T3 $T4)
run c128s4 --config 128x128 --split-k 4 $(sh $L1 $L2 $T1 $T2 $T3)
run c128s8 --config 128x128 --split-k 8 $(sh $L1 $T1 $T2)
run c256c2s2 --config 128x256c2 --split-k 2 $(sh $L1 $L2 $T1 $T2 $T3 $T4)
run c256c2s4 --config 128x256c2 --split-k 4 $(sh $L1 $L2 $T1 $T2 $T3 $T4)
run c256c2s8 --config 128x256c2 --split-k 8 $(sh $L1 $L2 $T1 $T2 $T3)
run c256c2s16 --config 128x256c2 --split-k 16 $(sh $L1 $T1 $T2)
run c256s4 --config 128x256 --split-k 4 $(sh $L1 $L2 $T2 $T3)
run c256s8 --config 128x256 --split-k 8 $(sh $L1 $L2 $T3)
echo "grid took $(( $(date +%s) - start )) s" >> $O/grid.txt
cat > /tmp/mm.py <<'PY'
import torch, sys
for s in sys.argv[1:]:
    m, n, k = map(int, s.split("x"))
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize(); torch.cuda.nvtx.range_push("mm"); c = a @ b.t(); torch.cuda.nvtx.range_pop(); torch.cuda.synchronize()
PY
S="--section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis"
timeout 90 ncu --clock-control none --nvtx --nvtx-include "mm/" $S python3 /tmp/mm.py $L1 $T3 $T4 $R 16384x4104x2056 > $O/ncu-cublas.txt 2>&1
timeout 40 ncu --clock-control none -k regex:baton_gemm --launch-skip 10 --launch-count 1 $S $B bench gemm --reps 3 --shape $L1 > $O/ncu-ours-L1.txt 2>&1
echo "total $(( $(date +%s) - start )) s" >> $O/grid.txt
cat $O/grid.txt | grep -v "^GPU\|^device\|^inputs\|^$"
grep -E "^  [a-z_]|Grid Size|Cluster Size|Block Size|Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Registers" $O/ncu-cublas.txt | head -80
