#!/usr/bin/env bash
# Session 23, call 7 (H200): the final tree (operand L2 promotion 128 B for
# rows that are not whole lines). GPU suite, pytest on the wheel; the K-2056
# rows base (39f7f2a) / new alternating; forced rows (128x32 vs 128x64 at
# M = 128 with few tiles; K = 2056 plan alternatives under the new
# promotion); the BF16 sweep twice with the new CLI. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s23; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 280 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 60 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
K=$O/k2056.txt
for pass in 1 2; do for v in base new; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  for m in 8 32 64 128 256 1024; do echo "== $pass $v ${m}x4104x2056" >> $K; $bin bench gemm --shape ${m}x4104x2056 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x" >> $K; done; done; done
echo "k2056 t=${SECONDS}s"
F=$O/forced.txt
for pass in 1 2; do
for a in "128x4104x2048 128x64 1 none" "128x4104x2048 128x32 1 none" "128x4096x4096 128x64 2 none" "128x4096x4096 128x32 1 none" "128x5000x4096 128x64 1 none" "128x5000x4096 128x32 1 none" "128x8192x1024 128x64 1 none" "128x8192x1024 128x32 1 none" "64x4104x2056 64x64-swapab 1 none" "64x4104x2056 64x128-swapab 2 none" "128x4104x2056 128x64 1 none" "128x4104x2056 128x64 1 a" "128x4104x2056 128x32 1 none"; do
  set -- $a; echo "== $pass $a" >> $F; /tmp/b/baton bench gemm --shape $1 --config $2 --split-k $3 --repack $4 --reps 31 --chart /tmp/c.png 2>&1 | grep -E "^[0-9]+x|rror" >> $F; done; done
echo "forced t=${SECONDS}s"
for i in 1 2; do [ $SECONDS -lt 520 ] && { timeout 75 /tmp/b/baton bench gemm --sweep --json $O/sweep-$i.json --heatmap $O/sweep-$i.png > $O/sweep-$i.txt 2>&1; echo "sweep$i rc=$? t=${SECONDS}s"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
