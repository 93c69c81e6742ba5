#!/usr/bin/env bash
# Session 16, call 3 (bundle: main d68a940 = the BF16 re-pack + the FP8 lane's queued forced splits):
# (a) BF16 forced rows on the ragged column (K = 2056), each configuration with --repack none / a / b
#     (call 2's were refused by a CLI bug), to calibrate the copy's price and the L2 saving;
# (b) BF16 stream-K over less than one wave (--stream-k 4 --sk-waves 0) at the sub-wave shapes below 0.9;
# (c) the FP8 lane's calibration rows (docs/runs/2026-11-28-s16/fp8-split-calib.sh: queued forced splits,
#     two passes).
# Writes $OUT/k.tar.gz (and the FP8 script's s.tar.gz).
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/k"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
N=0
brow() { local s=$1; shift; N=$((N+1))
  timeout 30 $BATON bench gemm --shape "$s" --reps 21 "$@" --chart /tmp/x.png --json "$O/b$N-$s.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$*] |"; }
{
for r in none a b; do brow 16384x4104x2056 --config 128x256c2 --repack $r; done
for r in none a; do brow 16384x4104x2056 --config 256x128c2 --repack $r; done; brow 16384x4104x2056 --config 128x224c2 --repack b
brow 16384x4104x2056 --config 128x256c2 --repack b --stream-k 8 --sk-waves 0
for r in none a b; do brow 8192x4104x2056 --config 256x128c2 --repack $r; done; brow 8192x4104x2056 --config 128x256c2 --repack b
for r in none a b; do brow 2048x4104x2056 --config 256x128c2 --repack $r; done
for r in none a b; do brow 512x4104x2056 --config 128x128c2 --repack $r; done
for r in none a; do brow 128x4104x2056 --config 128x64 --repack $r; done
} > "$O/ragged-rows.txt" 2>&1
echo "(a) t=${SECONDS}s"; cut -c1-160 "$O/ragged-rows.txt"
SK=(--stream-k 4 --sk-waves 0)
{
brow 512x5000x4096; for c in 128x224c2 128x256c2 256x128c2 128x128; do brow 512x5000x4096 --config $c "${SK[@]}"; done
brow 1024x5000x4096; for c in 128x224c2 128x256c2; do brow 1024x5000x4096 --config $c "${SK[@]}"; done
brow 256x5000x4096; for c in 128x128c2 128x128; do brow 256x5000x4096 --config $c "${SK[@]}"; done
brow 2048x5000x4096; for c in 128x224c2 128x256c2; do brow 2048x5000x4096 --config $c "${SK[@]}"; done
brow 512x1024x4096; for c in 128x128 128x64; do brow 512x1024x4096 --config $c "${SK[@]}"; done
brow 256x8192x1024; brow 256x8192x1024 --config 128x128 "${SK[@]}"
} > "$O/subwave-rows.txt" 2>&1
echo "(b) t=${SECONDS}s"; cut -c1-160 "$O/subwave-rows.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf k.tar.gz k && rm -rf k
cd - >/dev/null && timeout $((590 - SECONDS)) bash docs/runs/2026-11-28-s16/fp8-split-calib.sh
