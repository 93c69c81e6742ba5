#!/usr/bin/env bash
# Session 31, call 1. $D holds baton.xz (main), baton-l1.xz (l1-prefetch.patch),
# baton-ov.xz (fp8-overlapped-fixup.patch), baton-stm.xz (stmatrix-epilogue.patch) and a copy
# of ../shared/anchors/deepgemm. Each bench run verifies its timed kernels first (FP8: f64 at
# the timed shapes; BF16: f64 + cuBLAS). Sections in priority order, each only if time is left:
#  1. issue #19's 12 small rows: DeepGEMM, then main / l1 / stm (reverse pass at the end);
#  1b. BF16 forced plans at the sweep rows below 0.90 (call2.sh, shortened);
#  2. the overlapped finalizer A/B at long K and split-2 rows;
#  3. the issue-#6 BF16 set, main / stm; 4. large rows main / l1 / stm; 5. the reverse pass.
set -uo pipefail
D=${D:-.lead-carry/s31a}; O=$OUT/r; mkdir -p $O; SECONDS=0; LIMIT=${LIMIT:-570}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/gpu.txt
left() { [ $((LIMIT-SECONDS)) -gt $1 ]; }
for b in baton baton-l1 baton-ov baton-stm; do xz -dc $D/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
run() { local bin=$1 name=$2 lim=$3; shift 3; left $lim || { echo "skip $name"; return; }
  timeout $lim /tmp/$bin bench gemm-fp8 "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name rc=$? t=${SECONDS}s"
  grep -E '^\| [0-9]|geometric|FAIL|rror' $O/$name.txt | head -40; }
set6() { left 70 || { echo "skip set6 $1"; return; }
  timeout 65 /tmp/$1 bench gemm --json $O/set6-$1$2.json --chart /tmp/c.png > $O/set6-$1$2.txt 2>&1
  echo "set6 $1$2 rc=$? t=${SECONDS}s"; grep -E 'FAIL|geometric' $O/set6-$1$2.txt; }
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x7168x16384,8192x8192x8192,4096x24576x1536,4096x32768x512
LKALL=8x1024x32768,32x1024x32768,128x1024x32768,256x1024x32768,512x1024x32768,64x2112x7168,128x2112x7168
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
left 45 && { (cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 45 python3 run.py --shapes $SMALL --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; grep '^deepgemm ' $O/deepgemm.txt | awk '{print $2, $3}'; }
run baton small-base 75 --flush-l2 $(args $SMALL)
run baton-l1 small-l1 75 --flush-l2 $(args $SMALL)
run baton-stm small-stm 75 --flush-l2 $(args $SMALL)
# BF16 (issue #18): the plan and forced tiles / split-K counts at the sweep's rows below 0.90
bf() { local name=$1 shapes=$2; shift 2; left 30 || { echo "skip $name"; return; }
  timeout 30 /tmp/baton bench gemm --reps 21 --chart /tmp/c.png --json $O/bf-$name.json $(args $shapes) "$@" > $O/bf-$name.txt 2>&1
  echo "bf $name rc=$? t=${SECONDS}s"; grep -E '^[0-9]+x[0-9]+x[0-9]+ |FAIL|rror' $O/bf-$name.txt | awk '{print $1, $2, $4, $5, $8}'; }
R=32x4104x2056,64x4104x2056,128x4104x2056,256x4104x2056
bf plan-r $R,256x5000x4096,512x1024x4096,1x5000x4096,64x4096x4096,128x5000x4096
bf r-64x64sw-s2 32x4104x2056,64x4104x2056,128x4104x2056 --config 64x64-swapab --split-k 2
bf r-64x64sw-ra 32x4104x2056,64x4104x2056 --config 64x64-swapab --split-k 1 --repack a
bf r-64x128sw-ra 32x4104x2056,64x4104x2056 --config 64x128-swapab --split-k 1 --repack a
bf r-64x64sw-s2-ra 32x4104x2056,64x4104x2056 --config 64x64-swapab --split-k 2 --repack a
bf r-64x128sw-s2 32x4104x2056,64x4104x2056 --config 64x128-swapab --split-k 2
bf r-128x64sw-s1 128x4104x2056,256x4104x2056 --config 128x64-swapab --split-k 1
bf r-128x64sw-s2 128x4104x2056,256x4104x2056 --config 128x64-swapab --split-k 2
bf r-128x128-s2 128x4104x2056,256x4104x2056 --config 128x128 --split-k 2
bf t-128x64-s2 512x1024x4096 --config 128x64 --split-k 2
bf t-128x128-s4 512x1024x4096 --config 128x128 --split-k 4
bf w-64x64sw-s2 64x4096x4096,128x5000x4096 --config 64x64-swapab --split-k 2
bf w-16x64sw-s2 1x5000x4096 --config 16x64-swapab --split-k 2
bf w-128x128c2-s1 256x5000x4096 --config 128x128c2 --split-k 1
run baton lk-base 40 --reps 11 $(args $LKALL)
run baton-ov lk-ov 40 --reps 11 $(args $LKALL)
set6 baton ""; set6 baton-stm ""
run baton large-base 45 --flush-l2 $(args $LARGE)
run baton-stm large-stm 45 --flush-l2 $(args $LARGE)
run baton-l1 large-l1 45 --flush-l2 $(args $LARGE)
run baton-stm small-stm-2 75 --flush-l2 $(args $SMALL)
run baton-l1 small-l1-2 75 --flush-l2 $(args $SMALL)
run baton small-base-2 75 --flush-l2 $(args $SMALL)
run baton-ov lk-ov-2 40 --reps 11 $(args $LKALL)
run baton lk-base-2 40 --reps 11 $(args $LKALL)
set6 baton-stm -2; set6 baton -2
cd $OUT && tar czf r.tar.gz r && rm -rf r
