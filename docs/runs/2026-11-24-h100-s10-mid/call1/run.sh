#!/usr/bin/env bash
# MID call 1: forced-config map of mid-M / ragged shapes (main's baton, c883112 build), ncu on 4096^3 and a ragged shape.
set -uo pipefail
B=.mid-bundle/before/baton
O="${OUT:-/tmp}"
mkdir -p "$O/c1"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$O/c1/gpu.txt"
T="4096x4096x4096 2048x7168x2048 512x4104x2056 2048x4104x2056 512x5000x4096 2048x5000x4096 512x4096x4096 2048x4096x4096 512x1024x32768 2048x1024x4096 512x16384x4096 2048x8192x1024 8192x4104x2056"
R="4096x4104x2056 4096x4096x2056 4096x4104x2048 4096x4096x2048 4096x4096x2064 4096x4096x2112"
ARGS=""; for s in $T; do ARGS="$ARGS --shape $s"; done
RARGS=""; for s in $R; do RARGS="$RARGS --shape $s"; done
export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | head -1)"; command -v ncu || echo "no ncu"
SECONDS=0
for cfg in default 128x256c2 128x224c2 128x128-pingpong 128x128 128x256 128x128c2; do
  if [ "$cfg" = default ]; then C=""; else C="--config $cfg"; fi
  timeout 80 $B bench gemm $ARGS $C --reps 5 --chart "$O/c1/x.png" 2>&1 | filt > "$O/c1/cfg-$cfg.txt"
  echo "$cfg: rc=$? t=${SECONDS}s $(grep geometric "$O/c1/cfg-$cfg.txt")"
done
for cfg in 128x256c2 128x128-pingpong; do
  timeout 60 $B bench gemm $RARGS --config $cfg --reps 5 --chart "$O/c1/x.png" 2>&1 | filt > "$O/c1/rag-$cfg.txt"
  echo "rag $cfg: rc=$? t=${SECONDS}s"
done
rm -f "$O/c1/x.png"
for spec in "sq 4096x4096x4096" "rag 4096x4104x2056" "al 4096x4096x2048"; do
  set -- $spec
  timeout 60 ncu --clock-control none --target-processes all -k "regex:baton_gemm_bf16_128x256_c2" --launch-skip 8 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,dram__bytes.sum,lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors.sum,lts__t_requests.sum,l1tex__m_xbar2l1tex_read_bytes.sum \
    $B bench gemm --shape $2 --config 128x256c2 --reps 3 --chart /tmp/y.png > "$O/c1/ncu-$1.txt" 2>&1
  echo "ncu $1: rc=$? t=${SECONDS}s"
done
cd "$O" && tar czf c1.tar.gz c1 && rm -rf c1
