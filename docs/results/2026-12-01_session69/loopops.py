# The main K/V loop (32 HGMMA: two stages unrolled) of the dense (SeqLayout 0) and paged (2) walk
# kernels of hdim 128 bf16 in `cuobjdump -sass fwd_09_wgmma_persistent.cu.o`: opcode count
# differences and the gaps between consecutive MUFU.EX2. Usage: python3 loopops.py FILE.sass
import re,sys,collections
txt=open(sys.argv[1]).read()
res={}
for f in re.split(r'\n\s*Function : ',txt)[1:]:
    name=f.split('\n',1)[0]
    if 'nv_bfloat16' not in name or 'WgmmaPersistentConfigILi128EEENS0_22Fa3PersistentScheduler' not in name: continue
    lay=re.search(r'SeqLayoutE(\d)',name)[1]
    ins=[(int(m[1],16),m[2].strip()) for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);',f)]
    addr={a:i for i,(a,_) in enumerate(ins)}
    best=None
    for i,(a,t) in enumerate(ins):
        m=re.search(r'BRA\s.*?(0x[0-9a-f]+)',t)
        if m and int(m[1],16)<a and int(m[1],16) in addr:
            j=addr[int(m[1],16)]; body=[x for _,x in ins[j:i+1]]
            if sum('HGMMA' in x for x in body)==32 and (best is None or len(body)<len(best)): best=body
    ops=[re.sub(r"^@!?U?P\w+\s+","",x).split(" ")[0] for x in best]
    res[lay]=ops
    print(lay, len(ops))
a,b=res['0'],res['2']
ca,cb=collections.Counter(a),collections.Counter(b)
print({k:(ca[k],cb[k]) for k in set(ca)|set(cb) if ca[k]!=cb[k]})
# MUFU positions relative to HGMMA
for lay,ops in res.items():
    pos=[i for i,o in enumerate(ops) if o.startswith('MUFU')]
    hg=[i for i,o in enumerate(ops) if o.startswith('HGMMA')]
    print(lay, "HGMMA at", hg[:1], hg[15:17], "MUFU span", pos[:3], pos[-3:], "n", len(pos))
    # gaps between consecutive MUFU
    g=collections.Counter(min(pos[i+1]-pos[i],20) for i in range(len(pos)-1))
    print("   mufu gaps", sorted(g.items()))
