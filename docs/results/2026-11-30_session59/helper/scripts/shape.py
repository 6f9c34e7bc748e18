import sys,re
from load import op
def read(f):
    L=[]
    for line in open(f):
        i,s=line.rstrip('\n').split(' ',1); L.append(s)
    return L
def copies(L):
    # iteration = from an S HGMMA (first k-step, RZ accumulate) to the next one
    idx=[i for i,s in enumerate(L) if s.startswith('HGMMA.64x128x16') and ', RZ' in s]
    return idx
def analyze(L,a,b,label):
    seg=L[a:b]
    mufu=[j for j,s in enumerate(seg) if op(s)=='MUFU.EX2']
    f2=[j for j,s in enumerate(seg) if op(s).startswith('F2FP')]
    dep=[(j,s) for j,s in enumerate(seg) if 'DEPBAR' in s]
    lastm=mufu[-1] if mufu else -1
    # producer distance: for each F2FP, find the last MUFU writing either source reg
    dists=[]
    for j in f2:
        srcs=re.findall(r'R\d+',seg[j])[1:]
        best=None
        for k in range(j-1,-1,-1):
            m=re.match(r'(?:@!?U?P\w+\s+)?MUFU\.EX2 (R\d+)',seg[k])
            if m and m.group(1) in srcs: best=j-k; break
        dists.append(best)
    after=sum(1 for j in f2 if j>lastm)
    print(f"{label}: iteration {a}-{b} ({b-a} instr); MUFU {len(mufu)} ({mufu[0]}..{lastm}); F2FP {len(f2)} ({f2[0] if f2 else '-'}..{f2[-1] if f2 else '-'}), {after} after last MUFU; DEPBAR at {[(j,s.split()[-1]) for j,s in dep]}")
    print("   F2FP distance from its later EX2 (instructions):", dists)
    post=[s for s in seg[lastm+1:]]
    print(f"   after last MUFU: {len(post)} instr: " + '; '.join(op(s) for s in post))
if __name__=='__main__':
    L=read(sys.argv[1]); idx=copies(L)
    for n,(a,b) in enumerate(zip(idx,idx[1:])):
        if b-a>200: analyze(L,a,b,f"{sys.argv[1]} copy{n}")
