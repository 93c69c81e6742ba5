#!/usr/bin/env python3
"""Per-shape time of ours: main (session 12 final sweep, call 2 base) vs this branch (call 1 new,
call 2 new); geomean of the time ratio by run-time band and by plan. Run from this folder."""
import json, math
def load(p): return {(x['m'], x['n'], x['k']): x for x in json.load(open(p))['results']}
def gm(v): return math.exp(sum(math.log(a) for a in v) / len(v))
s12 = load('../2026-11-27-h100-s12-lead/final-gemm-sweep.json')
c1n, c2b, c2n = load('call1/new-sweep.json'), load('call2/base-sweep.json'), load('call2/new-sweep.json')
print('same call (call 2): base time / new time, geomean over 84 shapes: %.4f' % gm([c2b[k]['ours_ms'] / c2n[k]['ours_ms'] for k in c2n]))
print('same call (call 2): cuBLAS time in the new run / in the base run: %.4f' % gm([c2n[k]['references'][0]['ms'] / c2b[k]['references'][0]['ms'] for k in c2n]))
for lo, hi in [(0, 0.05), (0.05, 0.2), (0.2, 1e9)]:
    ks = [k for k in c2n if lo <= c2n[k]['ours_ms'] < hi]
    print('  ours %.2f-%s ms: %2d shapes, base/new %.4f' % (lo, hi if hi < 1e9 else 'inf', len(ks), gm([c2b[k]['ours_ms'] / c2n[k]['ours_ms'] for k in ks])))
rows = []
for k, x in c2n.items():
    old, new = [s12[k]['ours_ms'], c2b[k]['ours_ms']], [c1n[k]['ours_ms'], x['ours_ms']]
    flag = 'SLOWER' if min(new) > max(old) else ('FASTER' if max(new) < min(old) else '')
    rows.append((math.sqrt(new[0] * new[1] / old[0] / old[1]), k, x['config'], x['grid'], x['stream_k'], old, new, flag))
rows.sort()
print('\nnew/main time (geomean of 2 each), main = [s12 final, call 2 base] µs, new = [call 1, call 2] µs;')
print('FASTER/SLOWER: both new runs beat/lose to both main runs')
for r in rows:
    print('%.3f %-18s %-18s grid %3d split %-8s main %-16s new %-16s %s' % (r[0], 'x'.join(map(str, r[1])), r[2], r[3], str(r[4]),
          str([round(1000 * a, 1) for a in r[5]]), str([round(1000 * a, 1) for a in r[6]]), r[7]))
print('FASTER %d, SLOWER %d' % (sum(r[7] == 'FASTER' for r in rows), sum(r[7] == 'SLOWER' for r in rows)))
