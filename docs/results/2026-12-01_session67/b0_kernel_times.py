# Session 67 (from session 66's next_B0_kernel_times.py): each GPU kernel's time in one varlen call of
# issue 17's batch (bf16, hdim 128, 16 heads, 7 sequences), flash's (flash_ladder over libflash_c.so:
# FLASH_LADDER_LIBRARY) and FA4's, by torch.profiler (CUPTI), the median over 20 calls after 10 warm-up
# calls, so that the forward's and the backward's gaps to FA4 can be placed in a kernel (the
# metadata check, the attention kernel, the preprocess, the convert) or between kernels.
# Usage on the H200, FA4 staged (install.sh sourced), the bundle's lib/libflash_c.so:
#   FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:$PYTHONPATH python3 b0_kernel_times.py fwd|bwd causal|full
import collections, statistics, sys
import torch
from torch.profiler import ProfilerActivity, profile
import flash_ladder
from flash_attn.cute.interface import flash_attn_varlen_func as fa4_varlen

mode = sys.argv[1] if len(sys.argv) > 1 else "bwd"
causal = (sys.argv[2] if len(sys.argv) > 2 else "causal") == "causal"
lens = [1374, 3778, 2225, 3022, 3204, 498, 2283]
D, H, T = 128, 16, sum(lens)
cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
q = torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k, v = torch.randn_like(q, requires_grad=True), torch.randn_like(q, requires_grad=True)


def backward_of(call):
    if mode == "fwd":
        return call
    o = call()
    o = o[0] if isinstance(o, tuple) else o
    g = torch.randn_like(o)
    return lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)


libs = {
    "flash": backward_of(lambda: flash_ladder.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens),
                                                                     causal=causal)),
    "fa4": backward_of(lambda: fa4_varlen(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max(lens),
                                          max_seqlen_k=max(lens), causal=causal)),
}
for name, f in libs.items():
    for _ in range(10):
        f()
    torch.cuda.synchronize()
    per_call = collections.defaultdict(list)
    spans = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            f()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    # One call = the kernels between two launches of the call's first kernel name.
    first = events[0].name
    calls, cur = [], []
    for e in events:
        if e.name == first and cur:
            calls.append(cur); cur = []
        cur.append(e)
    calls.append(cur)
    for c in calls:
        for e in c:
            per_call[e.name[:90]].append(e.time_range.elapsed_us())
        spans.append(c[-1].time_range.end - c[0].time_range.start)
    print(f"{name} {mode} ({'causal' if causal else 'full'}): {len(calls)} calls, span median {statistics.median(spans):.1f} us")
    for kname, ts in per_call.items():
        print(f"  {statistics.median(ts):9.1f} us  x{len(ts) // len(calls)}  {kname}")
