from load import *
import sys
name,a,b,out=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),sys.argv[4]
h,r=load(name)
tot=sum(x['samp'] for x in r)
with open(out,'w') as f:
    f.write(f"# {name}: rows {a}..{b}; cols: idx exec samples(all) %of_kernel top-stalls | SASS\n")
    for x in r[a:b+1]:
        f.write(f"{x['i']:5d} {int(x['exec']):9d} {int(x['samp']):6d} {100*x['samp']/tot:5.2f}% {top(x['stalls']):45s} | {x['src']}\n")
