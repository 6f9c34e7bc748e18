# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   python3 benchmarks/fa4_fwd_matched.py <path to ./bench> <out.json> [seqs, default 2048,4096,8192,16384]
#   (FA4_DHEADS=64,128: those head dims only; default 64,128,256)
# Issue 19, matched timing of the forward: per cell of the table (bf16, 16k tokens, heads =
# 2048 / dhead), flash's ./bench (kernel auto; CUDA events, warm-up, median over >= 0.5 s) and the
# same in 40 ms bursts (--min-time 0.04: "flash_burst"), FA4 by do_bench as fa4_bench.py does
# (warm-up 5 ms, rep 40 ms) and over as long as our bench times (100 ms / 500 ms), and cuDNN
# through SDPA (5 ms / 40 ms); 1 s of rest before each timing. Ratios: vs_* = flash (0.5 s) / peer
# (as published before session 19), burst_vs_* = flash_burst / the peer's 40 ms bursts (both at
# the boost clock), vs_fa4_matched = both over 0.5 s. flash_flush: ./bench --flush always (256 MB
# cleared before every timed call, as do_bench does before each of FA4's), flush_vs_fa4_matched =
# that over FA4's 0.5 s: both timed the same way (session 45: at 512 keys the clear's idle time
# alone is worth 4-6% to a kernel of ~150 us on this power-bound board).
import json, os, re, subprocess, sys, time, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench
from flash_attn.cute.interface import flash_attn_func
bench, out = sys.argv[1], sys.argv[2]
seqs = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "2048,4096,8192,16384").split(",")]
rows = []
dheads = [int(x) for x in os.environ.get("FA4_DHEADS", "64,128,256").split(",")]  # a subset of the head dims
for d in dheads:
    for causal in (False, True):
        for N in seqs:
            H, B = 2048 // d, 16384 // N
            flops = 4 * B * H * N * N * d / (2 if causal else 1)
            time.sleep(1)
            cmd = [bench, "--batch", str(B), "--heads", str(H), "--seq", str(N), "--dhead", str(d), "--kernel", "auto"]
            res = {"dhead": d, "causal": causal, "seq": N}
            for label, extra in (("flash", []), ("flash_burst", ["--min-time", "0.04"]),
                                 ("flash_flush", ["--flush", "always"])):
                if extra: time.sleep(1)
                txt = subprocess.run(cmd + (["--causal"] if causal else []) + extra, capture_output=True,
                                     text=True).stdout
                m = [l for l in txt.splitlines() if l.startswith("fwd/auto")]
                res[label] = float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None
            q = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16)
            k, v = torch.randn_like(q), torch.randn_like(q)
            qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
            def cud():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
            fa4 = lambda: flash_attn_func(q, k, v, causal=causal)
            for label, f, w, r in (("fa4_short", fa4, 5, 40), ("fa4_matched", fa4, 100, 500), ("cudnn_short", cud, 5, 40)):
                try:
                    f(); torch.cuda.synchronize(); time.sleep(1)
                    res[label] = round(flops / do_bench(f, warmup=w, rep=r, return_mode="median") / 1e9, 1)
                except Exception as e:  # noqa: BLE001 (a peer that cannot run a shape is recorded, not fatal)
                    res[label] = None; res[label + "_error"] = str(e)[:100]
            for peer in ("fa4_short", "fa4_matched", "cudnn_short"):
                if res["flash"] and res.get(peer): res["vs_" + peer] = round(res["flash"] / res[peer], 3)
            if res["flash_flush"] and res.get("fa4_matched"):
                res["flush_vs_fa4_matched"] = round(res["flash_flush"] / res["fa4_matched"], 3)
            for peer in ("fa4_short", "cudnn_short"):
                if res["flash_burst"] and res.get(peer):
                    res["burst_vs_" + peer] = round(res["flash_burst"] / res[peer], 3)
            print(json.dumps(res), flush=True)
            rows.append(res)
            del q, k, v, qt, kt, vt
json.dump(rows, open(out, "w"), indent=1)
