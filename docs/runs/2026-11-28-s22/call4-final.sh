#!/usr/bin/env bash
# Session 22, call 4 (H200): the final tree (device-DRAM cost model, narrow K-block floor, ring fill
# hidden 2 µs). GPU suite (every bundled test), pytest on the wheel, the BF16 sweep on session 21's
# final CLI (base) then this one, after a warm-up; then forced rows at mid-size shapes below 0.90 for
# the next session. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s22; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 280 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 60 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
timeout 30 /tmp/b/baton bench gemm --shape 4096x4096x4096 --reps 200 > /dev/null 2>&1   # warm-up
for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 420 ] && { timeout 100 $bin bench gemm --sweep --json $O/sweep-bf16-$v.json --heatmap $O/sweep-bf16-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16-$v.txt
  echo "sweep bf16 $v t=${SECONDS}s $(grep geometric $O/sweep-bf16-$v.txt)"; }; done
ROWS="1024x1024x4096:128x64:1 1024x1024x4096:128x128:2 1024x1024x4096:128x128c2:2 1024x1024x4096:128x256c2:4
256x5000x4096:128x128-pingpong:1 256x5000x4096:128x128:1 256x5000x4096:128x160c2:1
256x1024x32768:128x128c2:8 256x1024x32768:128x64:4 256x1024x32768:128x128:8"
for r in $ROWS; do IFS=: read -r s c k <<< "$r"
  [ $SECONDS -lt 540 ] && timeout 15 /tmp/b/baton bench gemm --reps 31 --shape $s --config $c --split-k $k 2>&1 | grep -E "^ *[0-9]+x[0-9]+x[0-9]+ |rror" | head -1 | sed "s/^/$c:$k  /" >> $O/forced.txt
done; echo "forced t=${SECONDS}s"; cat $O/forced.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
