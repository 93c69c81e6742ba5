#!/usr/bin/env bash
# Session 17, call 3 (bundle: s17-bn = 128x192c2/128x160c2 + NARROW_PAIR_MIN_GAIN, merged with s17-copy =
# baton's own pitched copy kernel for the re-pack):
# (a) gpu_gemm: the copy kernel byte-for-byte test and the re-pack tests (now on the kernel), memcheck of both;
# (b) `baton bench repack`: our copy vs cuMemcpy2DAsync vs a flat copy, at the re-pack sizes of the sweep;
# (c) forced rows, old plan vs new plan, at off-sweep LLM widths the new pairs take (never measured before);
# (d) the ragged column with forced re-pack choices (refit of the copy's rate). Writes $OUT/c.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/c"; mkdir -p "$O"; SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
timeout 150 $B/tests/baton-reference__gpu_gemm repack pitched_copy --test-threads=1 --nocapture > "$O/gpu_gemm-copy.txt" 2>&1
echo "(a) t=${SECONDS}s"; grep -E "test result|panicked|FAIL|^test " "$O/gpu_gemm-copy.txt" | cut -c1-160 | head -20
BATON_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm pitched_copy --test-threads=1 > "$O/memcheck-copy.txt" 2>&1
echo "(a) memcheck copy rc=$?"; grep -E "ERROR SUMMARY|test result" "$O/memcheck-copy.txt" | tail -2
BATON_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm repack --test-threads=1 > "$O/memcheck-repack.txt" 2>&1
echo "(a) memcheck repack rc=$? t=${SECONDS}s"; grep -E "ERROR SUMMARY|test result" "$O/memcheck-repack.txt" | tail -2
{
for r in 128 512 2048 4104 8192 16384 65536; do timeout 30 $BATON bench repack --rows $r --row-bytes 4112 2>&1 | tail -4 | sed "s|^|[rows $r] |"; done
timeout 30 $BATON bench repack --rows 4104 --row-bytes 4114 --src-pitch 4114 2>&1 | tail -4 | sed "s|^|[ragged 4114] |"
} > "$O/repack-bench.txt" 2>&1
echo "(b) t=${SECONDS}s"; cat "$O/repack-bench.txt" | cut -c1-170
N=0
brow() { local s=$1; shift; N=$((N+1))
  timeout 30 $BATON bench gemm --shape "$s" --reps 21 "$@" --chart /tmp/x.png --json "$O/b$N.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$N $*] |"; }
rows() { local s=$1; shift; brow $s; for c in "$@"; do brow $s --config $c; done; }
{
rows 1024x2112x4096 128x64
rows 1024x2560x2048 128x224c2
rows 2048x2560x2048 128x128-pingpong
rows 256x11008x4096 128x224c2
rows 256x18944x4096 128x128-pingpong
rows 512x18944x2048 128x128-pingpong
rows 4096x2112x4096 128x128-pingpong
rows 1024x18944x4096 128x128-pingpong
rows 256x12288x4096 128x224c2
rows 2048x2112x4096 128x128-pingpong
rows 512x6144x2048 128x224c2
rows 8192x13824x4096 128x192c2
rows 2048x13824x2048 128x192c2
} > "$O/llm-rows.txt" 2>&1
echo "(c) t=${SECONDS}s"; cut -c1-170 "$O/llm-rows.txt"
rr() { local s=$1 c=$2; shift 2; for r in "$@"; do brow $s --config $c --repack $r; done; }
{
brow 128x4104x2056; rr 128x4104x2056 128x64 none a
brow 512x4104x2056; rr 512x4104x2056 128x128c2 none a; rr 512x4104x2056 128x192c2 none a
brow 1024x4104x2056; rr 1024x4104x2056 256x128c2 none a; rr 1024x4104x2056 128x192c2 none
brow 2048x4104x2056; rr 2048x4104x2056 256x128c2 none a
brow 8192x4104x2056; rr 8192x4104x2056 256x128c2 a; rr 8192x4104x2056 128x224c2 b
brow 16384x4104x2056; rr 16384x4104x2056 128x224c2 none b; rr 16384x4104x2056 128x256c2 b
} > "$O/ragged-rows.txt" 2>&1
echo "(d) t=${SECONDS}s"; cut -c1-170 "$O/ragged-rows.txt"
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf c.tar.gz c && rm -rf c
