#!/usr/bin/env bash
# Session 30 call 3 (H100 wanted): (1) issue #19's 12 rows at M = 64/128 with
# `for_m` at M <= 128 (main 9a8a4ff) and DeepGEMM, one call; (2) the FP8 sweep's
# low rows (queued): the plan against forced 128x128 clusters (c2) and the
# 256x128 A-multicast kernels; (3) long K at M >= 384: the plan against c2 splits;
# (4) the BF16 sweep (ping-pong L2 rule) and the issue-#6 set.
set -uo pipefail
D=${D:-.lead-carry/s30b}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-570}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
P=baton_gemm_fp8_blockwise_
run() { local name=$1 lim=$2; shift 2; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/baton bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
left 40 && { (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 40 python3 run.py --shapes $SMALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt | awk '{print $2, $3}'; }
run small-plan 100 --flush-l2 $(args $SMALL)
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
run low-plan 40 --reps 11 $(args $LOW)
run low-c2 40 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run low-mca 40 --reps 11 --kernel ${P}256x128_mca $(args $LOW)
run low-mca3 40 --reps 11 --kernel ${P}256x128_mca_3stage $(args $LOW)
run lk-plan 30 --reps 11 $(args 384x1024x32768,512x1024x32768,1024x1024x16384,512x2048x16384)
run lk-c2-s4 30 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
run lk-c2-s2 30 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 2 $(args 1024x1024x16384,512x2048x16384)
left 140 && { timeout 140 /tmp/baton bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt; }
left 60 && { timeout 60 /tmp/baton bench gemm --json $O/set6.json --chart /tmp/c.png > $O/set6.txt 2>&1; echo "set6 rc=$? t=${SECONDS}s"; tail -10 $O/set6.txt; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
