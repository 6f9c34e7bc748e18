"""flash_attn_func against torch.nn.functional.scaled_dot_product_attention:
the same inputs through both, the largest difference of their outputs, and
the speed of each in TFLOPS.

    python3 examples/compare_sdpa.py             # B=4 H=8 N=4096 d=64 in fp16 and bf16, and the README's shape
    python3 examples/compare_sdpa.py --causal

Shapes: batch 4, 8 heads, 4096 tokens, head dim 64 (the classic comparison),
and the README's main shape: 16k tokens as batch 16384 / seq = 4 of seq 4096,
heads 2048 / head_dim = 16 of head_dim 128. flash takes (batch, seqlen, heads,
head_dim) tensors and SDPA (batch, heads, seqlen, head_dim) ones; each gets its
own layout, contiguous. FLOPs = 4 * B * H * Sq * Sk * D, halved when causal;
each time is the median of --iters calls timed by CUDA events after
--warmup calls, with the L2 cache flushed before each timed call.
"""

import argparse
import statistics

import torch
import torch.nn.functional as F

import flash_ladder
from flash_ladder import flash_attn_func

SHAPES = [  # batch, heads, seqlen, head_dim, dtypes
    (4, 8, 4096, 64, (torch.float16, torch.bfloat16)),
    (4, 16, 4096, 128, (torch.float16, torch.bfloat16)),
]


def backends():
    """SDPA's backends to time: torch's default choice, and each of flash and
    cuDNN on its own where this torch has them."""
    out = [("SDPA default", None)]
    try:
        from torch.nn.attention import SDPBackend

        out += [("SDPA flash", SDPBackend.FLASH_ATTENTION)]
        if hasattr(SDPBackend, "CUDNN_ATTENTION"):
            out += [("SDPA cuDNN", SDPBackend.CUDNN_ATTENTION)]
    except ImportError:  # torch < 2.3
        pass
    return out


def sdpa(backend, q, k, v, causal):
    if backend is None:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    from torch.nn.attention import sdpa_kernel

    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def time_ms(fn, warmup, iters, flush):
    """Median milliseconds of fn() by CUDA events, L2 flushed before each call."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description="flash_attn_func against SDPA: max difference and TFLOPS")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()

    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")  # larger than any L2
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, flash-ladder {flash_ladder.__version__}; "
          f"{'causal' if args.causal else 'non-causal'}")
    print(f"{'shape':24s} {'dtype':9s} {'flash kernel':18s} {'max |flash - SDPA|':>18s} {'flash TFLOPS':>12s}  SDPA TFLOPS")
    for batch, heads, seq, dhead, dtypes in SHAPES:
        flops = 4 * batch * heads * seq * seq * dhead / (2 if args.causal else 1)
        for dtype in dtypes:
            torch.manual_seed(0)
            qh, kh, vh = (torch.randn(batch, heads, seq, dhead, device="cuda", dtype=dtype) for _ in range(3))
            q, k, v = (t.transpose(1, 2).contiguous() for t in (qh, kh, vh))  # (batch, seqlen, heads, head_dim)
            kernel = flash_ladder.plan_forward(q, k, v, causal=args.causal)["kernel"]
            out = flash_attn_func(q, k, v, causal=args.causal)
            ref = sdpa(None, qh, kh, vh, args.causal).transpose(1, 2)
            diff = (out.float() - ref.float()).abs().max().item()
            flash_ms = time_ms(lambda: flash_attn_func(q, k, v, causal=args.causal), args.warmup, args.iters, flush)
            sdpa_tflops = []
            for name, backend in backends():
                try:
                    ms = time_ms(lambda: sdpa(backend, qh, kh, vh, args.causal), args.warmup, args.iters, flush)
                    sdpa_tflops.append(f"{name} {flops / ms / 1e9:.1f}")
                except RuntimeError as e:  # a backend that cannot take this call
                    sdpa_tflops.append(f"{name} n/a ({str(e).splitlines()[0][:40]})")
            shape = f"B{batch} H{heads} N{seq} d{dhead}"
            dname = str(dtype).replace("torch.", "")
            print(f"{shape:24s} {dname:9s} {kernel:18s} {diff:18.3g} {flops / flash_ms / 1e9:12.1f}  "
                  + ", ".join(sdpa_tflops))


if __name__ == "__main__":
    main()
