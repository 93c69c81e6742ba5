#!/usr/bin/env bash
# Session 19, call 4 (H200): the tree with the unit-by-unit split-K schedule and the setup/schedule
# overlap (init_then_sync_scheduled: BF16 cooperative and swap-AB kernels). (1) GPU suite + pytest on
# its bundle and wheel; (2) traces base2 (schedule fix only, call 3's new) vs new, per CTA;
# (3) the small-M BF16 rows base2/new alternating twice. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s19; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton-base2 baton-new baton-trace-base2 baton-trace-new; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
OUT="$O" SUITE_TEST_TIMEOUT=120 timeout 330 bash tools/gpu-suite.sh $B > "$O/suite-stdout.txt" 2>&1
echo "suite rc=$? t=${SECONDS}s"; tail -1 "$O/gpu-suite-summary.txt"; grep -E "FAIL" "$O/gpu-suite-summary.txt" | head
rm -rf /tmp/pyb; pip install -q --no-deps --no-index --target /tmp/pyb $D/baton-*.whl > "$O/pip.txt" 2>&1
PYTHONPATH=/tmp/pyb timeout 90 python3 -m pytest -q python/tests > "$O/pytest.txt" 2>&1
echo "pytest rc=$? t=${SECONDS}s"; tail -1 "$O/pytest.txt"; grep -E "^FAILED" "$O/pytest.txt" | head
S="--shape 1x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096 --shape 1024x1024x4096 --shape 1x4096x4096"
for v in base2 new; do
  timeout 40 /tmp/b/baton-trace-$v bench trace-gemm $S --reps 15 --per-cta $O/percta-$v.csv > $O/trace-$v.txt 2>&1; echo "trace $v rc=$? t=${SECONDS}s"; done
NK="4096x4096 1024x4096 1024x32768 4104x2056 5000x4096 8192x1024"
SM=""; for m in 1 8 32 64 128 256; do for nk in $NK; do SM="$SM --shape ${m}x$nk"; done; done
for v in base2 new base2 new; do
  timeout 60 /tmp/b/baton-$v bench gemm --reps 21 $SM > $O/small-$v-$SECONDS.txt 2>&1; echo "bf16 $v rc=$? t=${SECONDS}s"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
