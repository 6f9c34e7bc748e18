import csv, gzip, sys, collections
fn=sys.argv[1]
rows=list(csv.reader(gzip.open(fn,'rt')))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
def num(r,h):
    try: return float(r[ix[h]])
    except: return 0.0
reasons=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot=collections.Counter(); opc=collections.Counter(); ops_samp=collections.Counter()
allS=0
for r in data:
    s=num(r,'Warp Stall Sampling (All Samples)'); allS+=s
    for h in reasons: tot[h]+=num(r,h)
    op=r[ix['Source']].split()
    o=op[0] if op else ''
    if o.startswith('@'): o=op[1] if len(op)>1 else o
    o=o.split('.')[0]
    opc[o]+=num(r,'Instructions Executed'); ops_samp[o]+=s
print(fn, 'samples',allS, 'instr', sum(opc.values())/1e6,'M')
for h,v in tot.most_common(12): print(f'  {h:28s} {v/allS*100:5.1f}%')
print(' opcodes (M executed, % samples):')
for o,v in opc.most_common(28): print(f'  {o:10s} {v/1e6:8.2f} {ops_samp[o]/allS*100:5.1f}%')
