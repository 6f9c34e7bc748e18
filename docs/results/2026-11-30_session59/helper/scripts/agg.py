from load import *
from collections import defaultdict
import sys
T=4194048
cfg={'fl_f64':(912,3577),'fa4_f64':(708,1125)}
for name,(a,b) in cfg.items():
    h,r=load(name)
    tot=sum(x['samp'] for x in r)
    loop=r[a:b+1]
    cnt=defaultdict(float); smp=defaultdict(float); st=defaultdict(lambda: defaultdict(float))
    for x in loop:
        o=op(x['src'])
        cnt[o]+=x['exec']/T; smp[o]+=x['samp']
        for k,v in x['stalls'].items(): st[o][k]+=v
    ls=sum(x['samp'] for x in loop)
    print(f"== {name} loop rows {a}-{b}: loop samples {ls:.0f} = {100*ls/tot:.1f}% of kernel; instr/tile/warp={sum(cnt.values()):.1f}")
    for o in sorted(cnt,key=lambda o:-cnt[o]):
        if cnt[o]<0.05: continue
        print(f"  {o:34s} {cnt[o]:7.2f}  samp={smp[o]:7.0f} ({100*smp[o]/tot:4.1f}%)  {top(st[o],4)}")
