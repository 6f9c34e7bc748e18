import csv, lzma, re
def load(name):
    f = lzma.open(f'/tmp/c7/r/{name}.csv.xz','rt')
    kname = f.readline()
    r = csv.reader(f)
    hdr = next(r)
    rows=[]
    for i,row in enumerate(r):
        d=dict(zip(hdr,row))
        def num(k):
            v=d.get(k,'0').replace(',','')
            try: return float(v)
            except: return 0.0
        e={'i':i,'addr':int(d['Address'],16),'src':d['Source'].strip(),
           'samp':num('Warp Stall Sampling (All Samples)'),'nis':num('Warp Stall Sampling (Not-issued Samples)'),
           'exec':num('Instructions Executed'),'thr':num('Thread Instructions Executed')}
        st={k:num(k) for k in hdr if k.startswith('stall_') and 'Not Issued' not in k}
        e['stalls']=st
        rows.append(e)
    return hdr,rows
def op(src):
    s=re.sub(r'^@!?U?P\w+\s+','',src)
    return s.split()[0] if s else ''
def top(st,n=3):
    t=sorted(st.items(),key=lambda x:-x[1])[:n]
    return ' '.join(f"{k[6:]}={int(v)}" for k,v in t if v>0)
