#!/usr/bin/env python3
"""PyTorch SDPA (cuDNN and flash backends) on the decode shapes of ./bench --decode,
for reference numbers measured in the same device call.

  python3 benchmarks/sdpa_decode.py [--json out.json]

Shapes: q [batch, 32 heads, 1, 128], K/V [batch, 8 heads, cache, 128] (GQA
through enable_gqa, so each backend reads K/V once), bf16, non-causal (one
query sees every key, as the causal decode step does). CUDA events around
each call, warm-up, median of the repeats; the caches (>= 256 MiB) are far
larger than L2. GB/s = bytes of K and V / time.
"""
import argparse
import json
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
SHAPES = [(1, 131072), (16, 8192), (64, 4096)]


def measure(backend, batch, cache, heads_q=32, heads_kv=8, dhead=128, warmup=5, repeats=50):
    dtype = torch.bfloat16
    q = torch.randn(batch, heads_q, 1, dhead, device="cuda", dtype=dtype)
    k = torch.randn(batch, heads_kv, cache, dhead, device="cuda", dtype=dtype)
    v = torch.randn(batch, heads_kv, cache, dhead, device="cuda", dtype=dtype)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with sdpa_kernel([BACKENDS[backend]]):
        for i in range(warmup + repeats):
            start.record()
            torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            stop.record()
            stop.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(stop))
    ms = statistics.median(times)
    kv_bytes = 2 * k.numel() * k.element_size()
    return {"backend": backend, "batch": batch, "cache": cache, "us": ms * 1e3, "GBps": kv_bytes / (ms * 1e-3) / 1e9}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}")
    rows = []
    for batch, cache in SHAPES:
        for backend in BACKENDS:
            try:
                r = measure(backend, batch, cache)
            except RuntimeError as e:
                print(f"sdpa/{backend} b{batch} cache {cache}: {str(e).splitlines()[0]}")
                continue
            rows.append(r)
            print(f"sdpa/{backend:<5} b{batch:<3} cache {cache:<6} {r['us']:9.1f} us {r['GBps']:7.0f} GB/s")
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
