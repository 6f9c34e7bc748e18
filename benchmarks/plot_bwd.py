#!/usr/bin/env python3
"""The backward against FlashAttention-4 and cuDNN: one bar group per (head dim, mask, seq).

  python3 benchmarks/plot_bwd.py docs/results/2026-11-24_h200_session11/flash_bwd.txt \\
      docs/results/2026-11-24_h200_session11/fa4_bwd.json -o docs/results/2026-11-24_h200_bwd.png
  python3 benchmarks/plot_bwd.py --matched docs/results/2026-11-30_session58/call5/bwd_matched.json \\
      -o docs/results/2026-11-30_h200_bwd.png

--matched reads fa4_bwd_matched.py's JSON instead, where every peer is timed over 0.5 s as flash
is (flash and flash_det from ./bench --bwd --kernel auto; fa4_matched, fa4_det_matched and
cudnn_matched by do_bench, warm-up 100 ms, 500 ms).

The first file is ./bench --bwd's console output (lines "bwd/<variant>/..."; the
fastest non-deterministic and deterministic variant of each cell are taken),
the second fa4_bench.py --parts bwd's JSON (FA4, FA4 deterministic, SDPA cuDNN).
Prints the table of the README's backward section; the PNG needs matplotlib.
"""
import argparse
import json
import re

NAME = re.compile(r"bwd/([\w-]+)/b\d+_hq\d+_hkv\d+_sq(\d+)_sk\d+_d(\d+)_bf16(_causal)?/.*TFLOPS=([\d.]+)")


def load_flash(path):
    best = {}
    for line in open(path):
        m = NAME.match(line)
        if not m:
            continue
        variant, seq, d, causal, tf = m.group(1), int(m.group(2)), int(m.group(3)), bool(m.group(4)), float(m.group(5))
        key = (d, causal, seq, variant.endswith("-det"))
        if tf > best.get(key, (0.0, ""))[0]:
            best[key] = (tf, variant.removesuffix("-det"))
    return best


def matched_rows(path):
    """fa4_bwd_matched.py's rows as (flash table, rows in fa4_bench.py's form)."""
    flash, rows = {}, []
    for r in json.load(open(path)):
        key = (r["dhead"], r["causal"], r["seq"])
        flash[(*key, False)] = (r["flash"], "auto")
        flash[(*key, True)] = (r["flash_det"] or 0.0, "auto")
        rows.append({"dhead": r["dhead"], "causal": r["causal"], "seq": r["seq"], "fa4": r["fa4_matched"],
                     "fa4_det": r["fa4_det_matched"], "cudnn": r["cudnn_matched"]})
    return flash, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("flash", nargs="?")
    ap.add_argument("fa4", nargs="?")
    ap.add_argument("--matched", help="fa4_bwd_matched.py's JSON (in place of the two files)")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    if a.matched:
        flash, rows = matched_rows(a.matched)
    else:
        if not (a.flash and a.fa4):
            ap.error("give ./bench's output and fa4_bench.py's JSON, or --matched")
        flash = load_flash(a.flash)
        rows = json.load(open(a.fa4))["rows"]
    cells, series = [], {"flash": [], "flash det": [], "FA4": [], "FA4 det": [], "cuDNN": []}
    print("| hdim | mask | seq | flash | flash det | FA4 | FA4 det | cuDNN | flash / FA4 | flash / cuDNN | det / non-det |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["dhead"], r["causal"], r["seq"])):
        key = (r["dhead"], r["causal"], r["seq"])
        if (*key, False) not in flash:
            continue
        (f, variant), (fd, _) = flash[(*key, False)], flash.get((*key, True), (0.0, ""))
        mask = "causal" if r["causal"] else "full"
        cells.append(f"d{r['dhead']} {mask}\n{r['seq'] // 1024}k")
        for name, v in (("flash", f), ("flash det", fd), ("FA4", r["fa4"]), ("FA4 det", r["fa4_det"]),
                        ("cuDNN", r["cudnn"])):
            series[name].append(v)
        print(f"| {r['dhead']} | {mask} | {r['seq'] // 1024}k | {f:.1f} (`{variant}`) | {fd:.1f} | {r['fa4']} | "
              f"{r['fa4_det']} | {r['cudnn']} | {f / r['fa4']:.3f} | {(f / r['cudnn']) if r['cudnn'] else float('nan'):.2f} | {fd / f:.3f} |")
    if not a.out:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(13, 4.5))
    width = 0.16
    for i, (name, values) in enumerate(series.items()):
        ax.bar([c + (i - 2) * width for c in range(len(cells))], values, width, label=name)
    ax.set_xticks(range(len(cells)), cells, fontsize=8)
    ax.set_ylabel("TFLOPS (2.5x forward FLOPs)")
    ax.set_title("Backward, bf16, H200: flash against FlashAttention-4 (sm90) and cuDNN, one device call")
    ax.legend(ncol=5, fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
