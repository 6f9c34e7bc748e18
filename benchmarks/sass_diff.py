#!/usr/bin/env python3
"""Compares the SASS of two builds' object files (or fat binaries) kernel by
kernel, without a GPU: identical or not, instruction counts, the highest
register, local-memory traffic (LDL/STL) and the opcodes whose counts moved.
    python3 benchmarks/sass_diff.py OLD.o NEW.o [--only REGEX]
e.g. the bwd_03 object of two build trees:
    python3 benchmarks/sass_diff.py /tmp/bA/src/CMakeFiles/flash.dir/__/kernels/bwd_03_wgmma.cu.o \\
        build/src/CMakeFiles/flash.dir/__/kernels/bwd_03_wgmma.cu.o
Needs cuobjdump, which this project's CPU machines lack in their CUDA
toolkit; PyPI has it: pip download --no-deps nvidia-cuda-cuobjdump, unzip the
wheel, and put its nvidia/cu13/bin on PATH (docs/NOTES.md, session 23).
Addresses, encodings, branch targets and the anonymous namespace's per-build
hash are left out of the comparison; immediates and offsets are compared."""
import argparse
import collections
import re
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("old")
parser.add_argument("new")
parser.add_argument("--only", default="", help="kernels whose mangled name matches this regex")
args = parser.parse_args()
if shutil.which("cuobjdump") is None:
    sys.exit("sass_diff.py: cuobjdump not on PATH (see this script's docstring)")


def opcode(i):
    return re.sub(r"^@!?U?P\w+\s+", "", i).split(" ")[0].split(".")[0]


def kernels(path):
    text = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    out = {}
    for chunk in re.split(r"\n\s*Function : ", text)[1:]:
        name = re.sub(r"GLOBAL__N__[0-9a-f]+_", "GLOBAL__N_", chunk.split("\n")[0].strip())
        if not re.search(args.only, name):
            continue
        ins = []
        for line in chunk.split("\n"):
            m = re.match(r"\s+/\*[0-9a-f]+\*/\s*(.*?)\s*;", line)
            if m:
                i = m.group(1)
                if opcode(i) in ("BRA", "BSSY", "CALL", "JMP", "JMX", "BRX", "BREAK", "RET"):
                    i = re.sub(r"0x[0-9a-f]+", "#", i)  # a branch target moves with any code before it
                ins.append(i)
        out[name] = ins
    return out


old, new = kernels(args.old), kernels(args.new)
same = 0
for name in sorted(set(old) | set(new)):
    if name not in old or name not in new:
        print(f"{'only in new' if name in new else 'only in old'}: {name}")
        continue
    a, b = old[name], new[name]
    if a == b:
        same += 1
        continue
    ca, cb = collections.Counter(map(opcode, a)), collections.Counter(map(opcode, b))
    reg = lambda ins: max((int(r) for i in ins for r in re.findall(r"\bR(\d+)\b", i)), default=0)
    moved = sorted(((k, cb[k] - ca[k]) for k in set(ca) | set(cb) if cb[k] != ca[k]), key=lambda x: -abs(x[1]))
    print(f"{name}\n  instructions {len(a)} -> {len(b)}, highest register R{reg(a)} -> R{reg(b)}, "
          f"LDL {ca['LDL']} -> {cb['LDL']}, STL {ca['STL']} -> {cb['STL']}; "
          + ", ".join(f"{k} {d:+d}" for k, d in moved[:8]))
print(f"{same} of {len(set(old) & set(new))} common kernels SASS-identical")
