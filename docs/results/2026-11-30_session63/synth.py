import math, heapq
def sched(ds,S=132):
    h=[0.0]*S
    for d in ds:
        t=heapq.heappop(h); heapq.heappush(h,t+d)
    return max(h)
def run(seq, d, tokens=16384, causal=True):
    bn = 64 if d==256 else 128; bm = 80 if d==128 else (64 if d==256 else 128)
    heads = 2048//d; batch = max(1,tokens//seq); NP = heads*batch; NX = seq//bn
    def steps(n):
        if not causal: return math.ceil(seq/bm)
        return math.ceil(seq/bm) - (n*bn)//bm
    D = {(x,p): steps(x)+1.5 for x in range(NX) for p in range(NP)}
    grid = sched([D[(x,p)] for p in range(NP) for x in range(NX)])
    ideal = sum(D.values())/132
    res=[f"seq {seq:5d} d{d:3d} NP {NP:3d} NX {NX:3d} grid/ideal {ideal/grid:.3f}"]
    for G in (2,4):
        order=[]
        for s0 in range(0,NP,G):
            for x in range(NX):
                for p in range(s0,min(NP,s0+G)): order.append((x,p))
        res.append(f"g{G} {grid/sched([D[k] for k in order])-1:+.3f}")
    for L in (2,4,8):
        L2=min(L,NP)
        order=[(x,p) for p in range(NP-L2) for x in range(NX)]+[(x,p) for x in range(NX) for p in range(NP-L2,NP)]
        res.append(f"last{L} {grid/sched([D[k] for k in order])-1:+.3f}")
    # reversed pair order for the last pair only? descending the whole last pair: n descending = short first -> bad
    print("  ".join(res))
for d in (64,128,256):
    for seq in (1024,2048,4096,8192,16384,32768):
        run(seq,d)
