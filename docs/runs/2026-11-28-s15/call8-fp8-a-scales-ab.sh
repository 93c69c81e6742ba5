#!/usr/bin/env bash
# Session 15 call 8: FP8 A scales read in place (main e8611a6's wheel, "new") against the wheel of f9b782b
# ("old": the padded copy at M not a multiple of 4, rank-2 scale map), same harness, same call, alternating:
# DeepGEMM + old, new, old, new. 256-row large shapes (their stages grew by 1 KiB), two short-K small-M rows,
# and torch's scale layout at M = 66 and 130 (old: copied per call). Writes $OUT/h.tar.gz.
set -uo pipefail
C=$PWD/.lead-carry; O0="${OUT:-/tmp}"; O="$O0/h"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
rm -rf /tmp/pynew; pip install -q --no-deps --no-index --target /tmp/pynew $C/baton-*.whl > /dev/null 2>&1
SH=4096x7168x16384,8192x8192x8192,4096x4096x7168,4096x2112x7168,64x32768x512,128x32768x512,66x512x8192,130x1024x8192
EX=$PWD/python/bench/deepgemm_extra.py
cd $C/deepgemm
i=0
for v in old new old new; do
  i=$((i+1)); extra=(--no-deepgemm); [ $i = 1 ] && extra=()
  P=/tmp/pynew; [ $v = old ] && P=$C/oldpy
  PYTHONPATH=$P PYTHONUNBUFFERED=1 timeout 100 python3 run.py --shapes $SH --no-torch "${extra[@]}" --extra $EX --json "$O/run$i-$v.json" > "$O/run$i-$v.txt" 2>&1
  echo "run$i $v rc=$? t=${SECONDS}s"
done
cd "$O"; python3 - <<'PY'
import json,glob,collections
t=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob('run*.json')):
    v=f.split('-')[1].split('.')[0]
    for r in json.load(open(f))['results']:
        for k,x in r['impls'].items():
            if 'median_ms' not in x: continue
            if x.get('check')!='ok': print('CHECK', f, r['shape'], k, x.get('check'))
            key='dg' if k=='deepgemm' else f"{v}{'_tsa' if k.endswith('torch_sa') else ''}"
            t[r['shape']][key].append(round(x['median_ms']*1e3,1))
for s,d in t.items(): print(s, dict(d))
PY
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf h.tar.gz h && rm -rf h
