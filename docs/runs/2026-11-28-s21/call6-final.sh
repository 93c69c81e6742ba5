#!/usr/bin/env bash
# Session 21, call 6 (H200): the final tree (narrow swap-AB kernels, the 128×32 tile).
# GPU suite (every test binary), pytest on the wheel,
# memcheck of the split-K tests on the small set (128x32 splits), and the
# BF16 sweep on this CLI and on session 20's final CLI (base). Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s21; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base baton; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 280 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 60 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
T=$B/tests/baton-reference__gpu_gemm_split_k
BATON_SMALL=1 timeout 60 compute-sanitizer --tool memcheck $T --exact bf16_split_k_matches_f64_on_ragged_shapes > $O/san-split-memcheck.txt 2>&1
echo "memcheck split-k rc=$? t=${SECONDS}s $(grep -E 'ERROR SUMMARY' $O/san-split-memcheck.txt | tail -1)"
for v in new base; do bin=/tmp/b/baton; [ $v = base ] && bin=/tmp/b/baton-base
  [ $SECONDS -lt 470 ] && { timeout 110 $bin bench gemm --sweep --json $O/sweep-bf16-$v.json --heatmap $O/sweep-bf16-$v.png 2>&1 | tr '\r' '\n' | grep -v '^\[' > $O/sweep-bf16-$v.txt
  echo "sweep bf16 $v t=${SECONDS}s $(grep geometric $O/sweep-bf16-$v.txt)"; }; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
