#!/usr/bin/env bash
# Session 24 (s24-fixup branch): the distributed split-K fixup of the BF16
# cooperative kernels with BN <= 128. (a) the GPU suite's split-K and
# gpu_gemm:: tests; (b) compute-sanitizer (memcheck, racecheck, synccheck,
# initcheck) on the split-K tests; (c) base/new CLI timings, alternating,
# twice. Writes $OUT/r.tar.gz.
#
# Usage (on the device, from the repository root):
#   bash docs/runs/2026-11-29-s24/fixup-gpu.sh <bundle-dir> <base-cli> <new-cli>
# e.g. with carry [".device-bundle", ".lead-carry/s24"]:
#   bash docs/runs/2026-11-29-s24/fixup-gpu.sh .device-bundle /tmp/b/baton-base /tmp/b/baton
# (unpack the CLIs first as in docs/runs/2026-11-29-s23/call7-final.sh).
set -uo pipefail
B="${1:?bundle dir}"; BASE="${2:?base CLI}"; NEW="${3:?new CLI}"
O=$OUT/r; mkdir -p $O; SECONDS=0
head -1 $B/BUILD-INFO | tee $O/build.txt
# (a) split-K tests, then every gpu_gemm:: test.
for f in split gpu_gemm::; do
  tag=$(echo $f | tr -c 'a-z\n' '_')
  mkdir -p $O/suite-$tag
  OUT="$O/suite-$tag" SUITE_TEST_TIMEOUT=120 timeout 200 bash tools/gpu-suite.sh $B "$f" > "$O/suite-$tag/stdout.txt" 2>&1
  echo "suite $f rc=$? t=${SECONDS}s"; tail -1 "$O/suite-$tag/gpu-suite-summary.txt"; grep -E "FAIL" "$O/suite-$tag/gpu-suite-summary.txt" | head
done
# (b) sanitizers on the split-K tests (small sizes; racecheck covers the
# partial slots' shared-memory side only: the flags are global memory).
mkdir -p $O/sanitize
OUT="$O/sanitize" SANITIZE_DEADLINE=150 timeout 200 bash tools/gpu-suite.sh --sanitize $B split_k > "$O/sanitize/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -15 "$O/sanitize/stdout.txt"
# (c) timings: base then new, twice.
T=$O/timings.txt
for pass in 1 2; do for v in base new; do bin=$NEW; [ $v = base ] && bin=$BASE
  for s in 256x1024x32768 128x1024x32768 512x1024x32768 512x1024x4096 128x4096x4096 64x1024x32768; do
    echo "== $pass $v $s" >> $T; timeout 30 $bin bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $T
  done; done; done
echo "timings t=${SECONDS}s"; cat $T
cd $OUT && tar czf r.tar.gz r && rm -rf r
