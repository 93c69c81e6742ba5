#!/usr/bin/env bash
# Session 15, call 5: FP8 end-of-kernel and small-M epilogue experiments (branch s15-fp8-epi), in DeepGEMM's
# harness at issue #19's 14 small-M shapes + 2 large ones. base = main's FP8 kernels; v1 = exit waits for the
# last TMA stores' smem reads only (wait_group.read 0); v2 = v1 + at M <= 64 a ring of four D buffers.
# Order: DeepGEMM + base, v1, v2, base, v2, v1 (baton only after the first). Writes $OUT/e.tar.gz.
set -uo pipefail
C=$PWD/.lead-carry; O0="${OUT:-/tmp}"; O="$O0/e"; mkdir -p "$O"
SECONDS=0
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for v in base v1 v2; do mkdir -p /tmp/w$v && (cd /tmp/w$v && python3 -m zipfile -e $C/exp15/$v.whl . ); done
SH=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x7168x2048
EX=$PWD/python/bench/deepgemm_extra.py
cd $C/deepgemm
i=0
for v in base v1 v2 base v2 v1; do
  i=$((i+1)); extra=(--no-deepgemm); [ $i = 1 ] && extra=()
  PYTHONPATH=/tmp/w$v PYTHONUNBUFFERED=1 timeout 120 python3 run.py --shapes $SH --no-torch "${extra[@]}" --extra $EX --json "$O/run$i-$v.json" > "$O/run$i-$v.txt" 2>&1
  echo "run$i $v rc=$? t=${SECONDS}s"
done
cd "$O"; python3 - <<'PY'
import json,glob,collections,math
t=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob('run*.json')):
    v=f.split('-')[1].split('.')[0]
    for r in json.load(open(f))['results']:
        for k,x in r['impls'].items():
            if 'median_ms' not in x: continue
            if x.get('check')!='ok': print('CHECK', f, r['shape'], k, x.get('check'))
            key='dg' if k=='deepgemm' else (v if k=='baton_py' else None)
            if key: t[r['shape']][key].append(x['median_ms']*1e3)
g=collections.defaultdict(list)
print(f"{'shape':16} {'dg':>6} {'base':>13} {'v1':>13} {'v2':>13}  v1/base v2/base base/dg v2/dg")
for s,d in t.items():
    mb=min(d['base']); m1=min(d['v1']); m2=min(d['v2']); dg=d['dg'][0]
    print(f"{s:16} {dg:6.1f} {'/'.join(f'{x:.1f}' for x in d['base']):>13} {'/'.join(f'{x:.1f}' for x in d['v1']):>13} {'/'.join(f'{x:.1f}' for x in d['v2']):>13}  {mb/m1:.3f} {mb/m2:.3f} {dg/mb:.3f} {dg/m2:.3f}")
    g['v1'].append(mb/m1); g['v2'].append(mb/m2)
for k,v in g.items(): print(k,'speed-up geomean (best of 2 each)',round(math.exp(sum(map(math.log,v))/len(v)),4))
PY
date -u; echo "t=${SECONDS}s"
cd "$O0" && tar czf e.tar.gz e && rm -rf e
