#!/usr/bin/env bash
# Session 29, call 2 (H100): two binaries of branch s29-s4: `base` (call 1's)
# and `win` (+ the two-partial FP8 main loop loading B scales 8/4/3 K blocks
# ahead). In order, each only if time is left before LIMIT (default 330 s):
#  1. FP8, DeepGEMM's method: issue #19's 12 rows at M = 64/128, the plan,
#     base then win; DeepGEMM on the same rows.
#  2. BF16 (ours and cuBLAS in one process): ping-pong 128x128 and the
#     cooperative 128x256 pair forced on a grid of larger-M shapes (the H100
#     ran ping-pong 0.76/0.83 and 128x256c2 0.99 at 65536/16384x8192x1024).
#  3. FP8 plan 12 rows, win then base (the second order), if time is left.
set -uo pipefail
D=.lead-carry/s29b; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-330}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
for b in base win; do xz -dc $D/baton-$b.xz > /tmp/baton-$b; chmod +x /tmp/baton-$b; done
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
for b in base win; do left 100 || break
  timeout 100 /tmp/baton-$b bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/plan-$b-1.json > $O/plan-$b-1.txt 2>&1; echo "plan $b rc=$? t=${SECONDS}s"; grep -E '^\| [0-9]|FAIL|geometric' $O/plan-$b-1.txt; done
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
left 60 && { (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 60 python3 run.py --shapes $SMALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt; }
G=4096x8192x1024,8192x8192x1024,16384x8192x1024,32768x8192x1024,16384x4096x1024,16384x16384x1024,16384x8192x2048,8192x16384x2048,32768x4096x2048,8192x8192x4096,2048x8192x1024,512x4096x4096,2048x1024x4096,256x8192x1024
for c in 128x128-pingpong 128x256c2; do left 70 || break
  timeout 70 /tmp/baton-win bench gemm --config $c $(args $G) --json $O/bf16-$c.json --chart /tmp/c.png > $O/bf16-$c.txt 2>&1; echo "bf16 $c rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x' $O/bf16-$c.txt; done
for b in win base; do left 100 || break
  timeout 100 /tmp/baton-$b bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/plan-$b-2.json > $O/plan-$b-2.txt 2>&1; echo "plan $b (2) rc=$? t=${SECONDS}s"; grep -E 'geometric' $O/plan-$b-2.txt; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
