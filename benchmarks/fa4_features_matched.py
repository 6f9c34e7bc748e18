# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   python3 benchmarks/fa4_features_matched.py <path to ./bench> <out.json>
# Issue 16's table at matched timing: the two shapes (hdim 64, 8k, batch 2, 32 heads; hdim 128,
# 16k, batch 1, 16 heads; bf16) times the six cases of fa4_bench.py --parts features (causal,
# windows (4096, 0), (128, 0), (2048, 2048), causal + softcap 30, causal + sinks), forward and
# backward. Per cell: flash's `./bench ... --kernel auto` (CUDA events, warm-up, median over
# >= 0.5 s; backward: the non-deterministic row); FA4's flash_attn_func by do_bench in 40 ms
# bursts as fa4_bench.py times it ("fa4_short") and over 0.5 s ("fa4_matched"); 0.5 s of rest
# before each timing. TFLOPS of the visible (query, key) pairs (backward 2.5x), as both count.
import json, re, subprocess, sys, time, torch
from triton.testing import do_bench
from flash_attn.cute.interface import flash_attn_func

bench, out = sys.argv[1], sys.argv[2]
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
        kw = kw if kw is not None else dict(causal=True, learnable_sink=sink)
        pairs = B * visible(N, left, right)
        for mode in ("fwd", "bwd"):
            flops = 4 * H * pairs * D * (2.5 if mode == "bwd" else 1)
            res = {"case": name, "dhead": D, "seq": N, "batch": B, "heads": H, "mode": mode}
            cmd = [bench, "--batch", str(B), "--heads", str(H), "--seq", str(N), "--dhead", str(D),
                   "--kernel", "auto"] + flags + (["--bwd"] if mode == "bwd" else [])
            time.sleep(0.5)
            txt = subprocess.run(cmd + ["--benchmark_filter=^" + mode + "/auto/"], capture_output=True, text=True).stdout
            m = [l for l in txt.splitlines() if l.startswith(mode + "/auto/")]
            res["flash"] = float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None
            if mode == "fwd":
                f = lambda: flash_attn_func(q, k, v, **kw)
            else:
                o = flash_attn_func(q, k, v, **kw)
                o = o[0] if isinstance(o, tuple) else o
                g = torch.randn_like(o)
                f = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
            for label, w, r in (("fa4_short", 5, 40), ("fa4_matched", 100, 500)):
                try:
                    f(); torch.cuda.synchronize(); time.sleep(0.5)
                    res[label] = round(flops / do_bench(f, warmup=w, rep=r, return_mode="median") / 1e9, 1)
                except Exception as e:  # noqa: BLE001 (recorded, not fatal)
                    res[label] = None; res[label + "_error"] = str(e)[:100]
            for peer in ("fa4_short", "fa4_matched"):
                if res["flash"] and res.get(peer): res["vs_" + peer] = round(res["flash"] / res[peer], 3)
            print(json.dumps(res), flush=True)
            rows.append(res)
            json.dump(rows, open(out, "w"), indent=1)
            del f
            if mode == "bwd": del o, g
    del q, k, v
