#!/usr/bin/env python3
"""The forward against FlashAttention-4 and cuDNN: TFLOPS against sequence length, one panel per
(head dim, mask), from fa4_fwd_matched.py's JSON (one or more files, rows merged).

  python3 benchmarks/plot_fwd_matched.py docs/results/2026-11-30_session58/call8/fwd_matched.json \\
      docs/results/2026-11-30_session58/call9/fwd_matched.json -o docs/results/2026-11-30_h200_forward_fa4.png

Series: flash over 0.5 s back to back ("flash"), flash with `--flush always` ("flash, flushed":
timed as do_bench times FA4), FA4 over 0.5 s ("fa4_matched") and cuDNN in 40 ms bursts
("cudnn_short", SDPA). Prints flash / FA4 per cell; the PNG needs matplotlib.
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    rows = [r for path in a.json for r in json.load(open(path))]
    panels = sorted({(r["dhead"], r["causal"]) for r in rows})
    for d, causal in panels:
        cells = sorted((r for r in rows if (r["dhead"], r["causal"]) == (d, causal)), key=lambda r: r["seq"])
        print(f"d{d} {'causal' if causal else 'full'}: " +
              " ".join(f"{r['seq']}:{r['flash'] / r['fa4_matched']:.2f}" for r in cells if r["fa4_matched"]))
    if not a.out:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, (len(panels) + 1) // 2, figsize=(13, 7), squeeze=False)
    series = (("flash", "flash"), ("flash_flush", "flash, flushed"), ("fa4_matched", "FA4"), ("cudnn_short", "cuDNN"))
    for ax, (d, causal) in zip(axes.T.flat, panels):
        cells = sorted((r for r in rows if (r["dhead"], r["causal"]) == (d, causal)), key=lambda r: r["seq"])
        seqs = [r["seq"] for r in cells]
        for key, label in series:
            ax.plot(seqs, [r[key] for r in cells], marker="o", label=label, linestyle="--" if key == "flash_flush" else "-")
        ax.set_xscale("log", base=2)
        ax.set_xticks(seqs, [f"{s // 1024}k" if s >= 1024 else str(s) for s in seqs])
        ax.set_title(f"hdim {d}, {'causal' if causal else 'full'}", fontsize=10)
        ax.set_ylabel("TFLOPS")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("Forward, bf16, H200, 16k tokens: flash against FlashAttention-4 (sm90) and cuDNN")
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)


if __name__ == "__main__":
    main()
