#!/usr/bin/env bash
# Session 16, call 1: (a) racecheck of session 15's FP8 A-scale change (views tests, BATON_SMALL=1);
# (b) FP8 forced split-K rows at N = 1024, K = 32768 (--flush-l2, one invocation per row);
# (c) FP8 mid-M forced kernels at the sweep's rows below 0.95 (queued timing, as the sweep);
# (d) BF16 forced plans on the N = 1024, K = 4096 column (0.75-0.87 of cuBLAS);
# (e) BF16 ragged column probe: K = 2056 (4112-byte rows) vs aligned K, and ncu of ours vs cuBLAS.
# Bundle: .lead-carry/final-bundle.tar.xz (e8611a6, kernels' PTX = main c4deea1's). Writes $OUT/a.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/a"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
mkdir -p /tmp/fb && [ -d /tmp/fb/.final-bundle ] || tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle; BATON=$B/bin/baton; head -1 $B/BUILD-INFO
# (a)
BATON_SMALL=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/tests/baton-reference__gpu_gemm_views fp8 --test-threads=1 > "$O/racecheck-views-fp8.txt" 2>&1
echo "racecheck views fp8 rc=$? t=${SECONDS}s"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" "$O/racecheck-views-fp8.txt" | tail -3
# (b)
K=baton_gemm_fp8_blockwise_
frow() { local s=$1; shift; local a=(); [ $# -ge 2 ] && a=(--kernel $K$1 --fp8-split-k $2)
  timeout 25 $BATON bench gemm-fp8 --flush-l2 --shape $s "${a[@]}" 2>&1 | tr '\r' '\n' | grep -E "^\| [0-9]+×|refus|rror|FAIL" | sed "s|^|[${*:-plan}] |"; }
{
frow 512x1024x32768; frow 512x1024x32768 128x128_db 4; frow 512x1024x32768 128x64_db 2; frow 512x1024x32768 128x64_db 4; frow 512x1024x32768 256x128_sk 8; frow 512x1024x32768 128x128_db_c2 4; frow 512x1024x32768 128x128_db 8
frow 256x1024x32768; frow 256x1024x32768 128x128_db 8; frow 256x1024x32768 128x64_db 4; frow 256x1024x32768 256x128_sk 16; frow 256x1024x32768 128x128_db_c2 8
frow 32x1024x32768; frow 32x1024x32768 128x64_db 8; frow 32x1024x32768 128x64_db 16; frow 32x1024x32768 128x32_db 4; frow 32x1024x32768 128x128_db 16
frow 8x1024x32768; frow 8x1024x32768 128x64_db 16; frow 8x1024x32768 128x32_db 8
} > "$O/fp8-split-rows.txt" 2>&1
echo "(b) t=${SECONDS}s"; cut -c1-170 "$O/fp8-split-rows.txt"
# (c)
N=0; qrow() { local s=$1; shift; local a=(); [ $# -ge 1 ] && a=(--kernel $K$1); N=$((N+1))
  timeout 25 $BATON bench gemm-fp8 --reps 21 --shape $s "${a[@]}" --json "$O/q$N-$s-${1:-plan}.json" 2>&1 | tr '\r' '\n' | grep -E "^\| [0-9]+×|refus|rror|FAIL" | sed "s|^|[${*:-plan}] |"; }
{
for k in "" 256x128 256x96 256x128_mca 128x128_db_c2 128x96_db; do qrow 2048x5000x4096 $k; done
for k in "" 256x128 256x96 256x128_mca 128x96_db; do qrow 1024x5000x4096 $k; done
for k in "" 128x64_db 128x128_db 128x32_db; do qrow 256x5000x4096 $k; done
for k in "" 256x128 256x128_mca 128x64_db 128x128_db_c2; do qrow 2048x1024x4096 $k; done
for k in "" 128x128_db 256x128 128x128_db_c2; do qrow 512x8192x1024 $k; done
for k in "" 256x128 128x64_db 128x128_db_c2; do qrow 512x4096x4096 $k; done
} > "$O/fp8-midm-rows.txt" 2>&1
echo "(c) t=${SECONDS}s"; cut -c1-170 "$O/fp8-midm-rows.txt"
# (d)
brow() { local s=$1; shift; local a=(); [ $# -ge 2 ] && a=(--config "$1" --split-k "$2")
  N=$((N+1)); timeout 25 $BATON bench gemm --shape "$s" --reps 21 "${a[@]}" --chart /tmp/x.png --json "$O/b$N-$s-${1:-plan}-${2:-}.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[${*:-plan}] |"; }
{
brow 32x1024x4096; for s in 2 8 16; do brow 32x1024x4096 32x128-swapab $s; done; brow 32x1024x4096 64x128-swapab 8
brow 64x1024x4096; for s in 2 8 16; do brow 64x1024x4096 64x128-swapab $s; done; brow 64x1024x4096 128x64 2
brow 128x1024x4096; brow 128x1024x4096 128x64 1; brow 128x1024x4096 128x64 4; brow 128x1024x4096 128x128 4; brow 128x1024x4096 128x128 8; brow 128x1024x4096 64x128-swapab 8
brow 512x1024x4096; brow 512x1024x4096 128x64 1; brow 512x1024x4096 128x128 2; brow 512x1024x4096 128x128 4; brow 512x1024x4096 128x128c2 2; brow 512x1024x4096 128x128-pingpong 1
brow 1024x1024x4096; brow 1024x1024x4096 128x128 1; brow 1024x1024x4096 128x128 2; brow 1024x1024x4096 128x128-pingpong 1; brow 1024x1024x4096 128x128c2 2
} > "$O/bf16-n1024-rows.txt" 2>&1
echo "(d) t=${SECONDS}s"; cut -c1-160 "$O/bf16-n1024-rows.txt"
# (e)
{ for s in 16384x4104x2056 16384x4104x2048 16384x4096x2056 16384x4104x2064 16384x4104x2080 16384x4104x2112 16384x4096x2048 64x4104x2056 64x4104x2048 2048x4104x2056 2048x4104x2048; do brow $s; done
} > "$O/bf16-ragged-rows.txt" 2>&1
echo "(e) t=${SECONDS}s"; cut -c1-160 "$O/bf16-ragged-rows.txt"
for s in 16384x4104x2056 16384x4104x2048; do
  timeout 100 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    -k regex:'gemm|xmma|cutlass|sm90|nvjet' -c 16 -o "$O/ncu-$s" -f $BATON bench gemm --shape $s --reps 1 --chart /tmp/x.png > "$O/ncu-$s-run.txt" 2>&1
  echo "ncu $s rc=$? t=${SECONDS}s"
  ncu -i "$O/ncu-$s.ncu-rep" --page details --csv > "$O/ncu-$s.csv" 2>/dev/null
  python3 - "$O/ncu-$s.csv" <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
want=("Grid Size","Duration","DRAM Throughput","L2 Cache Throughput","Compute (SM) Throughput","Memory Throughput","L2 Hit Rate","lts__t_requests_srcunit_tex.sum","lts__t_sectors_srcunit_tex.sum","dram__bytes_read.sum")
seen={}
for r in rows:
  if r["Metric Name"] in want: seen.setdefault((r["ID"],r["Kernel Name"][:60]),{})[r["Metric Name"]]=r["Metric Value"]+" "+r["Metric Unit"]
for (i,k),v in seen.items(): print(i,k,v)
PY
done
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf a.tar.gz a && rm -rf a
