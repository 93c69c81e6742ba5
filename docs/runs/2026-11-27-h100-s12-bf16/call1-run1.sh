#!/usr/bin/env bash
# Lane BF16 (session 12), call 1: the 256x128 tiles — correctness (f64 ragged, cuBLAS, poisoned
# outputs; compute-sanitizer memcheck/racecheck at small sizes), then same-call timings of
# main (e095fa0, "base") and this branch ("new"), interleaved twice.
set -u
L=.lane-bf16; O=$OUT/c1; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $O/gpu.txt 2>&1
mkdir -p /tmp/b && tar xJf $L/bins.tar.xz -C /tmp/b; NEW=/tmp/b/baton-new; BASE=/tmp/b/baton-base; T=/tmp/b/gpu_gemm
$NEW info > $O/info.txt 2>&1; $BASE info > /dev/null 2>&1
echo "setup ${SECONDS}s" >> $O/times.txt
# 1. correctness: the tall tests (f64 ragged all betas + alpha, cuBLAS incl. 1024x4104x2056, refusals)
timeout 90 $T tall --nocapture --test-threads=1 > $O/test-tall.txt 2>&1; echo "tall tests rc=$? ${SECONDS}s" >> $O/times.txt
# the rest of gpu_gemm (existing configs stay green)
timeout 60 $T --skip tall --test-threads=1 > $O/test-rest.txt 2>&1; echo "rest tests rc=$? ${SECONDS}s" >> $O/times.txt
# 2. sanitizer: memcheck on the tall f64 + small cuBLAS test; racecheck on the f64 one (no cuBLAS)
export BATON_SMALL=1
timeout 60 compute-sanitizer --tool memcheck $T tall_matches_cublas_with_many_tiles_per_cta --exact --test-threads=1 > $O/memcheck-cublas.txt 2>&1; echo "memcheck-cublas rc=$? ${SECONDS}s" >> $O/times.txt
timeout 60 compute-sanitizer --tool memcheck $T tall_matches_f64_reference_on_ragged_shapes --exact --test-threads=1 > $O/memcheck.txt 2>&1; echo "memcheck rc=$? ${SECONDS}s" >> $O/times.txt
timeout 70 compute-sanitizer --tool racecheck $T tall_matches_f64_reference_on_ragged_shapes --exact --test-threads=1 > $O/racecheck.txt 2>&1; echo "racecheck rc=$? ${SECONDS}s" >> $O/times.txt
unset BATON_SMALL
# 3. timings, base and new interleaved twice: the changed picks, forced tall configs (speed), issue-#6 set
sh() { local a=""; for s in "$@"; do a="$a --shape $s"; done; echo $a; }
P="1024x4104x2056 4096x4104x2048 512x4104x2056 2048x4104x2056"
F="1024x4104x2056 2048x4104x2056 4096x4104x2056 16384x4104x2056 4096x4096x4096 8192x8192x8192 2048x7168x2048"
b() { local tag=$1 bin=$2; shift 2; echo "=== $tag $*" >> $O/bench.txt; timeout 60 $bin bench gemm --reps 15 "$@" 2>&1 | tr '\r' '\n' | grep -v "^\[" >> $O/bench.txt; }
for r in 1 2; do
  b "r$r base picks" $BASE $(sh $P); b "r$r new picks" $NEW $(sh $P)
  [ $SECONDS -lt 200 ] && b "r$r new 256x128c2" $NEW --config 256x128c2 $(sh $F)
  [ $r = 1 ] && [ $SECONDS -lt 200 ] && b "r$r new 256x128" $NEW --config 256x128 $(sh 1024x4104x2056 4096x4096x4096 8192x8192x8192)
  [ $SECONDS -lt 230 ] && b "r$r base set6" $BASE; [ $SECONDS -lt 250 ] && b "r$r new set6" $NEW
  echo "round $r ${SECONDS}s" >> $O/times.txt
done
cat $O/times.txt; grep -E "test result|panicked|FAILED" $O/test-*.txt; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Race reported|hazard" $O/memcheck*.txt $O/racecheck.txt | head
grep -E "^===|x[0-9]+x[0-9]+ " $O/bench.txt | grep -v "^verify" | cut -c1-150
