#!/usr/bin/env python3
"""TFLOPS against sequence length for every variant beside PyTorch SDPA.

  python3 benchmarks/plot.py docs/results/2026-11-21_h200_bench.json \\
      docs/results/2026-11-21_h200_sdpa.json -o docs/results/2026-11-21_h200_forward.png

The first file is ./bench's Google Benchmark JSON (merged by
benchmarks/h200_check.sh), the second benchmarks/sdpa_bench.py's. Prints the
progression table (TFLOPS at seq 4096 and the harmonic mean over all
sequence lengths, and both as a share of SDPA's flash and cuDNN backends).
Needs matplotlib (pip install matplotlib) for the PNG only.
"""
import argparse
import json
import re
import statistics

NAME = re.compile(r"fwd/(\w+)/b\d+_hq\d+_hkv\d+_sq(\d+)_sk\d+_d(\d+)_(\w+?)(_causal)?(/|$)")


def load(bench_path, sdpa_path):
    rows = {}
    for b in json.load(open(bench_path))["benchmarks"]:
        m = NAME.match(b["name"])
        if m and "TFLOPS" in b:
            rows[(m.group(1), int(m.group(2)), int(m.group(3)), bool(m.group(5)))] = b["TFLOPS"]
    for s in json.load(open(sdpa_path)):
        rows[("sdpa_" + s["backend"], s["seq"], s["dhead"], s["causal"])] = s["tflops"]
    return rows


def series(rows, name, dhead, causal):
    pts = sorted((seq, v) for (n, seq, d, c), v in rows.items() if n == name and d == dhead and c == causal)
    return [p[0] for p in pts], [p[1] for p in pts]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("sdpa")
    ap.add_argument("-o", "--out", help="PNG to write")
    ap.add_argument("--table-seq", type=int, default=4096)
    args = ap.parse_args()
    rows = load(args.bench, args.sdpa)
    names = sorted({k[0] for k in rows if not k[0].startswith("sdpa_")},
                   key=lambda n: min(i for i, k in enumerate(rows) if k[0] == n))
    dheads = sorted({k[2] for k in rows})

    for dhead in dheads:
        for causal in (False, True):
            ref = {b: series(rows, "sdpa_" + b, dhead, causal) for b in ("flash", "cudnn")}
            if not ref["flash"][0]:
                continue
            print(f"\nhdim {dhead}, {'causal' if causal else 'non-causal'}: TFLOPS at seq {args.table_seq}; "
                  f"harmonic mean over seq {ref['flash'][0][0]}-{ref['flash'][0][-1]}")
            print(f"| variant | seq {args.table_seq} | % flash | % cuDNN | harmonic mean | % flash | % cuDNN |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            ref_at = {b: dict(zip(*ref[b])).get(args.table_seq) for b in ref}
            ref_hm = {b: statistics.harmonic_mean(ref[b][1]) for b in ref}
            for name in names + ["sdpa_flash", "sdpa_cudnn"]:
                seqs, vals = series(rows, name, dhead, causal)
                if len(vals) != len(ref["flash"][1]):
                    continue
                at = dict(zip(seqs, vals)).get(args.table_seq)
                hm = statistics.harmonic_mean(vals)
                label = name.replace("sdpa_", "PyTorch SDPA ") if name.startswith("sdpa_") else f"`{name}`"
                print(f"| {label} | {at:.1f} | {100 * at / ref_at['flash']:.0f}% | {100 * at / ref_at['cudnn']:.0f}% "
                      f"| {hm:.1f} | {100 * hm / ref_hm['flash']:.0f}% | {100 * hm / ref_hm['cudnn']:.0f}% |")

    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(len(dheads), 2, figsize=(12, 4 * len(dheads)), squeeze=False)
        palette = plt.get_cmap("tab10").colors
        color = {n: palette[i % len(palette)] for i, n in enumerate(names + ["sdpa_flash", "sdpa_cudnn"])}
        for i, dhead in enumerate(dheads):
            for j, causal in enumerate((False, True)):
                ax = axes[i][j]
                for name in names + ["sdpa_flash", "sdpa_cudnn"]:
                    seqs, vals = series(rows, name, dhead, causal)
                    if seqs:
                        style = "--" if name.startswith("sdpa_") else "-"
                        ax.plot(seqs, vals, style, marker="o", color=color[name], label=name.replace("sdpa_", "SDPA "))
                ax.set_xscale("log", base=2)
                ax.set_title(f"hdim {dhead}, {'causal' if causal else 'non-causal'}, bf16, 16k tokens")
                ax.set_xlabel("sequence length")
                ax.set_ylabel("TFLOPS")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=7)
        fig.suptitle("flash forward on the H200 beside PyTorch SDPA (same device call)")
        fig.tight_layout()
        fig.savefig(args.out, dpi=110)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
