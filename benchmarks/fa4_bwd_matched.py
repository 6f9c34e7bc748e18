# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   python3 benchmarks/fa4_bwd_matched.py <path to ./bench> <out.json> [head dims, default 64,128,256]
# Issue 18, matched timing: per cell of the table, flash's ./bench --bwd (kernel auto; CUDA
# events, warm-up, median over >= 0.5 s) and FA4's backward timed two ways with do_bench (median):
# as fa4_bench.py does (warmup 5 ms, rep 40 ms) and over as long as our bench times (warmup 100 ms,
# rep 500 ms); 2 s of rest before each timing so every one starts from the same state. flash is
# timed in 40 ms bursts too (--min-time 0.04: "flash_burst", ratio_burst = flash_burst / fa4_short,
# both at the boost clock).
import json, re, subprocess, sys, time, torch
from triton.testing import do_bench
from flash_attn.cute.interface import flash_attn_func
bench, out = sys.argv[1], sys.argv[2]
dheads = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "64,128,256").split(",")]
rows = []
for d in dheads:
    H = 2048 // d
    for causal in (False, True):
        for N in (8192, 16384):
            B = 16384 // N
            flops = 2.5 * 4 * B * H * N * N * d / (2 if causal else 1)
            time.sleep(2)
            cmd = [bench, "--bwd", "--batch", str(B), "--heads", str(H), "--seq", str(N), "--dhead", str(d),
                   "--kernel", "auto"] + (["--causal"] if causal else [])
            def run_bench(extra):
                txt = subprocess.run(cmd + extra, capture_output=True, text=True).stdout
                m = [l for l in txt.splitlines() if l.startswith("bwd/auto/") and "_det" not in l]
                return float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None
            ours = run_bench([])
            time.sleep(2)
            burst = run_bench(["--min-time", "0.04"])
            q = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
            o = flash_attn_func(q, k, v, causal=causal); o = o[0] if isinstance(o, tuple) else o
            g = torch.randn_like(o)
            f = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
            f(); torch.cuda.synchronize()
            res = {"dhead": d, "causal": causal, "seq": N, "flash": ours, "flash_burst": burst}
            for label, w, r in (("fa4_short", 5, 40), ("fa4_matched", 100, 500)):
                time.sleep(2)
                ms = do_bench(f, warmup=w, rep=r, return_mode="median")
                res[label] = round(flops / ms / 1e9, 1)
            res["ratio_short"] = round(ours / res["fa4_short"], 3) if ours else None
            res["ratio_matched"] = round(ours / res["fa4_matched"], 3) if ours else None
            res["ratio_burst"] = round(burst / res["fa4_short"], 3) if burst else None
            print(json.dumps(res), flush=True)
            rows.append(res)
            del q, k, v, o, g
json.dump(rows, open(out, "w"), indent=1)
