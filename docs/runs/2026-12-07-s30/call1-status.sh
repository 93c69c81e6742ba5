#!/usr/bin/env bash
# Prepared in session 29 for the next session's first device call (H100):
# what main has not been measured with yet. Build the CLI (`cargo build
# --release -p baton-cli`), `xz -c target/release/baton > $D/baton.xz`, copy
# ../shared/anchors/deepgemm into $D, carry $D. Each section runs only if
# time is left before LIMIT (default 560 s).
#  1. BF16 sweep (ping-pong L2 rule), ours and cuBLAS in one process (~100 s).
#  2. Issue #19's 8 large rows by DeepGEMM's method (the plan) and DeepGEMM.
#  3. The issue-#6 BF16 set (`bench gemm`, default shapes).
#  4. The FP8 sweep (vs cuBLASLt blockwise).
set -uo pipefail
D=${D:-.lead-carry/s30a}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
left 140 && { timeout 140 /tmp/baton bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt; }
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
left 60 && { (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 60 python3 run.py --shapes $LARGE --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt; }
left 130 && { timeout 130 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/large.json > $O/large.txt 2>&1; echo "fp8 large rc=$? t=${SECONDS}s"; grep -E '^\| [0-9]|geometric' $O/large.txt; }
left 60 && { timeout 60 /tmp/baton bench gemm --json $O/set6.json --chart /tmp/c.png > $O/set6.txt 2>&1; echo "set6 rc=$? t=${SECONDS}s"; tail -10 $O/set6.txt; }
left 120 && { timeout $((LIMIT-SECONDS-10)) /tmp/baton bench gemm-fp8 --sweep --reps 11 --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png > $O/sweep-fp8.txt 2>&1; echo "sweep fp8 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-fp8.txt; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
