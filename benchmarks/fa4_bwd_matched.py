# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   python3 benchmarks/fa4_bwd_matched.py <path to ./bench> <out.json> [head dims, default 64,128,256]
# Issue 18, matched timing: per cell of the table, flash's ./bench --bwd (kernel auto, both
# modes: "flash" and "flash_det"; CUDA events, warm-up, median over >= 0.5 s) and FA4's backward
# timed with do_bench (median) as fa4_bench.py does (warmup 5 ms, rep 40 ms: "fa4_short") and over
# as long as our bench times (warmup 100 ms, rep 500 ms: "fa4_matched", "fa4_det_matched" with
# deterministic=True, and "cudnn_matched", PyTorch SDPA's cuDNN backend); 2 s of rest before each
# timing so every one starts from the same state. flash is timed in 40 ms bursts too (--min-time
# 0.04: "flash_burst", ratio_burst = flash_burst / fa4_short, both at the boost clock).
import json, re, subprocess, sys, time, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
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
            def run_bench(extra):  # both modes' TFLOPS of one ./bench run
                txt = subprocess.run(cmd + extra, capture_output=True, text=True).stdout
                got = {}
                for label, key in (("bwd/auto/", "flash"), ("bwd/auto-det/", "flash_det")):
                    m = [l for l in txt.splitlines() if l.startswith(label)]
                    got[key] = float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None
                return got
            both = run_bench([])
            ours = both["flash"]
            time.sleep(2)
            burst = run_bench(["--min-time", "0.04"])["flash"]
            q = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
            o = flash_attn_func(q, k, v, causal=causal); o = o[0] if isinstance(o, tuple) else o
            g = torch.randn_like(o)
            f = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
            f(); torch.cuda.synchronize()
            def prepared(make):  # a timed callable, or None (the error printed) where the peer fails
                try:
                    fn = make(); fn(); torch.cuda.synchronize(); return fn
                except Exception as e:
                    print(f"skipped: {repr(e)[:200]}", flush=True); return None
            def make_det():
                od = flash_attn_func(q, k, v, causal=causal, deterministic=True); od = od[0] if isinstance(od, tuple) else od
                return lambda: torch.autograd.grad(od, (q, k, v), g, retain_graph=True)
            def make_cudnn():
                qt, kt, vt = (x.detach().transpose(1, 2).requires_grad_(True) for x in (q, k, v))
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    oc = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                gc = g.transpose(1, 2)
                return lambda: torch.autograd.grad(oc, (qt, kt, vt), gc, retain_graph=True)
            fd, fc = prepared(make_det), prepared(make_cudnn)
            res = {"dhead": d, "causal": causal, "seq": N, "flash": ours, "flash_det": both["flash_det"],
                   "flash_burst": burst}
            for label, fn, w, r in (("fa4_short", f, 5, 40), ("fa4_matched", f, 100, 500),
                                    ("fa4_det_matched", fd, 100, 500), ("cudnn_matched", fc, 100, 500)):
                if fn is None:
                    res[label] = None
                    continue
                time.sleep(2)
                ms = do_bench(fn, warmup=w, rep=r, return_mode="median")
                res[label] = round(flops / ms / 1e9, 1)
            res["ratio_short"] = round(ours / res["fa4_short"], 3) if ours else None
            res["ratio_matched"] = round(ours / res["fa4_matched"], 3) if ours else None
            res["ratio_burst"] = round(burst / res["fa4_short"], 3) if burst else None
            res["det_ratio"] = round(both["flash_det"] / ours, 3) if ours and both["flash_det"] else None
            res["ratio_cudnn_matched"] = round(ours / res["cudnn_matched"], 3) if ours and res["cudnn_matched"] else None
            print(json.dumps(res), flush=True)
            rows.append(res)
            del q, k, v, o, g, fd, fc
json.dump(rows, open(out, "w"), indent=1)
