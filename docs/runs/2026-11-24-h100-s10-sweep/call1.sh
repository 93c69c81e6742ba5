#!/usr/bin/env bash
# SWEEP call 1 (bundle of f0d7927: main + cold inputs): the swap-AB timing
# grid (every small-M plan, each side on its own cold inputs), then the
# heuristic's picks at M = 128/256 and the named mispicks, forced configs.
set -uo pipefail
B="$(dirname "$0")"
BIN="$B/before/baton"
O="$OUT/s"; mkdir -p "$O"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$O/gpu.txt"
cp "$B/before/BUILD-INFO" "$O/build.txt"
t0=$(date +%s)
"$B/before/gpu_gemm_swap_ab" --ignored --nocapture --test-threads 1 swap_ab_timing_grid > "$O/grid.txt" 2>&1
echo "grid rc $? $(( $(date +%s) - t0 )) s"; tail -3 "$O/grid.txt"
if (( $(date +%s) - t0 < 150 )); then
"$B/exp/gpu_gemm_swap_ab" --ignored --nocapture --test-threads 1 swap_ab_timing_grid > "$O/grid-exp.txt" 2>&1
echo "exp grid (swap-AB 10/9/8 stages) rc $? $(( $(date +%s) - t0 )) s"; tail -3 "$O/grid-exp.txt"
fi
S128="--shape 128x4096x4096 --shape 128x1024x4096 --shape 128x8192x1024 --shape 128x4104x2056 --shape 256x4096x4096 --shape 256x1024x4096 --shape 256x1024x32768 --shape 256x8192x1024 --shape 256x4104x2056"
M="--shape 2048x5000x4096 --shape 65536x8192x1024 --shape 16384x5000x4096 --shape 1024x5000x4096 --shape 512x5000x4096 --shape 256x5000x4096"
g() { # name args...
    local name="$1"; shift
    "$BIN" bench gemm --reps 10 --chart "$O/x.png" "$@" 2>&1 | filt > "$O/g-$name.txt"
    echo "== $name $(( $(date +%s) - t0 )) s"; grep -E 'x[0-9]+x[0-9]+ ' "$O/g-$name.txt" | grep -v verify | head -12
}
g heur128 $S128
for c in 128x64 128x128 128x128-pingpong; do g s-$c --config $c $S128; done
for c in 128x256c2 128x224c2 128x128-pingpong 128x128c2 128x256 128x128; do g mis-$c --config $c $M; done
echo "total: $(( $(date +%s) - t0 )) s"
rm -f "$O/x.png"
cd "$OUT" && tar czf s.tgz s && rm -rf s
