#!/usr/bin/env bash
# Session 24, call 4 (H200): merged main ff134e7 (distributed split-K fixup
# for BN <= 128, narrow swap-AB 128 in place of L2-fed 128x64 plans). GPU
# suite, compute-sanitizer on the split-K tests, pytest on the wheel, then
# base (6fe81ea) / new CLI alternating, two passes. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s24; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=150 timeout 300 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
mkdir -p $O/sanitize
OUT="$O/sanitize" SANITIZE_DEADLINE=90 timeout 120 bash tools/gpu-suite.sh --sanitize $B split_k > "$O/sanitize/stdout.txt" 2>&1
echo "sanitize rc=$? t=${SECONDS}s"; tail -6 "$O/sanitize/stdout.txt"
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 60 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
T=$O/ab.txt
for pass in 1 2; do for s in 256x1024x32768 128x1024x32768 512x1024x32768 64x1024x32768 1024x1024x4096 512x1024x4096 128x4096x4096 4096x4096x4096 2048x7168x2048; do
  for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
    [ $SECONDS -lt 570 ] && { echo "== $pass $v $s" >> $T; timeout 30 $bin bench gemm --shape $s --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $T; }; done; done; done
echo "ab t=${SECONDS}s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
