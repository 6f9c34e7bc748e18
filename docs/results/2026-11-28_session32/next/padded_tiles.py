# Prepared in session 32 (not run: no device time left). Usage on the H200 with FA4 staged:
#   python3 padded_tiles.py <path to ./bench> <out.json>
# Question (NOTES, session 32): flash's dense 7 x 2341 forward runs ~8% under its 8 x 2048 (both
# 16k tokens, hdim 128, 16 heads), about the padded rows and keys of 128-row / 128-key tiles
# ((2432 / 2341)^2 = 1.079). Does FA4's lose the same? If not, FA4's varlen lead (0.90 at one
# timing, issue 17) is in the partial tiles. Per shape: flash's ./bench (auto) over 0.5 s and
# FA4's flash_attn_func over 0.5 s (do_bench 100 / 500 ms), 1 s of rest before each.
import json, re, subprocess, sys, time, torch
from triton.testing import do_bench
from flash_attn.cute.interface import flash_attn_func
bench, out = sys.argv[1], sys.argv[2]
rows = []
for causal in (False, True):
    for B, N in ((8, 2048), (7, 2341), (4, 4096), (3, 5461)):
        H, D = 16, 128
        flops = 4 * B * H * N * N * D / (2 if causal else 1)
        time.sleep(1)
        cmd = [bench, "--batch", str(B), "--heads", str(H), "--seq", str(N), "--dhead", str(D), "--kernel", "auto"]
        txt = subprocess.run(cmd + (["--causal"] if causal else []), capture_output=True, text=True).stdout
        m = [l for l in txt.splitlines() if l.startswith("fwd/auto")]
        res = {"batch": B, "seq": N, "causal": causal,
               "flash": float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None}
        q = torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        f = lambda: flash_attn_func(q, k, v, causal=causal)
        f(); torch.cuda.synchronize(); time.sleep(1)
        res["fa4"] = round(flops / do_bench(f, warmup=100, rep=500, return_mode="median") / 1e9, 1)
        print(json.dumps(res), flush=True)
        rows.append(res)
        del q, k, v
json.dump(rows, open(out, "w"), indent=1)
