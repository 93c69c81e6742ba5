#!/usr/bin/env bash
# MID call 2: before (main b86155f, fair bench) / after (h-mid 9874a02 = b86155f + f724e3e) on the issue-#6 set (tools/gpu-before-after.sh)
# and a held-out sweep subset (A B B A), forced-config maps, ncu of cuBLAS at 4096^3 and 4096x4096x2056.
set -uo pipefail
A=.mid-bundle/before/baton; B=.mid-bundle/after/baton
O0="${OUT:-/tmp}"; O="$O0/c2"; mkdir -p "$O"
export PATH="$PATH:/usr/local/cuda/bin"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
SECONDS=0
OUT="$O" bash .mid-bundle/gpu-before-after.sh $A $B 21 > "$O/before-after.txt" 2>&1
echo "before-after: t=${SECONDS}s"; grep round "$O/before-after.txt"
H="256x5000x4096 1024x5000x4096 4096x5000x4096 8192x5000x4096 1024x4104x2056 4096x4104x2056 16384x4104x2056 1024x4096x4096 4096x1024x4096 1024x8192x1024 256x8192x1024 1024x16384x4096 2048x16384x4096 4096x4104x2048"
HA=""; for s in $H; do HA="$HA --shape $s"; done
for r in 1 2; do
  for side in $( [ $r = 1 ] && echo "before after" || echo "after before" ); do
    bin=$A; [ $side = after ] && bin=$B
    timeout 90 $bin bench gemm $HA --reps 11 --chart /tmp/x.png 2>&1 | filt > "$O/held-$side-$r.txt"
    echo "held $side $r: t=${SECONDS}s $(grep geometric "$O/held-$side-$r.txt")"
  done
done
F="1024x5000x4096 4096x4104x2048 4096x4104x2056 16384x4104x2056 65536x4104x2056"
FA=""; for s in $F; do FA="$FA --shape $s"; done
for cfg in 128x224c2 128x256c2 128x128-pingpong 128x128c2; do
  timeout 60 $B bench gemm $FA --config $cfg --reps 5 --chart /tmp/x.png 2>&1 | filt > "$O/forced-$cfg.txt"
  echo "forced $cfg: t=${SECONDS}s"
done
for spec in "128x64 3" "128x64 4" "128x64 8" "128x128 2" "128x128 4" "128x128 8"; do
  set -- $spec
  timeout 30 $B bench gemm --shape 256x1024x32768 --shape 512x1024x32768 --config $1 --split-k $2 --reps 7 --chart /tmp/x.png 2>&1 | filt > "$O/longk-$1-s$2.txt"
done
echo "longk: t=${SECONDS}s"
for spec in "sq 4096x4096x4096" "rag 4096x4096x2056"; do
  set -- $spec
  timeout 60 ncu --clock-control none --target-processes all -k "regex:^(nvjet|sm90|cutlass)" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
    --metrics lts__t_bytes.sum,dram__bytes.sum,lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed_op_ldgsts.sum,sm__inst_executed_pipe_uniform.sum \
    $A bench gemm --shape $2 --config 128x256c2 --reps 3 --chart /tmp/y.png > "$O/ncu-cublas-$1.txt" 2>&1
  echo "ncu cublas $1: rc=$? t=${SECONDS}s"
done
cd "$O0" && tar czf c2.tar.gz c2 && rm -rf c2
