import re, subprocess, sys, collections
obj, pat = sys.argv[1:3]
txt = subprocess.run(['/opt/cudatools/cuobjdump', '-sass', obj], capture_output=True, text=True).stdout
for f in re.split(r'\n\s+Function : ', txt)[1:]:
    name = f.split('\n', 1)[0].strip()
    if not re.search(pat, name): continue
    ins = []
    for l in f.split('\n'):
        m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*(/\*.*)?$', l)
        if m: ins.append((int(m.group(1), 16), m.group(2).rstrip(' ;')))
    idx = {a: i for i, (a, _) in enumerate(ins)}
    best = None
    for i, (a, t) in enumerate(ins):
        m = re.search(r'BRA\s+(?:\S+,\s*)?0x([0-9a-f]+)', t)
        if m:
            tgt = int(m.group(1), 16)
            if tgt < a and tgt in idx:
                body = ins[idx[tgt]:i + 1]
                h = sum('HGMMA' in x for _, x in body)
                if h >= 20 and (best is None or len(body) < len(best[2])): best = (tgt, a, body)
    if best:
        body = best[2]
        c = collections.Counter(x.split()[0].lstrip('@!UP0123456789T ') if x.startswith('@') else x.split()[0] for _, x in body)
        u = sum(v for k, v in c.items() if k.startswith('U'))
        print(f"{name[-60:]}: loop {len(body)} instr, uniform {u}, HGMMA {sum('HGMMA' in x for _, x in body)}")
    break
