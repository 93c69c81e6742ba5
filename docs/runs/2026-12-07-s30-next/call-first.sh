#!/usr/bin/env bash
# Prepared in session 30 for the next session's first device call (session 30's third call
# never ran: no device time was left). $D holds baton.xz (main), baton-l1.xz (main with
# l1-prefetch.patch applied: `prefetch.global.L1` in place of `.L2` in
# `prefetch_tile_b_scales`) and a copy of ../shared/anchors/deepgemm. Sections, each only
# if time is left before LIMIT:
#  1. issue #19's 12 rows at M = 64/128 (`for_m` at M <= 128) and DeepGEMM, one call; the
#     L1-prefetch A/B (base, l1; the reverse pass at the end);
#  2. the FP8 sweep's low rows (queued): the plan against forced 128x128 clusters (c2);
#  3. long K at M = 384/512: the plan against c2 split 4;
#  4. 4 large rows, the A/B; 5. 256x128_mca and c2 split 2 rows; 6. the BF16 sweep (H100).
set -uo pipefail
D=${D:-.lead-carry/s31a}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
xz -dc $D/baton.xz > /tmp/baton; xz -dc $D/baton-l1.xz > /tmp/baton-l1; chmod +x /tmp/baton /tmp/baton-l1
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
P=baton_gemm_fp8_blockwise_
run() { local bin=$1 name=$2 lim=$3; shift 3; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/$bin bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x7168x16384,8192x8192x8192,4096x24576x1536,4096x32768x512
LOW=2048x5000x4096,2048x1024x4096,1024x5000x4096,512x4096x4096,512x8192x1024,256x8192x1024
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
left 40 && { (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 40 python3 run.py --shapes $SMALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt | awk '{print $2, $3}'; }
run baton small-base 80 --flush-l2 $(args $SMALL)
run baton-l1 small-l1 80 --flush-l2 $(args $SMALL)
run baton low-plan 35 --reps 11 $(args $LOW)
run baton low-c2 35 --reps 11 --kernel ${P}128x128_db_c2 $(args $LOW)
run baton lk-plan 25 --reps 11 $(args 384x1024x32768,512x1024x32768)
run baton lk-c2-s4 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 4 $(args 384x1024x32768,512x1024x32768)
run baton large-base 45 --flush-l2 $(args $LARGE)
run baton-l1 large-l1 45 --flush-l2 $(args $LARGE)
run baton low-mca 35 --reps 11 --kernel ${P}256x128_mca $(args $LOW)
run baton lk-c2-s2 25 --reps 11 --kernel ${P}128x128_db_c2 --fp8-split-k 2 $(args 1024x1024x16384,512x2048x16384)
left 140 && { timeout 140 /tmp/baton bench gemm --sweep --json $O/sweep-bf16.json --heatmap $O/sweep-bf16.png > $O/sweep-bf16.txt 2>&1; echo "sweep bf16 rc=$? t=${SECONDS}s"; tail -3 $O/sweep-bf16.txt; }
run baton-l1 small-l1-2 80 --flush-l2 $(args $SMALL)
run baton small-base-2 80 --flush-l2 $(args $SMALL)
# Optional A/Bs, where $D holds them: baton-ov.xz (fp8-overlapped-fixup.patch), baton-stm.xz
# (stmatrix-epilogue.patch). Each run verifies its timed kernels vs f64 first.
LKALL=8x1024x32768,32x1024x32768,128x1024x32768,256x1024x32768,512x1024x32768,64x2112x7168,128x2112x7168
if [ -f $D/baton-ov.xz ]; then xz -dc $D/baton-ov.xz > /tmp/baton-ov; chmod +x /tmp/baton-ov
  run baton lk-base 40 --reps 11 $(args $LKALL); run baton-ov lk-ov 40 --reps 11 $(args $LKALL); fi
if [ -f $D/baton-stm.xz ]; then xz -dc $D/baton-stm.xz > /tmp/baton-stm; chmod +x /tmp/baton-stm
  for b in baton baton-stm; do left 70 && { timeout 60 /tmp/$b bench gemm --json $O/set6-$b.json --chart /tmp/c.png > $O/set6-$b.txt 2>&1; echo "set6 $b rc=$? t=${SECONDS}s"; grep geometric $O/set6-$b.txt; }; done
  run baton-stm small-stm 80 --flush-l2 $(args $SMALL); fi
cd $OUT && tar czf r.tar.gz r && rm -rf r
