#!/usr/bin/env bash
# Session 16, call 6 (bundle e1ecfb7): is 128x224c2 slower than the model's speed 1.0 says? Forced rows, one
# invocation each, at the sweep shapes where the plan is 128x224c2 (512/2048x5000x4096, 8192x4104x2056 + B)
# and alternatives. Writes $OUT/h.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/h"; mkdir -p "$O"; SECONDS=0
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton; head -1 /tmp/fb/.final-bundle/BUILD-INFO
brow() { local s=$1; shift
  timeout 25 $BATON bench gemm --shape "$s" --reps 21 "$@" --chart /tmp/x.png 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$*] |"; }
{
for c in 128x224c2 128x256c2 256x128c2 128x128-pingpong 128x128c2; do brow 512x5000x4096 --config $c; done
for c in 128x224c2 128x256c2 256x128c2; do brow 2048x5000x4096 --config $c; done
for c in 128x224c2 128x256c2; do brow 8192x4104x2056 --config $c --repack b; done; brow 8192x4104x2056 --config 256x128c2 --repack a
for c in 128x224c2 128x256c2; do brow 2048x7168x2048 --config $c; done
} > "$O/rows.txt" 2>&1
cut -c1-160 "$O/rows.txt"; echo "t=${SECONDS}s"
cd "$O0" && tar czf h.tar.gz h && rm -rf h
