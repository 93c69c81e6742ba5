#!/usr/bin/env bash
# Session 18, call 4: every FP8 kernel but 128x256 writes its D ring of 2 as one batch (one fence, two
# barriers, one commit group per 2 sub-tiles). Bundle + wheel of 933241a + that change; base wheel =
# 41324f4's (FP8 kernels = 358f779's; BATON_PDL=0 for both). Writes $OUT/r.tar.gz.
# 1. FP8 GEMM tests; memcheck + racecheck (BATON_SMALL=1) on the ragged, half-empty, narrow-deep-ring tests.
# 2. DeepGEMM's harness (anchor run.py), issue #19's 20 shapes: DeepGEMM + baton_py (base, new, new, base).
set -uo pipefail
D=.lead-carry/s18; O=$OUT/r; mkdir -p $O; SECONDS=0; export BATON_PDL=0
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
T=$B/tests
for t in gpu_gemm_fp8 gpu_gemm_split_k; do
  timeout 150 $T/baton-reference__$t --test-threads=1 > $O/test-$t.txt 2>&1; echo "$t rc=$? t=${SECONDS}s $(grep 'test result' $O/test-$t.txt)"; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | tail -1)
for tool in memcheck racecheck; do
  for tn in fp8_gemm_matches_f64_reference_on_ragged_shapes fp8_half_empty_tiles_and_equal_wave_grids_match_f64 fp8_narrow_tiles_deep_ring_match_f64; do
    BATON_SMALL=1 timeout 150 $SAN --tool $tool $T/baton-reference__gpu_gemm_fp8 --exact $tn --test-threads=1 > $O/san-$tool-$tn.txt 2>&1
    echo "$tool $tn rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $O/san-$tool-$tn.txt | tr '\n' ' ') t=${SECONDS}s"; done; done
rm -rf /tmp/wbase /tmp/wnew; mkdir -p /tmp/wbase /tmp/wnew
python3 -m zipfile -e $D/base/baton-0.1.0-cp39-abi3-linux_x86_64.whl /tmp/wbase; python3 -m zipfile -e $D/baton-0.1.0-cp39-abi3-linux_x86_64.whl /tmp/wnew
SH=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
EX=$PWD/python/bench/deepgemm_extra.py
cd .lead-carry/deepgemm; i=0
for v in base new new base; do
  i=$((i+1)); extra=(--no-deepgemm); [ $i = 1 -o $i = 4 ] && extra=()
  PYTHONPATH=/tmp/w$v PYTHONUNBUFFERED=1 timeout 200 python3 run.py --shapes $SH --no-torch "${extra[@]}" --extra $EX --json "$O/run$i-$v.json" > "$O/run$i-$v.txt" 2>&1
  echo "run$i $v rc=$? t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
