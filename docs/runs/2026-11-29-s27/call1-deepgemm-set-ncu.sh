#!/usr/bin/env bash
# Session 27, call 1 (H200): issue #19's 20 shapes on main 5f2be26 (the
# unrolled `_db` ring) by DeepGEMM's method: ours and cuBLASLt
# (`bench gemm-fp8 --flush-l2`), DeepGEMM (anchor run.py --no-torch), same
# call; then Nsight Compute (full set + SASS source page) on ours at
# 64x4096x7168 (128x32_db) and 64x32768x512 (128x128_db) and on DeepGEMM at
# 64x32768x512. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s27; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
SMALL=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
LARGE=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
args() { for s in ${1//,/ }; do printf -- "--shape %s " $s; done; }
timeout 150 /tmp/baton bench gemm-fp8 --flush-l2 $(args $LARGE) --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours large rc=$? t=${SECONDS}s"
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && PYTHONUNBUFFERED=1 timeout 220 python3 run.py --shapes $SMALL,$LARGE --no-torch --json $O/deepgemm.json > $O/deepgemm.txt 2>&1); echo "deepgemm rc=$? t=${SECONDS}s"; tail -3 $O/deepgemm.txt
timeout 150 /tmp/baton bench gemm-fp8 --flush-l2 $(args $SMALL) --json $O/ours-small.json > $O/ours-small.txt 2>&1; echo "ours small rc=$? t=${SECONDS}s"
prof() { # name shape kernel
  timeout 100 ncu --clock-control none -k "regex:^baton_gemm_fp8_blockwise_$3\$" --launch-skip 6 --launch-count 1 --set full \
    --import-source no -o $O/ncu-$1 /tmp/baton bench gemm-fp8 --shape $2 --kernel $3 > $O/ncu-$1.log 2>&1
  ncu -i $O/ncu-$1.ncu-rep --page source --print-source sass --csv > $O/src-$1.csv 2>&1
  ncu -i $O/ncu-$1.ncu-rep --page details > $O/det-$1.txt 2>&1
  echo "ncu $1 t=${SECONDS}s $(grep -m1 Duration $O/det-$1.txt)"
}
prof m64n4096 64x4096x7168 128x32_db
prof m64n32768 64x32768x512 128x128_db
(cd /tmp/dga && timeout 120 ncu --clock-control none -k regex:fp8_gemm --launch-skip 5 --launch-count 1 --set full --import-source no \
   -o $O/ncu-dg-m64n32768 python3 run.py --shapes 64x32768x512 --no-torch --reps 10 > $O/ncu-dg.log 2>&1)
ncu -i $O/ncu-dg-m64n32768.ncu-rep --page source --print-source sass --csv > $O/src-dg-m64n32768.csv 2>&1
ncu -i $O/ncu-dg-m64n32768.ncu-rep --page details > $O/det-dg-m64n32768.txt 2>&1
echo "ncu dg t=${SECONDS}s $(grep -m1 Duration $O/det-dg-m64n32768.txt)"
cd $OUT && tar czf r.tar.gz r && rm -rf r
