"""Train one small decoder twice from the same initialization: attention
through flash_attn_func (forward and the library's backward) and through
PyTorch's scaled_dot_product_attention. The loss curves should agree within
noise (bf16 autocast rounds differently in the two attentions, nothing more).

The task is copying: a random string of tokens, a separator, and the same
string again; the loss is taken on the copy, which a 2-layer model learns by
induction (a head that looks back for the previous occurrence of the current
token and one that copies the token after it).

    python3 examples/train.py                 # 300 steps, writes train_loss.png (and .csv, .json)
    python3 examples/train.py --steps 50 --out /tmp/train

Model: 2 layers, width 256, 4 query heads and 2 KV heads (GQA) of head dim
64, RMSNorm, rotary positions, SwiGLU MLP; AdamW; fixed seed.
"""

import argparse
import csv
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_ladder import flash_attn_func
except ImportError:  # not installed: this checkout's package (FLASH_LADDER_LIBRARY names the library)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from flash_ladder import flash_attn_func


class Attention(nn.Module):
    def __init__(self, dim, heads, heads_kv, backend):
        super().__init__()
        self.heads, self.heads_kv, self.head_dim = heads, heads_kv, dim // heads
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * heads_kv * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False)
        self.backend = backend

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = rotate(self.wq(x).view(b, s, self.heads, self.head_dim), cos, sin)
        k, v = self.wkv(x).view(b, s, 2, self.heads_kv, self.head_dim).unbind(2)
        k = rotate(k, cos, sin)
        if self.backend == "flash":  # (batch, seqlen, heads, head_dim), GQA as is
            o = flash_attn_func(q, k, v, causal=True)
        else:  # SDPA wants (batch, heads, seqlen, head_dim)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True, enable_gqa=True).transpose(1, 2)
        return self.wo(o.reshape(b, s, -1))


def rotate(x, cos, sin):
    """Rotary position embedding on (batch, seqlen, heads, head_dim), halves rotated."""
    x1, x2 = x.float().chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)


class Block(nn.Module):
    def __init__(self, dim, heads, heads_kv, backend):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.attn = Attention(dim, heads, heads_kv, backend)
        self.up = nn.Linear(dim, 2 * 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm1(x), cos, sin)
        gate, up = self.up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Decoder(nn.Module):
    def __init__(self, vocab, dim=256, layers=2, heads=4, heads_kv=2, max_len=512, backend="flash"):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, heads_kv, backend) for _ in range(layers))
        self.norm = nn.RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        half = dim // heads // 2
        inv_freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
        angles = torch.arange(max_len, dtype=torch.float32)[:, None] * inv_freq[None, :]
        self.register_buffer("cos", angles.cos()[None, :, None, :], persistent=False)
        self.register_buffer("sin", angles.sin()[None, :, None, :], persistent=False)

    def forward(self, tokens):
        s = tokens.shape[1]
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.cos[:, :s], self.sin[:, :s])
        return self.head(self.norm(x))


def copy_batch(generator, batch, length, vocab, device):
    """(inputs, targets): [string, SEP, string] shifted by one; targets are -100
    (ignored) except on the copy."""
    sep = vocab - 1
    string = torch.randint(0, vocab - 1, (batch, length), generator=generator)
    seq = torch.cat([string, torch.full((batch, 1), sep), string], dim=1)
    inputs, targets = seq[:, :-1].clone(), seq[:, 1:].clone()
    targets[:, : length] = -100  # predictions of the string itself and of SEP are not scored
    return inputs.to(device), targets.to(device)


def train(backend, args, init_state):
    torch.manual_seed(args.seed)
    model = Decoder(args.vocab, backend=backend).to(args.device)
    model.load_state_dict(init_state)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    generator = torch.Generator().manual_seed(args.seed + 1)  # the same batches for both backends
    use_autocast = args.device.startswith("cuda")
    losses = []
    t0 = time.perf_counter()
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / args.warmup)
        for group in optimizer.param_groups:
            group["lr"] = lr
        inputs, targets = copy_batch(generator, args.batch, args.length, args.vocab, args.device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_autocast):
            logits = model(inputs)
        loss = F.cross_entropy(logits.float().reshape(-1, args.vocab), targets.reshape(-1), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if step % max(1, args.steps // 10) == 0 or step == args.steps - 1:
            print(f"{backend:5s} step {step:4d} loss {losses[-1]:.4f}", flush=True)
    return losses, time.perf_counter() - t0


def write_outputs(path, curves):
    """path.csv and path.json always; path.png when matplotlib is there."""
    steps = len(next(iter(curves.values())))
    with open(path + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", *curves])
        for i in range(steps):
            w.writerow([i, *(f"{c[i]:.6f}" for c in curves.values())])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no PNG; the curves are in {path}.csv")
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, c in curves.items():
        ax.plot(c, label=name, linewidth=1.2, alpha=0.85)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy on the copy")
    ax.set_title("2-layer GQA decoder, copy task: flash vs SDPA")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path + ".png", dpi=120)
    return path + ".png"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--device", default="cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--length", type=int, default=64, help="length of the string to copy")
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--backends", default="flash,sdpa", help="comma-separated: flash, sdpa")
    p.add_argument("--out", default="train_loss", help="output path without extension (.png, .csv, .json)")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    init_state = {k: v.clone() for k, v in Decoder(args.vocab).state_dict().items()}
    curves, seconds = {}, {}
    for backend in args.backends.split(","):
        curves[backend], seconds[backend] = train(backend, args, init_state)

    window = max(1, min(10, args.steps // 5))
    summary = {"steps": args.steps, "window": window, "seconds": seconds,
               "first": {k: sum(c[:window]) / window for k, c in curves.items()},
               "last": {k: sum(c[-window:]) / window for k, c in curves.items()},
               "uniform": math.log(args.vocab)}
    if len(curves) == 2:
        a, b = curves.values()
        summary["max_abs_diff"] = max(abs(x - y) for x, y in zip(a, b))
    with open(args.out + ".json", "w") as f:
        json.dump({"summary": summary, "curves": curves}, f)
    png = write_outputs(args.out, curves)
    for k in curves:
        print(f"{k}: loss {summary['first'][k]:.4f} -> {summary['last'][k]:.4f} (mean of the first and last "
              f"{window} steps; uniform guess {summary['uniform']:.4f}) in {seconds[k]:.1f} s")
    if "max_abs_diff" in summary:
        print(f"largest per-step difference between the curves: {summary['max_abs_diff']:.4f}")
    print("wrote", ", ".join(x for x in (png, args.out + ".csv", args.out + ".json") if x))


if __name__ == "__main__":
    main()
