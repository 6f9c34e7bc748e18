import csv, io, lzma, re, collections, sys
def load(n):
    text = lzma.open(f"{n}.csv.xz","rt").read()
    return list(csv.DictReader(io.StringIO(text[text.index('"Address"'):])))
def num(r,k):
    try: return float((r.get(k) or "0").replace(",",""))
    except: return 0.0
for n in sys.argv[1:]:
    rows=load(n)
    reasons=[k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    ops=[re.sub(r"^@!?U?P\w+\s+","",r["Source"].strip()).split(" ")[0] for r in rows]
    su=[i for i,o in enumerate(ops) if o.startswith("USETMAXREG")]
    # tail: trailing block of SYNCS/BRA/NOP after the last EXIT
    last_exit=max(i for i,o in enumerate(ops) if o=="EXIT")
    reg=lambda i: "pro" if i<su[0] else "cons" if i<su[1] else "prod" if i<=last_exit else "tail"
    tot=collections.defaultdict(collections.Counter)
    for i,r in enumerate(rows):
        g=reg(i)
        tot[g]["all"]+=num(r,"Warp Stall Sampling (All Samples)")
        for k in reasons: tot[g][k]+=num(r,k)
    print(n, " ".join(f"{g}={tot[g]['all']:.0f}" for g in ["pro","cons","prod","tail"]))
    for g in ["cons","prod","tail"]:
        top=sorted(((k,v) for k,v in tot[g].items() if k!="all"),key=lambda kv:-kv[1])[:7]
        print("   ",g," ".join(f"{k[6:]}={v:.0f}" for k,v in top))
