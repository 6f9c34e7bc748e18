import sys, statistics as st, heapq
def load(path):
    rows=[]
    for line in open(path):
        f=line.split()
        if f and f[0]=="EDGE":
            d={"id":int(f[1])}
            for k,v in zip(f[2::2],f[3::2]): d[k]=int(v)
            d["exit"]=max(d["stored"],d["wdone"])
            rows.append(d)
    return rows
for path in sys.argv[1:]:
    r=load(path)
    t0=min(x["entry"] for x in r); t1=max(x["exit"] for x in r)
    span=t1-t0
    busy=sum(x["exit"]-x["entry"] for x in r)/(132*span)
    # per-SM last exit
    last={}; first={}
    for x in r:
        last[x["sm"]]=max(last.get(x["sm"],0),x["exit"]); first[x["sm"]]=min(first.get(x["sm"],1<<62),x["entry"])
    tail=sum(t1-v for v in last.values())/(132*span)
    head=sum(v-t0 for v in first.values())/(132*span)
    durs=[(x["exit"]-x["entry"])/1e3 for x in r]
    # per-SM gaps
    bysm={}
    for x in r: bysm.setdefault(x["sm"],[]).append(x)
    gaps=[]
    for sm,l in bysm.items():
        l.sort(key=lambda x:x["entry"])
        gaps+= [(b["entry"]-a["exit"])/1e3 for a,b in zip(l,l[1:])]
    cnt=[len(l) for l in bysm.values()]
    print(f"{path}: {len(r)} CTAs span {span/1e3:.1f} us busy {busy:.4f} tail-idle {tail:.4f} head-idle {head:.4f} gaps mean {st.mean(gaps):.2f} us; CTA dur mean {st.mean(durs):.1f} min {min(durs):.1f} max {max(durs):.1f}; CTAs/SM {min(cnt)}..{max(cnt)}")
    # last CTAs to finish: which ids
    lastc=sorted(r,key=lambda x:-x["exit"])[:5]
    print("   last exits: ", [(x["id"],x["x"],x["yz"],round((x["exit"]-x["entry"])/1e3,1), round((x["entry"]-t0)/1e3,1)) for x in lastc])
    # simulate: list scheduling of measured durations in id order (+gap), vs measured span
    g=st.mean(gaps)
    def sched(ds):
        h=[0.0]*132
        for d in ds:
            t=heapq.heappop(h); heapq.heappush(h,t+d+g)
        return max(h)
    ids=sorted(r,key=lambda x:x["id"])
    sim=sched([ (x["exit"]-x["entry"])/1e3 for x in ids])
    lpt=sched(sorted([(x["exit"]-x["entry"])/1e3 for x in ids],reverse=True))
    ideal=sum(durs)/132+g*len(r)/132
    print(f"   sim id-order {sim:.1f} us, LPT {lpt:.1f}, ideal {ideal:.1f} (measured {span/1e3:.1f}); ideal/measured {ideal/(span/1e3):.4f}")
