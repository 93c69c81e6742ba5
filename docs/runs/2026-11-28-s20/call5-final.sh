#!/usr/bin/env bash
# Session 20, call 5 (H200): the final tree (4aff36f: host-computed stream-K schedule, swap-AB
# epilogue per warp pair; the cluster split-K reverted). GPU suite and pytest on the wheel; the BF16
# sweep on the new CLI and on session 19's final CLI (base), and the FP8 sweep. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s20; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 260 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 60 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
for v in new base; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 390 ] && { timeout 110 $bin bench gemm --sweep --json $O/sweep-bf16-$v.json --heatmap $O/sweep-bf16-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16-$v.txt
  echo "sweep bf16 $v t=${SECONDS}s $(grep geometric $O/sweep-bf16-$v.txt)"; }; done
[ $SECONDS -lt 470 ] && { timeout 70 /tmp/b/baton bench gemm-fp8 --sweep --json $O/sweep-fp8.json --heatmap $O/sweep-fp8.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-fp8.txt
echo "sweep fp8 t=${SECONDS}s $(grep geometric $O/sweep-fp8.txt)"; }
cd $OUT && tar czf r.tar.gz r && rm -rf r
