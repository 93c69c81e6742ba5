#!/usr/bin/env bash
# Session 17, call 7 (bundle 41324f4, forced rows only; call 1 ran on an H200, this one on the H100): why do the large-M short-K rows fall with M
# (65536x8192x1024 0.76, 16384x8192x1024 0.89 on 128x128-pingpong; 16384x4104x2056 0.77 on 128x224c2+B)
# while the model's estimate scales linearly? Forced configurations, one invocation each, with the SM
# clock and power sampled (read-only nvidia-smi query) while each row runs. Writes $OUT/l.tar.gz.
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/h"; mkdir -p "$O"; SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv,noheader
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
BATON=/tmp/fb/.final-bundle/bin/baton; head -1 /tmp/fb/.final-bundle/BUILD-INFO
export BATON_PDL=0  # the bundle predates 4546b63 (PDL opt-in): run as shipped
N=0
brow() { local s=$1; shift; N=$((N+1))
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > "$O/smi-$N.csv" 2>&1 &
  local P=$!
  timeout 40 $BATON bench gemm --shape "$s" --reps 21 "$@" --chart /tmp/x.png --json "$O/b$N.json" 2>&1 | tr '\r' '\n' | grep -E "^$s|refus|error|FAIL" | grep -v "^\[\|verify" | sed "s|^|[$N $*] |"
  kill $P 2>/dev/null; wait $P 2>/dev/null
  # clock/power summary over samples with power above 300 W (the timed loops)
  awk -F', ' -v n=$N '{gsub(/ MHz| W/,""); if ($3+0>300){c+=$2; p+=$3; k++; if($2<mn||mn==0)mn=$2}} END{if(k) printf "   [%d] samples>300W %d: mean clock %.0f MHz (min %d), mean power %.0f W\n", n, k, c/k, mn, p/k}' "$O/smi-$N.csv"; }
{
for s in 65536x8192x1024 16384x8192x1024; do
  brow $s; for c in 128x256c2 256x128c2 128x224c2; do brow $s --config $c; done
done
brow 65536x8192x1024
brow 16384x4104x2056; brow 16384x4104x2056 --config 128x256c2 --repack b
} > "$O/rows.txt" 2>&1
cut -c1-200 "$O/rows.txt"; echo "t=${SECONDS}s"
cd "$O0" && tar czf h.tar.gz h && rm -rf h
