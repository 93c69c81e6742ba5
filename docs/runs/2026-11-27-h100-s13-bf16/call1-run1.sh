#!/usr/bin/env bash
# Lane BF16 (session 13), call 1: the BF16 consumers' stage descriptors on the uniform datapath
# (warp-uniform wg, stage index through shfl before the full-barrier wait). Correctness (gpu_gemm*,
# f64 ragged, cuBLAS; sanitizer memcheck+racecheck small), then main e2e92f5 ("base") vs this
# branch ("new"): issue-#6 set once each, then the full sweep (new, then base; call 2 repeats both in the other order).
set -u
L=.lane-bf16; O=$OUT/c1; mkdir -p $O; SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $O/gpu.txt 2>&1
mkdir -p /tmp/b && tar xJf $L/bins1.tar.xz -C /tmp/b; NEW=/tmp/b/baton-new; BASE=/tmp/b/baton-base
$NEW info > $O/info.txt 2>&1; $BASE info > /dev/null 2>&1
echo "setup ${SECONDS}s" >> $O/times.txt
T=/tmp/b/gpu_gemm; TS=/tmp/b/gpu_gemm_split_k; TW=/tmp/b/gpu_gemm_swap_ab; TL=/tmp/b/gpu_gemm_layouts
timeout 60 $T --test-threads=1 > $O/test-gemm.txt 2>&1; echo "gpu_gemm rc=$? ${SECONDS}s" >> $O/times.txt
timeout 30 $TS bf16 --test-threads=1 > $O/test-split-k.txt 2>&1; echo "split_k rc=$? ${SECONDS}s" >> $O/times.txt
timeout 25 $TW matches --test-threads=1 > $O/test-swap-ab.txt 2>&1; echo "swap_ab rc=$? ${SECONDS}s" >> $O/times.txt
timeout 25 $TL every_layout_pair_matches_f64_reference --test-threads=1 > $O/test-layouts.txt 2>&1; echo "layouts rc=$? ${SECONDS}s" >> $O/times.txt
export BATON_SMALL=1
timeout 30 compute-sanitizer --tool memcheck $T pingpong_matches_f64_reference_on_ragged_shapes --exact --test-threads=1 > $O/memcheck-pp.txt 2>&1; echo "memcheck pp rc=$? ${SECONDS}s" >> $O/times.txt
timeout 30 compute-sanitizer --tool memcheck $T stream_k_matches_f64_reference_on_ragged_shapes --exact --test-threads=1 > $O/memcheck-sk.txt 2>&1; echo "memcheck sk rc=$? ${SECONDS}s" >> $O/times.txt
timeout 30 compute-sanitizer --tool racecheck $T gemm_matches_f64_reference_on_ragged_shapes --exact --test-threads=1 > $O/racecheck.txt 2>&1; echo "racecheck rc=$? ${SECONDS}s" >> $O/times.txt
unset BATON_SMALL
b() { local tag=$1 bin=$2; shift 2; echo "=== $tag $*" >> $O/bench.txt; timeout 40 $bin bench gemm --reps 15 "$@" 2>&1 | tr '\r' '\n' | grep -v "^\[" >> $O/bench.txt; }
b "r1 base set6" $BASE; b "r1 new set6" $NEW; echo "set6 ${SECONDS}s" >> $O/times.txt
filt() { tr '\r' '\n' | grep -v '^\[' ; }
timeout $((262 - SECONDS)) $NEW bench gemm --sweep --json $O/new-sweep.json --heatmap $O/new-sweep.png 2>&1 | filt > $O/new-sweep.txt
echo "new sweep rc=$? ${SECONDS}s" >> $O/times.txt
timeout $((266 - SECONDS)) $BASE bench gemm --sweep --json $O/base-sweep.json 2>&1 | filt > $O/base-sweep.txt
echo "base sweep rc=$? ${SECONDS}s" >> $O/times.txt
cat $O/times.txt; grep -hE "test result|panicked|FAILED" $O/test-*.txt; grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|hazard" $O/memcheck*.txt $O/racecheck.txt | head
grep -E "^===|x[0-9]+x[0-9]+ |geometric" $O/bench.txt | grep -v "^verify" | cut -c1-160
grep -E "geometric|minimum|FAIL" $O/new-sweep.txt $O/base-sweep.txt
