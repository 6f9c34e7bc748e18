# Compares ncu source pages (--section SourceCounters --page source --print-source sass --csv, xz):
# per opcode, the warp instructions executed and the stall samples of each file, side by side; and
# writes each file's SASS listing with those two columns (FILE.lst) for reading.
import collections, csv, io, lzma, re, sys

def load(path):
    text = lzma.open(path, "rt").read()
    rows = list(csv.DictReader(io.StringIO(text[text.index('"Address"'):])))
    def num(r, k):
        v = (r.get(k) or "0").replace(",", "")
        try: return float(v)
        except ValueError: return 0.0
    out = []
    for r in rows:
        src = r["Source"].strip()
        op = re.sub(r"^@!?U?P\w+\s+", "", src).split(" ")[0]
        out.append((src, op, num(r, "Instructions Executed"), num(r, "Warp Stall Sampling (All Samples)")))
    return out

files = sys.argv[1:]
data = [load(p) for p in files]
for p, d in zip(files, data):
    with open(p.replace(".csv.xz", "") + ".lst", "w") as f:
        for i, (src, op, ex, st) in enumerate(d):
            f.write(f"{i:5d} {ex:12.0f} {st:8.0f}  {src}\n")
agg = []
for d in data:
    a = collections.defaultdict(lambda: [0.0, 0.0])
    for src, op, ex, st in d:
        a[op][0] += ex; a[op][1] += st
    agg.append(a)
tot = [sum(v[0] for v in a.values()) for a in agg]
sam = [sum(v[1] for v in a.values()) for a in agg]
print("files:", *files)
print("total instructions:", *[f"{t:.4g}" for t in tot], " stall samples:", *[f"{s:.0f}" for s in sam])
ops = sorted(set().union(*agg), key=lambda o: -max(a[o][0] for a in agg))
print(f"{'opcode':28s}" + "".join(f"{'exec':>12s}{'samp%':>7s}" for _ in files))
for o in ops[:60]:
    print(f"{o[:28]:28s}" + "".join(f"{a[o][0]:12.4g}{100 * a[o][1] / s:7.1f}" for a, s in zip(agg, sam)))
