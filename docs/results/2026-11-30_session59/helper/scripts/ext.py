import sys,re
# extract a function's SASS instructions from cuobjdump output: prints one instr per line
f,pat=sys.argv[1],sys.argv[2]
out=[];on=False
for line in open(f):
    if 'Function :' in line:
        on = pat in line and 'I13__nv_bfloat16NS1_21WgmmaPersistentConfigILi64E' in line
        continue
    if on:
        m=re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*',line)
        if m: out.append(m.group(2).rstrip(' ;'))
for i,s in enumerate(out): print(i,s)
