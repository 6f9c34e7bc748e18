import sys
from load import op
M={'MUFU.EX2':'E','F2FP.BF16.F32.PACK_AB':'P','FMNMX':'x','FADD':'+','FFMA':'f','FMUL':'*','WARPGROUP.DEPBAR.LE':'|D|','BRA':'|B|',
   'HGMMA.64x128x16.F32.BF16':'S','HGMMA.64x64x16.F32.BF16':'V','VOTE.ANY':'|vote|','VOTEU.ALL':'u','SHFL.BFLY':'~','NANOSLEEP':'|sleep|','BAR.SYNC.DEFER_BLOCKING':'|bar|','BAR.ARV':'|arv|','SYNCS.PHASECHK.TRANS64.TRYWAIT':'|try|','SYNCS.ARRIVE.TRANS64.A1T0':'r','WARPSYNC.ALL':'w'}
def rle(ops):
    out=[];prev=None;n=0
    for o in ops:
        c=M.get(o,'.')
        if c==prev and len(c)==1: n+=1
        else:
            if prev: out.append(prev+(str(n) if n>1 else ''))
            prev=c;n=1
    out.append(prev+(str(n) if n>1 else ''))
    return ' '.join(out)
def read(f):
    L=[]
    for line in open(f):
        parts=line.rstrip('\n').split(' ',1); L.append(parts[1])
    return L
if __name__=='__main__':
    f=sys.argv[1]; a=int(sys.argv[2]); b=int(sys.argv[3])
    L=read(f)
    print(rle([op(s) for s in L[a:b]]))
