#!/usr/bin/env bash
# SWEEP call 2. before = f0d7927 (main b86155f, the fair bench, + a bench-only verify
# change); after = h-sweep (swap-AB 10/9/8 stages, overlapped split-K finalizer,
# Little's-law heuristic; main 6fa32a3 merged). Correctness first, then the
# fair sweeps (BF16 before/after interleaved, FP8 baseline), the swap-AB grid,
# sanitizers on the swap-AB kernels at a small size.
set -uo pipefail
B="$(dirname "$0")"
O0="$OUT"; O="$O0/c2"; mkdir -p "$O"
export PATH="$PATH:/usr/local/cuda/bin"
filt() { tr '\r' '\n' | grep -v '^\[' | grep -v '^[0-9]*/[0-9]* '; }
SECONDS=0
snap() { (cd "$O0" && tar czf c2.tgz c2); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader > "$O/gpu.txt"
cp "$B/before/BUILD-INFO" "$O/before-build.txt"; cp "$B/after/BUILD-INFO" "$O/after-build.txt"
for t in gpu_gemm_swap_ab gpu_gemm_split_k gpu_gemm; do
  timeout 90 "$B/after/$t" --test-threads 1 > "$O/test-$t.txt" 2>&1
  echo "test $t rc=$? t=${SECONDS}s: $(grep 'test result' "$O/test-$t.txt" | tail -1)"; snap
done
for side in before after; do
  timeout 150 "$B/$side/baton" bench gemm --sweep --reps 11 --json "$O/bf16-sweep-$side.json" --heatmap "$O/bf16-sweep-$side.png" 2>&1 | filt > "$O/bf16-sweep-$side.txt"
  echo "bf16 sweep $side rc=$? t=${SECONDS}s: $(grep -E 'geometric' "$O/bf16-sweep-$side.txt")"; snap
done
for tool in memcheck racecheck; do
  BATON_SMALL=1 timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 "$B/after/gpu_gemm_swap_ab" --test-threads 1 swap_ab_matches_f64 > "$O/sanitize-$tool.txt" 2>&1
  echo "sanitize $tool rc=$? t=${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$O/sanitize-$tool.txt" | tr '\n' ' ')"; snap
done
timeout 100 "$B/before/baton" bench gemm-fp8 --sweep --reps 11 --json "$O/fp8-sweep-before.json" --heatmap "$O/fp8-sweep-before.png" 2>&1 | filt > "$O/fp8-sweep-before.txt"
echo "fp8 sweep before rc=$? t=${SECONDS}s: $(grep -E 'geometric' "$O/fp8-sweep-before.txt")"; snap
timeout 60 "$B/after/gpu_gemm_swap_ab" --ignored --nocapture --test-threads 1 swap_ab_timing_grid > "$O/grid-after.txt" 2>&1
echo "grid after rc=$? t=${SECONDS}s"
snap && rm -rf "$O"
