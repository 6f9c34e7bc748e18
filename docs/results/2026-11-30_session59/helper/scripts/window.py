import sys
from load import op
from rle import rle, read
for f in sys.argv[1:]:
    L=read(f)
    idx=[i for i,s in enumerate(L) if s.startswith('HGMMA.64x128x16') and ', RZ' in s]
    # steady copies: those followed by a PV HGMMA before the next S
    for a,b in zip(idx,idx[1:]):
        seg=L[a:b]
        if not any(s.startswith('HGMMA.64x64') for s in seg) or b-a<300: continue
        # find BAR.SYNC before a
        bs=max(i for i in range(a) if 'BAR.SYNC' in L[i])
        arv=a+min(j for j,s in enumerate(seg) if 'BAR.ARV' in s)
        ops=[op(s) for s in L[bs:arv+1]]
        # loop top: from the last MUFU before bs
        lm=max(i for i in range(bs) if op(L[i])=='MUFU.EX2')
        print(f"{f}: copy@{a}: BAR.SYNC..BAR.ARV {arv-bs+1} instr; last EX2 -> BAR.SYNC {bs-lm-1} instr")
        print("    ", rle(ops))
        break
