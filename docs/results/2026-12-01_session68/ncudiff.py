import csv, io, lzma, re, collections, sys
def load(n):
    text = lzma.open(f"{n}.csv.xz","rt").read()
    return list(csv.DictReader(io.StringIO(text[text.index('"Address"'):])))
def num(r,k): 
    try: return float((r.get(k) or "0").replace(",",""))
    except: return 0.0
names=sys.argv[1:]
reasons=None
agg={}
for n in names:
    rows=load(n)
    if reasons is None: reasons=[k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    a=collections.defaultdict(lambda: collections.Counter())
    for r in rows:
        op=re.sub(r"^@!?U?P\w+\s+","",r["Source"].strip()).split(" ")[0]
        for k in reasons: a[op][k]+=num(r,k)
        a[op]["all"]+=num(r,"Warp Stall Sampling (All Samples)")
    agg[n]=a
base=names[0]
for n in names[1:]:
    print(f"=== {n} - {base}: total {sum(v['all'] for v in agg[n].values())-sum(v['all'] for v in agg[base].values()):+.0f}")
    ops=set(agg[n])|set(agg[base])
    diffs=sorted(ops,key=lambda o:-abs(agg[n][o]["all"]-agg[base][o]["all"]))[:14]
    for o in diffs:
        d={k:agg[n][o][k]-agg[base][o][k] for k in reasons}
        top=sorted(d.items(),key=lambda kv:-abs(kv[1]))[:4]
        print(f"  {o:34s} {agg[n][o]['all']-agg[base][o]['all']:+7.0f}  "+"  ".join(f"{k[6:]}{v:+.0f}" for k,v in top))
