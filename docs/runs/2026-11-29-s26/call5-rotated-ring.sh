#!/usr/bin/env bash
# Session 26, call 5 (H200): the FP8 `_db` main loop with its ring unrolled
# (one copy of the K block per stage: no constant-bank load + indirect
# branch per K block, stage addresses as immediates), for every `_db`
# width (128x32/64/96/128). Base (call 4's CLI, 73d6502) / new by
# DeepGEMM's method at issue #19's 12 small rows, alternating whole runs
# (base, new, new, base); FP8 GPU tests; compute-sanitizer on the
# narrow-tile and half-empty tests. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s26; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && xz -dc $D/baton.xz > /tmp/b/base && xz -dc $D/baton-rotB.xz > /tmp/b/new && chmod +x /tmp/b/*
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $D/bundle.tar.xz -C /tmp/fb; B=/tmp/fb/.final-bundle; head -1 $B/BUILD-INFO | tee $O/build.txt
SMALL="64x2112x7168 64x24576x1536 64x32768x512 64x7168x16384 64x4096x7168 64x7168x2048 128x2112x7168 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048"
args() { for s in $SMALL; do printf -- "--shape %s " $s; done; }
n=0; for v in base new new base; do n=$((n+1))
  timeout 120 /tmp/b/$v bench gemm-fp8 --flush-l2 $(args) > $O/run$n-$v.txt 2>&1; echo "run $n $v rc=$? t=${SECONDS}s"; done
OUT="$O/fp8" SUITE_TEST_TIMEOUT=150 timeout 200 bash tools/gpu-suite.sh $B gpu_gemm_fp8 > "$O/suite-fp8.txt" 2>&1
echo "suite fp8 rc=$? t=${SECONDS}s $(tail -1 $O/fp8/gpu-suite-summary.txt)"; grep FAIL $O/fp8/gpu-suite-summary.txt | head -5
for f in fp8_narrow_tiles fp8_half_empty; do mkdir -p $O/san-$f; OUT="$O/san-$f" SANITIZE_DEADLINE=45 timeout 80 bash tools/gpu-suite.sh --sanitize $B $f > "$O/san-$f/stdout.txt" 2>&1
  echo "sanitize $f rc=$? t=${SECONDS}s"; tail -3 "$O/san-$f/stdout.txt"; done
cd $OUT && tar czf r.tar.gz r && rm -rf r
