import csv,sys,collections
def load(f):
    rows=list(csv.reader(open(f)))
    hdr=rows[1]; data=[r for r in rows[2:] if len(r)==len(hdr) and r[0].startswith('0x')]
    return hdr,data
for f in sys.argv[1:]:
    hdr,data=load(f)
    ix={h:i for i,h in enumerate(hdr)}
    st=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
    tot=collections.Counter(); 
    allS=sum(int(r[ix["Warp Stall Sampling (All Samples)"]]) for r in data)
    for r in data:
        for h in st: tot[h]+=int(r[ix[h]] or 0)
    print("==",f,"samples",allS,"instrs",len(data), "executed", sum(int(r[ix["Instructions Executed"]]) for r in data))
    for h,v in tot.most_common(12): print(f"   {h:28s} {v:8d} {100*v/allS:5.1f}%")
    # by opcode
    op=collections.Counter(); ex=collections.Counter()
    for r in data:
        o=r[1].split()
        o=[x for x in o if not x.startswith('@')][0].split('.')[0] if o else '?'
        op[o]+=int(r[ix["Warp Stall Sampling (All Samples)"]]); ex[o]+=int(r[ix["Instructions Executed"]])
    print("  by opcode (samples, executed warp-instrs):")
    for o,v in op.most_common(16): print(f"   {o:12s} {v:8d} {100*v/allS:5.1f}%  exec {ex[o]}")
    print("  top instrs:")
    for r in sorted(data,key=lambda r:-int(r[ix["Warp Stall Sampling (All Samples)"]]))[:25]:
        s=int(r[ix["Warp Stall Sampling (All Samples)"]]); top=max(st,key=lambda h:int(r[ix[h]] or 0))
        print(f"   {r[0][-5:]} {s:7d} {100*s/allS:5.1f}% {top:20s} {r[1].strip()[:80]}")
