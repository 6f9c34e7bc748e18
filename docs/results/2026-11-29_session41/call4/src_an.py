import csv, gzip, sys, io
def load(p):
    lines = gzip.open(p,'rt').read().splitlines()
    i = next(k for k,l in enumerate(lines) if l.startswith('"Address"'))
    rd = csv.reader(io.StringIO("\n".join(lines[i:])))
    hdr = next(rd); rows=[r for r in rd if len(r)==len(hdr)]
    return hdr, rows
for p in sys.argv[1:]:
    hdr, rows = load(p)
    ci = {h:k for k,h in enumerate(hdr)}
    S = ci["Warp Stall Sampling (All Samples)"]; E = ci["Instructions Executed"]
    stall_cols = [h for h in hdr if h.startswith("stall_") and "(Not Issued)" not in h] if any(h.startswith("stall_") for h in hdr) else []
    tot = sum(int(r[S] or 0) for r in rows); inst = sum(int(r[E] or 0) for r in rows)
    print(f"== {p}: {len(rows)} SASS lines, samples {tot}, warp-instructions {inst}")
    # by reason
    if stall_cols:
        agg = {h: sum(float(r[ci[h]] or 0) for r in rows) for h in stall_cols}
        print("  reasons:", ", ".join(f"{h[6:]} {v/tot*100:.1f}%" for h,v in sorted(agg.items(), key=lambda x:-x[1])[:9]))
    top = sorted(rows, key=lambda r: -int(r[S] or 0))[:22]
    for r in top:
        rs = ""
        if stall_cols:
            rr = sorted(((h[6:], float(r[ci[h]] or 0)) for h in stall_cols), key=lambda x:-x[1])[:2]
            rs = " ".join(f"{a}:{int(b)}" for a,b in rr if b>0)
        print(f"  {int(r[S]):6d} {int(r[S])/tot*100:5.1f}%  ex={int(r[E] or 0):9d}  {r[ci['Source']].strip()[:60]:60s} {rs}")
