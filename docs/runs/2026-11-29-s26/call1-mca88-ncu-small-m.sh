#!/usr/bin/env bash
# Session 26, call 1 (H200): (a) the 256x88 A-multicast kernel (branch
# s25-mca88, merged forced-only): FP8 tests + compute-sanitizer on the
# A-multicast test, forced 256x88 vs 256x88_mca alternating by DeepGEMM's
# method; (b) Nsight Compute (--clock-control none) on the M = 64 FP8 rows
# where DeepGEMM leads with the same tiling (64x4096x7168: both 64x32
# tiles), ours and DeepGEMM's, with SASS-level stall sampling.
set -uo pipefail
D=.lead-carry/s26; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton-mca.xz > /tmp/baton; chmod +x /tmp/baton
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
T=$O/ab.txt
for pass in 1 2; do
  for s in 4096x2112x7168 4096x2112x4096 2048x1216x4096; do for k in 256x88 256x88_mca; do
    echo "== $pass forced $k $s" >> $T; timeout 40 /tmp/baton bench gemm-fp8 --flush-l2 --shape $s --kernel $k 2>&1 | grep -E "^\| [0-9]|rror" >> $T; done; done
  echo "ab pass $pass t=${SECONDS}s"
done
prof() { # name shape kernel
  timeout 120 ncu --clock-control none -k regex:baton_gemm_fp8 --launch-skip 3 --launch-count 1 --set full \
    --import-source no -o $O/ncu-$1 /tmp/baton bench gemm-fp8 --shape $2 --kernel $3 > $O/ncu-$1.log 2>&1
  ncu -i $O/ncu-$1.ncu-rep --page source --print-source sass --csv > $O/src-$1.csv 2>&1
  ncu -i $O/ncu-$1.ncu-rep --page details > $O/det-$1.txt 2>&1
  echo "prof $1 t=${SECONDS}s $(grep -m1 -E 'Duration' $O/det-$1.txt)"
}
prof m64n4096 64x4096x7168 128x32_db
prof m128n4096 128x4096x7168 128x32_db
prof m64n32768 64x32768x512 128x128_db
rm -rf /tmp/dga && cp -r $D/deepgemm /tmp/dga && chmod -R u+w /tmp/dga
(cd /tmp/dga && timeout 150 ncu --clock-control none -k regex:fp8_gemm --launch-skip 5 --launch-count 1 --set full --import-source no \
   -o $O/ncu-dg-m64n4096 python3 run.py --shapes 64x4096x7168 --no-torch --reps 10 > $O/ncu-dg.log 2>&1)
ncu -i $O/ncu-dg-m64n4096.ncu-rep --page source --print-source sass --csv > $O/src-dg-m64n4096.csv 2>&1
ncu -i $O/ncu-dg-m64n4096.ncu-rep --page details > $O/det-dg-m64n4096.txt 2>&1
echo "dg prof t=${SECONDS}s $(grep -m1 -E 'Duration' $O/det-dg-m64n4096.txt)"
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
mkdir -p $O/san; OUT="$O/san" SANITIZE_DEADLINE=100 timeout 130 bash tools/gpu-suite.sh --sanitize $B fp8_a_multicast > "$O/san/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -4 "$O/san/stdout.txt"
cd $OUT && tar czf r.tar.gz r && rm -rf r
