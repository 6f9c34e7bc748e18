#!/usr/bin/env python3
"""Walks the SASS of an object file (or fat binary) kernel by kernel, without a GPU, for the
two questions the Hopper rungs keep asking of a build (sessions 27-28):

  loops OBJ [REGEX] [--vs OBJ2]
      each kernel's step loop: the shortest backward branch whose body holds at least
      --hgmma HGMMAs (20); its length, uniform-datapath instructions and HGMMAs. With --vs,
      the same loop of a second build and the opcodes whose counts moved in it (a change
      outside the loop that makes ptxas recompute something inside it shows here).
  after-dealloc OBJ [REGEX]
      the code reachable after the kernel's setmaxnreg.dec (USETMAXREG.DEALLOC: the producer
      warpgroup's producer, dQ writer and done count) and the highest register it names,
      which must be under the count the warpgroup keeps.
  serialized OBJ [REGEX]
      kernels where ptxas serialized wgmma: an HGMMA directly followed by a wait for every
      group (WARPGROUP.DEPBAR.LE gsb0, 0x0) for more than a quarter of the HGMMAs. Correct
      code, so no test sees it (session 45: a P V wait placed in both branches of the capped
      kernels' frozen / not-frozen choice did this to every wgmma of theirs, -8.6%); exits 1
      when it finds one.

Needs cuobjdump on PATH (benchmarks/sass_diff.py's docstring says where to get it)."""
import argparse
import collections
import re
import shutil
import subprocess
import sys


def functions(path, pattern):
    """(mangled name, [(address, instruction)]) of each kernel whose name matches."""
    text = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    for chunk in re.split(r"\n\s*Function : ", text)[1:]:
        name = chunk.split("\n", 1)[0].strip()
        if not re.search(pattern, name):
            continue
        code = []
        for line in chunk.split("\n"):
            m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*(/\*.*)?$", line)
            if m:
                code.append((int(m.group(1), 16), m.group(2).rstrip(" ;")))
        yield re.sub(r"GLOBAL__N__[0-9a-f]+_", "GLOBAL__N_", name), code


def unpredicated(instruction):
    return re.sub(r"^@!?U?P\w+\s+", "", instruction)


def opcode(instruction):
    return unpredicated(instruction).split(" ")[0].split(".")[0]


def branch_target(instruction):
    m = re.search(r"\bBRA(?:\.\S+)?\s+(?:\S+,\s*)?0x([0-9a-f]+)", unpredicated(instruction))
    return int(m.group(1), 16) if m else None


def step_loop(code, min_hgmma):
    """The shortest body [target .. backward branch] holding min_hgmma HGMMAs, or None."""
    where = {a: i for i, (a, _) in enumerate(code)}
    best = None
    for i, (a, t) in enumerate(code):
        target = branch_target(t)
        if target is not None and target < a and target in where:
            body = [x for _, x in code[where[target]:i + 1]]
            if sum("HGMMA" in x for x in body) >= min_hgmma and (best is None or len(body) < len(best)):
                best = body
    return best


def after_dealloc(code):
    """Instructions reachable from the one after the first USETMAXREG.DEALLOC."""
    starts = [i for i, (_, t) in enumerate(code) if "USETMAXREG.DEALLOC" in t]
    if not starts:
        return None
    where = {a: i for i, (a, _) in enumerate(code)}
    seen, todo = set(), [starts[0] + 1]
    while todo:
        i = todo.pop()
        if i in seen or i >= len(code):
            continue
        seen.add(i)
        t = code[i][1]
        target = branch_target(t)
        if target in where:
            todo.append(where[target])
        op, predicated = unpredicated(t), unpredicated(t) != t
        if not predicated and (op.startswith(("EXIT", "RET")) or re.match(r"BRA\b", op)):
            continue
        todo.append(i + 1)
    return [code[i][1] for i in sorted(seen)]


def serialized(code):
    """(HGMMAs directly followed by a wait for every group, HGMMAs)."""
    ins = [t for _, t in code]
    hgmma = sum("HGMMA" in t for t in ins)
    waited = sum("HGMMA" in a and "WARPGROUP.DEPBAR.LE gsb0, 0x0" in b for a, b in zip(ins, ins[1:]))
    return waited, hgmma


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["loops", "after-dealloc", "serialized"])
    parser.add_argument("obj")
    parser.add_argument("regex", nargs="?", default=".")
    parser.add_argument("--vs", help="loops: a second build's object to compare each loop with")
    parser.add_argument("--hgmma", type=int, default=20, help="loops: HGMMAs a step loop holds at least")
    args = parser.parse_args()
    if shutil.which("cuobjdump") is None:
        sys.exit("sass_walk.py: cuobjdump not on PATH (see benchmarks/sass_diff.py's docstring)")
    if args.what == "serialized":
        found = 0
        for name, code in functions(args.obj, args.regex):
            waited, hgmma = serialized(code)
            if hgmma and 4 * waited > hgmma:
                found += 1
                print(f"{name[-90:]}: {waited} of {hgmma} HGMMAs followed by a wait for every group")
        print(f"{found} kernels with serialized wgmma")
        sys.exit(1 if found else 0)
    if args.what == "after-dealloc":
        for name, code in functions(args.obj, args.regex):
            reach = after_dealloc(code)
            if reach is None:
                continue
            regs = [int(r) for t in reach for r in re.findall(r"\bR(\d+)\b", t)]
            print(f"{name[-90:]}: {len(reach)} instructions after setmaxnreg.dec, highest R{max(regs, default=-1)}")
        return
    other = dict(functions(args.vs, args.regex)) if args.vs else {}
    for name, code in functions(args.obj, args.regex):
        loop = step_loop(code, args.hgmma)
        if loop is None:
            continue
        count = collections.Counter(opcode(t) for t in loop)
        uniform = sum(v for k, v in count.items() if k.startswith("U"))
        line = f"{name[-90:]}: loop {len(loop)} instructions, uniform {uniform}, HGMMA {count['HGMMA']}"
        if name in other:
            loop2 = step_loop(other[name], args.hgmma) or []
            count2 = collections.Counter(opcode(t) for t in loop2)
            moved = sorted((k for k in set(count) | set(count2) if count[k] != count2[k]), key=lambda k: -abs(count2[k] - count[k]))
            line += f" -> {len(loop2)}" + "".join(f", {k} {count2[k] - count[k]:+d}" for k in moved[:8])
        print(line)


if __name__ == "__main__":
    main()
