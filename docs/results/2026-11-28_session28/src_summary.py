# Summarizes ncu's source page (--section SourceCounters --page source --print-source sass --csv):
# the instructions with excess shared-memory wavefronts, and the most-sampled stall lines.
import csv, io, lzma, sys
for path in sys.argv[1:]:
    text = lzma.open(path, "rt").read()
    lines = text[text.index('"Address"'):]
    rows = list(csv.DictReader(io.StringIO(lines)))
    num = lambda r, k: float((r.get(k) or "0").replace(",", "") or 0) if (r.get(k) or "0").replace(",", "").replace(".", "").isdigit() else 0.0
    tot_ex = sum(num(r, "L1 Wavefronts Shared Excessive") for r in rows)
    tot_w = sum(num(r, "L1 Wavefronts Shared") for r in rows)
    tot_s = sum(num(r, "Warp Stall Sampling (All Samples)") for r in rows)
    print(f"== {path}: {len(rows)} SASS lines; shared wavefronts {tot_w:.3g}, excessive {tot_ex:.3g}; stall samples {tot_s:.0f}")
    print("-- excessive shared wavefronts (top 20)")
    for i, r in sorted(enumerate(rows), key=lambda x: -num(x[1], "L1 Wavefronts Shared Excessive"))[:20]:
        ex = num(r, "L1 Wavefronts Shared Excessive")
        if ex == 0: break
        print(f"  #{i:5d} {r['Source'].strip()[:60]:60s} exec {num(r,'Instructions Executed'):11.0f} wf {num(r,'L1 Wavefronts Shared'):11.0f} excess {ex:11.0f} ideal {num(r,'L1 Wavefronts Shared Ideal'):11.0f}")
    print("-- stall samples (top 25)")
    for i, r in sorted(enumerate(rows), key=lambda x: -num(x[1], "Warp Stall Sampling (All Samples)"))[:25]:
        print(f"  #{i:5d} {r['Source'].strip()[:70]:70s} samples {num(r,'Warp Stall Sampling (All Samples)'):7.0f} ({100*num(r,'Warp Stall Sampling (All Samples)')/tot_s:4.1f}%)")
