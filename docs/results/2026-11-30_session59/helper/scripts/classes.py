from load import *
from collections import defaultdict
T=4194048
def cls(o,s):
    if o.startswith('HGMMA'): return 'tensor: HGMMA'
    if o=='MUFU.EX2': return 'XU: MUFU.EX2'
    if o.startswith('F2FP'): return 'convert: F2FP pack'
    if o=='FMNMX': return 'fp32: FMNMX (row max)'
    if o=='FFMA': return 'fp32: FFMA (scale-max)'
    if o=='FADD': return 'fp32: FADD (row sum)'
    if o=='FMUL': return 'fp32: FMUL (O rescale etc)'
    if o in ('FSEL','FSETP.GT.AND','FSETP.NEU.AND','FSETP.GT.OR'): return 'fp32: FSEL/FSETP'
    if o=='SHFL.BFLY': return 'shuffle'
    if o.startswith('U') and o not in ('UTMALDG.4D',): return 'uniform datapath (U*)'
    if o in ('SYNCS.PHASECHK.TRANS64.TRYWAIT','SYNCS.ARRIVE.TRANS64.A1T0','BAR.SYNC.DEFER_BLOCKING','BAR.ARV','WARPGROUP.DEPBAR.LE','WARPGROUP.ARRIVE'): return 'sync: mbarrier/bar/wgmma'
    if o in ('BRA','VOTE.ANY','VOTEU.ALL','WARPSYNC.ALL','NANOSLEEP'): return 'branch/vote'
    return 'int/move/other (IMAD,ISETP,SEL,LOP3,NOP,...)'
cfg={'flash':('fl_f64',[(912,3561)],6731851),'FA4':('fa4_f64',[(708,1125)],6495009)}
res={}
for k,(name,rngs,cyc) in cfg.items():
    h,r=load(name); cyc_tile=cyc/(T/12/132)
    ls=sum(x['samp'] for a,b in rngs for x in r[a:b+1])
    c=defaultdict(float); sm=defaultdict(float)
    for a,b in rngs:
        for x in r[a:b+1]:
            q=cls(op(x['src']),x['src']); c[q]+=x['exec']/T; sm[q]+=x['samp']/ls*cyc_tile
    res[k]=(c,sm)
keys=sorted(set(res['flash'][0])|set(res['FA4'][0]),key=lambda q:-res['flash'][0].get(q,0))
print(f"{'class':44s} {'flash n':>8s} {'FA4 n':>8s} {'flash cyc':>10s} {'FA4 cyc':>9s}")
for q in keys:
    print(f"{q:44s} {res['flash'][0].get(q,0):8.1f} {res['FA4'][0].get(q,0):8.1f} {res['flash'][1].get(q,0):10.0f} {res['FA4'][1].get(q,0):9.0f}")
print(f"{'total':44s} {sum(res['flash'][0].values()):8.1f} {sum(res['FA4'][0].values()):8.1f} {sum(res['flash'][1].values()):10.0f} {sum(res['FA4'][1].values()):9.0f}")
