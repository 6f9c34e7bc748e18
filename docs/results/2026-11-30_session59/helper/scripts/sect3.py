from load import *
from collections import defaultdict
T=4194048
def run(name,copies,cyc):
    h,r=load(name)
    cyc_tile=cyc/(T/12/132)
    S=defaultdict(float); N=defaultdict(float); R=defaultdict(lambda: defaultdict(float)); allsamp=0
    order=['top','gemm-issue','S-wait','softmax','tail']
    for (a,b) in copies:
        seg=r[a:b+1]
        lastm=max(j for j,x in enumerate(seg) if op(x['src'])=='MUFU.EX2')
        sec='top'
        for j,x in enumerate(seg):
            o=op(x['src'])
            if sec=='top' and o.startswith('HGMMA'): sec='gemm-issue'
            if o=='WARPGROUP.DEPBAR.LE' and '0x1' in x['src']: sec='S-wait'
            elif sec=='S-wait': sec='softmax'
            if j>lastm: sec='tail'
            S[sec]+=x['samp']; N[sec]+=x['exec']/T; allsamp+=x['samp']
            for k,v in x['stalls'].items(): R[sec][k]+=v
    print(f"== {name}: period {cyc_tile:.0f} cycles/tile")
    for k in order:
        print(f"  {k:11s} instr/tile={N[k]:6.1f} ~{S[k]/allsamp*cyc_tile:5.0f} warp-cycles  {top(R[k],5)}")
run('fl_f64',[(912,1577),(1578,2241),(2242,2905),(2906,3561)],6731851)
run('fa4_f64',[(708,1125)],6495009)
