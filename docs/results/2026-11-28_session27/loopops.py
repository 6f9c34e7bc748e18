import re, subprocess, sys, collections
def loop(obj, pat):
    txt = subprocess.run(['/opt/cudatools/cuobjdump', '-sass', obj], capture_output=True, text=True).stdout
    for f in re.split(r'\n\s+Function : ', txt)[1:]:
        name = f.split('\n', 1)[0].strip()
        if not re.search(pat, name): continue
        ins = []
        for l in f.split('\n'):
            m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*(/\*.*)?$', l)
            if m: ins.append((int(m.group(1), 16), m.group(2).rstrip(' ;')))
        idx = {a: i for i, (a, _) in enumerate(ins)}; best = None
        for i, (a, t) in enumerate(ins):
            m = re.search(r'BRA\s+(?:\S+,\s*)?0x([0-9a-f]+)', t)
            if m:
                tgt = int(m.group(1), 16)
                if tgt < a and tgt in idx:
                    body = ins[idx[tgt]:i + 1]
                    if sum('HGMMA' in x for _, x in body) >= 20 and (best is None or len(body) < len(best)): best = body
        return collections.Counter(re.sub(r'^@!?U?P\w+\s+', '', x).split()[0] for _, x in best)
a, b = loop(sys.argv[1], sys.argv[3]), loop(sys.argv[2], sys.argv[3])
for k in sorted(set(a) | set(b), key=lambda k: -abs(a[k] - b[k])):
    if a[k] != b[k]: print(f"{k:28s} {a[k]:4d} -> {b[k]:4d}")
