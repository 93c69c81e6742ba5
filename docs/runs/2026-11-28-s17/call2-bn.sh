#!/usr/bin/env bash
# Session 17, call 2 (bundle: branch s17-bn = main + 128x192c2 / 128x160c2 at a provisional speed 0.98):
# (a) correctness of the two new configurations: gpu_gemm (GemmConfig::ALL at ragged shapes vs f64, stream-K
#     vs f64 and cuBLAS) and gpu_gemm_split_k, then memcheck of the ragged tests (BATON_SMALL=1);
# (b) forced rows: the old plan's configuration beside 128x192c2 / 128x160c2 on shapes where the model moves
#     (the N = 5000 column and off-sweep LLM widths 1536..12288), plus 8192x7680x4096 (all four widths divide
#     or nearly: per-SM speed). Writes $OUT/n.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/n"; mkdir -p "$O"; SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
for t in gpu_gemm gpu_gemm_split_k; do
  timeout 150 $B/tests/baton-reference__$t --test-threads=1 --nocapture > "$O/$t.txt" 2>&1
  echo "(a) $t rc=$? t=${SECONDS}s"; grep -E "test result|panicked|FAIL|128x1[69]" "$O/$t.txt" | cut -c1-160 | head -20
done
BATON_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm matches_f64_reference_on_ragged --test-threads=1 > "$O/memcheck-ragged.txt" 2>&1
echo "(a) memcheck rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|test result" "$O/memcheck-ragged.txt" | tail -2
N=0
brow() { local s=$1; shift; N=$((N+1))
  timeout 30 $BATON bench gemm --shape "$s" --reps 21 "$@" --chart /tmp/x.png --json "$O/b$N.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$N $*] |"; }
rows() { local s=$1; shift; brow $s; for c in "$@"; do brow $s --config $c; done; }
{
rows 8192x7680x4096 128x256c2 128x224c2 128x192c2 128x160c2
rows 8192x12288x4096 128x256c2 128x192c2
rows 4096x6144x4096 128x256c2 128x192c2
rows 256x5000x4096 128x128-pingpong 128x160c2
rows 512x5000x4096 128x224c2 128x160c2 128x192c2
rows 1024x5000x4096 128x128-pingpong 128x160c2
rows 2048x5000x4096 128x224c2 128x160c2
rows 4096x5000x4096 128x256c2 128x160c2
rows 512x6144x4096 128x224c2 128x192c2
rows 1024x3072x4096 128x224c2 128x192c2
rows 2048x1536x4096 128x224c2 128x192c2
rows 512x2560x4096 128x128-pingpong 128x160c2
rows 1024x5120x4096 128x128-pingpong 128x160c2
rows 160x24576x1536 128x128-pingpong 128x192c2 128x160c2
rows 2048x7168x2048 128x128-pingpong 128x192c2 128x160c2
brow 1024x4104x2056; brow 1024x4104x2056 --config 256x128c2 --repack a; brow 1024x4104x2056 --config 128x192c2 --repack a
} > "$O/rows.txt" 2>&1
echo "(b) t=${SECONDS}s"; cut -c1-170 "$O/rows.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf n.tar.gz n && rm -rf n
