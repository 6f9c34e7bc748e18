#!/usr/bin/env python3
"""PyTorch SDPA (cuDNN and flash backends) on the shapes ./bench uses, for
reference numbers measured in the same device call.

  python3 benchmarks/sdpa_bench.py --seq 512 1024 2048 4096 8192 16384 --dhead 128 [--causal] [--json out.json]

Same conventions as ./bench: batch = 16384 / seq, heads = 2048 / dhead, bf16,
[batch, seq, heads, dhead] tensors viewed as [batch, heads, seq, dhead];
CUDA events around each call, warm-up, median of the repeats, and an L2
flush (a 2x-L2 memset) before each timed call when the inputs would fit in L2.
FLOPs = 4 * B * H * Sq * Sk * D, halved when causal.
--bwd times the backward alone (torch.autograd.grad of the SDPA output, the
forward graph retained), FLOPs 2.5x the forward's, as ./bench --bwd.
"""
import argparse
import json
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def measure(backend, seq, dhead, causal, dtype, warmup=5, repeats=30, bwd=False):
    batch, heads = max(1, 16384 // seq), max(1, 2048 // dhead)
    shape = (batch, seq, heads, dhead)
    leaves = [torch.randn(shape, device="cuda", dtype=dtype, requires_grad=bwd) for _ in range(3)]
    q, k, v = (t.transpose(1, 2) for t in leaves)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda") if 4 * q.numel() * q.element_size() < 4 * l2 else None
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with sdpa_kernel([BACKENDS[backend]]):
        if bwd:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            dout = torch.randn_like(out)
        for i in range(warmup + repeats):
            if flush is not None:
                flush.fill_(i & 0xFF)
            start.record()
            if bwd:
                torch.autograd.grad(out, leaves, dout, retain_graph=True)
            else:
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            stop.record()
            stop.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(stop))
    ms = statistics.median(times)
    flops = 4 * batch * heads * seq * seq * dhead * (0.5 if causal else 1.0) * (2.5 if bwd else 1.0)
    return {"backend": backend, "pass": "bwd" if bwd else "fwd", "batch": batch, "heads": heads, "seq": seq, "dhead": dhead, "causal": causal,
            "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, nargs="+", default=[4096])
    ap.add_argument("--dhead", type=int, nargs="+", default=[128])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--both-masks", action="store_true", help="run non-causal and causal")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--bwd", action="store_true", help="time the backward instead of the forward")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    masks = [False, True] if args.both_masks else [args.causal]
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}")
    rows = []
    for causal in masks:
        for dhead in args.dhead:
            for seq in args.seq:
                for backend in BACKENDS:
                    try:
                        r = measure(backend, seq, dhead, causal, dtype, bwd=args.bwd)
                    except RuntimeError as e:  # a backend that does not take the shape
                        print(f"sdpa/{backend} seq {seq} dhead {dhead}: {str(e).splitlines()[0]}")
                        continue
                    rows.append(r)
                    print(f"sdpa{'-bwd' if args.bwd else ''}/{backend:<5} b{r['batch']} h{r['heads']} s{seq} d{dhead} "
                          f"{'causal' if causal else 'full  '} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOPS")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
