#!/usr/bin/env python3
"""Summarises diag_edges.patch's EDGE lines (one call's CTAs): per CTA the phases (us) entry -> K/V
landed, -> dK/dV stored (consumer 0), -> writer done (its last reductions completed), -> exit;
per SM the gap from one CTA's exit to the next CTA's entry. Means and medians.
    python3 edges_summary.py edges_2048.txt edges_8192.txt ..."""
import statistics as st
import sys

for path in sys.argv[1:]:
    rows = []
    for line in open(path):
        f = line.split()
        if f and f[0] == "EDGE":
            d = dict(zip(f[2::2], map(int, f[3::2])))
            d["id"] = int(f[1])
            rows.append(d)
    if not rows:
        print(path, "no rows")
        continue
    us = lambda xs: f"mean {st.mean(xs) / 1e3:7.2f} median {st.median(xs) / 1e3:7.2f}"
    print(f"== {path}: {len(rows)} CTAs on {len(set(r['sm'] for r in rows))} SMs")
    for a, b in (("entry", "kv"), ("kv", "stored"), ("stored", "wdone"), ("wdone", "exit"), ("entry", "exit")):
        print(f"   {a:>6} -> {b:<6} {us([r[b] - r[a] for r in rows])}")
    print(f"   writer done after the stores: {sum(r['wdone'] > r['stored'] for r in rows)} of {len(rows)}")
    gaps = []
    for sm in set(r["sm"] for r in rows):
        seq = sorted((r for r in rows if r["sm"] == sm), key=lambda r: r["entry"])
        gaps += [n["entry"] - p["exit"] for p, n in zip(seq, seq[1:])]
    if gaps:
        print(f"   exit -> next entry on the SM {us(gaps)} ({len(gaps)} gaps)")
    t0, t1 = min(r["entry"] for r in rows), max(r["exit"] for r in rows)
    busy = sum(r["exit"] - r["entry"] for r in rows)
    print(f"   span {(t1 - t0) / 1e3:.1f} us; CTA-time / (SMs x span) = {busy / (132 * (t1 - t0)):.3f}")
