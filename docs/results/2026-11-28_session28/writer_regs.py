# The highest register named by code reachable after each kernel's setmaxnreg.dec (USETMAXREG.DEALLOC):
# the producer warpgroup's code (producer, dQ writer, done count) must fit the registers it keeps.
# Usage: python3 writer_regs.py OBJ [function regex]; needs /opt/cudatools/cuobjdump.
import re, subprocess, sys
obj, pat = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else '.')
txt = subprocess.run(['/opt/cudatools/cuobjdump', '-sass', obj], capture_output=True, text=True).stdout
for f in re.split(r'\n\s+Function : ', txt)[1:]:
    name = f.split('\n', 1)[0].strip()
    if not re.search(pat, name): continue
    ins = []
    for l in f.split('\n'):
        m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*(/\*.*)?$', l)
        if m: ins.append((int(m.group(1), 16), m.group(2).rstrip(' ;')))
    idx = {a: i for i, (a, _) in enumerate(ins)}
    starts = [i for i, (_, t) in enumerate(ins) if 'USETMAXREG.DEALLOC' in t]
    if not starts: continue
    seen, todo = set(), [starts[0] + 1]
    while todo:
        i = todo.pop()
        if i in seen or i >= len(ins): continue
        seen.add(i)
        t = ins[i][1]
        op = re.sub(r'^@!?U?P[T0-9]+\s+', '', t)
        pred = op != t
        m = re.search(r'\bBRA(?:\.\S+)?\s+(?:\S+,\s*)?0x([0-9a-f]+)', op)
        if m and int(m.group(1), 16) in idx: todo.append(idx[int(m.group(1), 16)])
        if (op.startswith('EXIT') or op.startswith('RET') or (op.startswith('BRA') and not pred)) and not pred: continue
        todo.append(i + 1)
    regs = [int(r) for i in seen for r in re.findall(r'\bR(\d+)\b', ins[i][1])]
    keep = re.search(r'USETMAXREG.DEALLOC.*?(0x[0-9a-f]+|\d+)\s*$', ins[starts[0]][1])
    print(f"{name[-70:]}: after setmaxnreg.dec {len(seen)} instructions, highest R{max(regs) if regs else -1}, kept {keep.group(1) if keep else '?'}")
