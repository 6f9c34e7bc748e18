# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   [FA4_MODES=fwd] python3 benchmarks/fa4_features_matched.py <path to ./bench> <out.json>
# Issue 16's table at matched timing: the two shapes (hdim 64, 8k, batch 2, 32 heads; hdim 128,
# 16k, batch 1, 16 heads; bf16) times the six cases of fa4_bench.py --parts features (causal,
# windows (4096, 0), (128, 0), (2048, 2048), causal + softcap 30, causal + sinks), forward and
# backward. Per cell: flash's `./bench ... --kernel auto` (CUDA events, warm-up, median over
# >= 0.5 s; backward: the non-deterministic row); FA4's flash_attn_func by do_bench in 40 ms
# bursts as fa4_bench.py times it ("fa4_short") and over 0.5 s ("fa4_matched"); 0.5 s of rest
# before each timing. TFLOPS of the visible (query, key) pairs (backward 2.5x), as both count.
import json, os, sys, time, torch
from flash_attn.cute.interface import flash_attn_func
from fa4_matched_common import bench_tflops, fa4_backward, time_fa4

bench, out = sys.argv[1], sys.argv[2]
# FA4_MODES=fwd (or bwd) times one direction only; both by default.
MODES = tuple(os.environ.get("FA4_MODES", "fwd,bwd").split(","))
# FA4_CASES=causal,window128_causal (names below) times those cases only; all by default.
ONLY = os.environ.get("FA4_CASES")
CASES = [("causal", ["--causal"], dict(causal=True), (None, 0)),
         ("window4096_causal", ["--causal", "--window", "4096,0"], dict(window_size=(4096, 0)), (4096, 0)),
         ("window128_causal", ["--causal", "--window", "128,0"], dict(window_size=(128, 0)), (128, 0)),
         ("window2048_2048", ["--window", "2048,2048"], dict(window_size=(2048, 2048)), (2048, 2048)),
         ("causal_softcap30", ["--causal", "--softcap", "30"], dict(causal=True, softcap=30.0), (None, 0)),
         ("causal_sinks", ["--causal", "--sinks"], None, (None, 0))]


def visible(n, left, right):
    """Pairs (i, j), 0 <= i, j < n, with i - left <= j <= i + right (None: unbounded)."""
    total = 0
    for i in range(n):
        lo = 0 if left is None else max(0, i - left)
        hi = n - 1 if right is None else min(n - 1, i + right)
        total += max(0, hi - lo + 1)
    return total


rows = []
for D, N, B, H in ((64, 8192, 2, 32), (128, 16384, 1, 16)):
    q = torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = torch.randn_like(q, requires_grad=True), torch.randn_like(q, requires_grad=True)
    sink = torch.randn(H, device="cuda", dtype=torch.float32)
    for name, flags, kw, (left, right) in CASES:
        if ONLY and name not in ONLY.split(","):
            continue
        kw = kw if kw is not None else dict(causal=True, learnable_sink=sink)
        pairs = B * visible(N, left, right)
        for mode in MODES:
            flops = 4 * H * pairs * D * (2.5 if mode == "bwd" else 1)
            res = {"case": name, "dhead": D, "seq": N, "batch": B, "heads": H, "mode": mode}
            cmd = [bench, "--batch", str(B), "--heads", str(H), "--seq", str(N), "--dhead", str(D),
                   "--kernel", "auto"] + flags + (["--bwd"] if mode == "bwd" else [])
            time.sleep(0.5)
            res["flash"] = bench_tflops(cmd, mode + "/auto/")
            call = lambda: flash_attn_func(q, k, v, **kw)
            f = call if mode == "fwd" else fa4_backward(call, (q, k, v))
            time_fa4(res, f, flops, rest=0.5)
            print(json.dumps(res), flush=True)
            rows.append(res)
            json.dump(rows, open(out, "w"), indent=1)
            del f
    del q, k, v
