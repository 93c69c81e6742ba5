#!/usr/bin/env bash
# Session 21, call 4 (H200): the tree with the narrow swap-AB kernels and 128×64 pairs (128x64c2).
# GPU suite (every test binary; 128x64c2 is in GemmConfig::ALL, so the cooperative tests cover it),
# memcheck/racecheck of the split-K tests on the small set, forced 128x64 vs 128x64c2 rows, and the
# BF16 sweep on this CLI and on session 20's final CLI (base). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 280 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
T=$B/tests/baton-reference__gpu_gemm_split_k
for tool in memcheck racecheck; do
  BATON_SMALL=1 timeout 100 compute-sanitizer --tool $tool $T > $O/san-split-$tool.txt 2>&1
  echo "$tool split-k rc=$? t=${SECONDS}s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-split-$tool.txt | tail -1)"
done
for s in 256x4096x4096 256x4104x2056 512x1024x4096 1024x1024x4096 256x1024x32768 2048x1024x4096; do
  for c in 128x64 128x64c2; do
    [ $SECONDS -lt 420 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c 2>&1 | grep -E "^[0-9]+x|rror" | sed "s/^/$c  /" >> $O/forced.txt
  done
done; echo "forced t=${SECONDS}s"
for v in new base; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 440 ] && { timeout 110 $bin bench gemm --sweep --json $O/sweep-bf16-$v.json --heatmap $O/sweep-bf16-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16-$v.txt
  echo "sweep bf16 $v t=${SECONDS}s $(grep geometric $O/sweep-bf16-$v.txt)"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
