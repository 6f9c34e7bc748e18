# MUFU.EX2 spacing in the main K/V loop (32 or 48 HGMMA) of every hdim 128 bf16 kernel in a
# `cuobjdump -sass` listing: gaps of 2, 3, 4-7 and 8+ instructions between consecutive MUFUs.
# Usage: python3 mufu_gaps.py FILE.sass
import re,sys,collections
txt=open(sys.argv[1]).read()
for f in re.split(r'\n\s*Function : ',txt)[1:]:
    name=f.split('\n',1)[0]
    if 'nv_bfloat16' not in name or 'ILi128E' not in name: continue
    ins=[(int(m[1],16),m[2].strip()) for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);',f)]
    addr={a:i for i,(a,_) in enumerate(ins)}
    best=None
    for i,(a,t) in enumerate(ins):
        m=re.search(r'BRA\s.*?(0x[0-9a-f]+)',t)
        if m and int(m[1],16)<a and int(m[1],16) in addr:
            j=addr[int(m[1],16)]; body=[x for _,x in ins[j:i+1]]
            h=sum('HGMMA' in x for x in body)
            if h in (32,48) and (best is None or len(body)<len(best)): best=body
    if best is None: continue
    ops=[re.sub(r"^@!?U?P\w+\s+","",x).split(" ")[0] for x in best]
    pos=[i for i,o in enumerate(ops) if o.startswith('MUFU')]
    g=collections.Counter(min(pos[i+1]-pos[i],9) for i in range(len(pos)-1))
    short=re.sub(r'.*kernelI13__nv_bfloat16','',name)[:110]
    print(f"{len(ops):5d} mufu={len(pos)} gap2={g[2]:3d} gap3={g[3]:3d} gap4-7={sum(g[k] for k in (4,5,6,7)):3d} gap8+={g[8]+g[9]:3d}  {short}")
