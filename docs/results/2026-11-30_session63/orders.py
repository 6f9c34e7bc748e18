import sys, statistics as st, heapq
sys.path.insert(0,'/tmp/sim')
def load(path):
    rows=[]
    for line in open(path):
        f=line.split()
        if f and f[0]=="EDGE":
            d={"id":int(f[1])}
            for k,v in zip(f[2::2],f[3::2]): d[k]=int(v)
            d["exit"]=max(d["stored"],d["wdone"]); rows.append(d)
    return rows
def sched(ds,g=0.32):
    h=[0.0]*132
    for d in ds:
        t=heapq.heappop(h); heapq.heappush(h,t+d+g)
    return max(h)
for path in sys.argv[1:]:
    r=load(path); t0=min(x["entry"] for x in r); span=(max(x["exit"] for x in r)-t0)/1e3
    D={(x["x"],x["yz"]):(x["exit"]-x["entry"])/1e3 for x in r}
    NX=max(k[0] for k in D)+1; NP=max(k[1] for k in D)+1
    base=sched([D[(x,p)] for p in range(NP) for x in range(NX)])
    out=[f"{path}: measured {span:.0f} grid {base:.0f}"]
    for S in (1,2,4,8,16,NP):
        if S>NP: continue
        order=[]
        for s0 in range(0,NP,S):
            for x in range(NX):
                for p in range(s0,min(NP,s0+S)): order.append((x,p))
        out.append(f"secLPT{S} {base/sched([D[k] for k in order])-1:+.4f}")
    # only the last L pairs interleaved (key slowest), the rest as grid
    for L in (2,4,8):
        order=[(x,p) for p in range(NP-L) for x in range(NX)]+[(x,p) for x in range(NX) for p in range(NP-L,NP)]
        out.append(f"lastLPT{L} {base/sched([D[k] for k in order])-1:+.4f}")
    print("  ".join(out))
