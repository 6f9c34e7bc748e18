# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh; without it, flash
# against cuDNN alone):
#   python3 benchmarks/fa4_decode_matched.py <path to ./bench> <out.json> [rounds, default 3]
# Issue 19's decode cells (`./bench --decode`: batch x cache 1 x 131072, 16 x 8192, 64 x 4096; heads
# 32 / 8, head dim 128, one new token, bf16; contiguous, page 16 and page 256), flash beside FA4 and
# cuDNN at one timing: flash's ./bench (kernel auto; CUDA events over back-to-back calls, median
# over 0.3 s) and with --flush always ("flash_flush": 256 MB cleared before every timed call, as
# triton's do_bench does before each of FA4's and cuDNN's); FA4 (flash_attn_varlen_func with
# seqused_k, num_splits=0, as fa4_bench.py calls it) and cuDNN (SDPA) by do_bench over 40 ms
# ("_short", fa4_bench.py's timing) and 0.5 s. Microseconds, medians; `rounds` alternations, each
# value the median over the rounds. Ratios: peer time / flash_flush time (> 1: flash ahead), both
# timed with a clear before every call.
import json, re, statistics, subprocess, sys, time, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench
try:  # without FA4 staged, the FA4 columns are left out (flash against cuDNN alone)
    from flash_attn.cute.interface import flash_attn_varlen_func
except ImportError:
    flash_attn_varlen_func = None

bench, out = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
SHAPES = [(1, 131072), (16, 8192), (64, 4096)]
HQ, HKV, D = 32, 8, 128


def flash_us(B, L, extra):
    """{layout: us} of one ./bench --decode run (layouts contiguous, page16, page256)."""
    txt = subprocess.run([bench, "--decode", "--batch", str(B), "--cache", str(L), "--kernel", "auto"] + extra,
                         capture_output=True, text=True).stdout
    res = {}
    for line in txt.splitlines():
        m = re.match(r"decode/auto/b\d+_cache\d+_(\w+?)_hq.*?\bus=([\d.]+)", line)
        if m: res[m.group(1)] = float(m.group(2))
    return res


def peer_us(f, w, r):
    try:
        f(); torch.cuda.synchronize(); time.sleep(0.5)
        return round(do_bench(f, warmup=w, rep=r, return_mode="median") * 1e3, 1)
    except Exception as e:  # noqa: BLE001 (a peer that cannot run a shape is recorded, not fatal)
        return "error: " + str(e)[:80]


samples = {}  # (B, L, column) -> [us per round]
for rnd in range(rounds):
    for B, L in SHAPES:
        for label, extra in (("flash", []), ("flash_flush", ["--flush", "always"])):
            time.sleep(0.5)
            for layout, us in flash_us(B, L, extra).items():
                samples.setdefault((B, L, f"{label}_{layout}"), []).append(us)
        q = torch.randn(B, 1, HQ, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, L, HKV, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        seqused = torch.full((B,), L, dtype=torch.int32, device="cuda")
        calls = {"contiguous": lambda: flash_attn_varlen_func(q, k, v, seqused_k=seqused, num_splits=0)}
        for page in (256, 16) if flash_attn_varlen_func else ():
            npg = B * L // page
            table = torch.randperm(npg, device="cuda").to(torch.int32).view(B, L // page)
            kp = torch.empty(npg, page, HKV, D, device="cuda", dtype=torch.bfloat16)
            vp = torch.empty_like(kp)
            kp[table.view(-1).long()] = k.view(npg, page, HKV, D)
            vp[table.view(-1).long()] = v.view(npg, page, HKV, D)
            calls[f"page{page}"] = (lambda kp=kp, vp=vp, table=table: flash_attn_varlen_func(
                q, kp, vp, seqused_k=seqused, page_table=table, num_splits=0))
        for layout, f in calls.items() if flash_attn_varlen_func else ():
            for label, w, r in (("fa4_short", 5, 40), ("fa4", 100, 500)):
                samples.setdefault((B, L, f"{label}_{layout}"), []).append(peer_us(f, w, r))
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

        def cud():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        for label, w, r in (("cudnn_short", 5, 40), ("cudnn", 100, 500)):
            samples.setdefault((B, L, f"{label}_contiguous"), []).append(peer_us(cud, w, r))
        del q, k, v, calls, qt, kt, vt
        torch.cuda.empty_cache()
        print(f"round {rnd} b{B} x {L} done", flush=True)

rows = []
for B, L in SHAPES:
    row = {"batch": B, "cache": L, "heads_q": HQ, "heads_kv": HKV, "dhead": D}
    for (b, l, col), vals in samples.items():
        if (b, l) != (B, L): continue
        nums = [x for x in vals if isinstance(x, float)]
        row[col] = round(statistics.median(nums), 1) if nums else vals[0]
        if len(nums) > 1: row[col + "_range"] = [min(nums), max(nums)]
    for layout in ("contiguous", "page16", "page256"):
        ours = row.get(f"flash_flush_{layout}")
        for peer in ("fa4", "fa4_short", "cudnn", "cudnn_short"):
            theirs = row.get(f"{peer}_{layout}")
            if isinstance(ours, float) and isinstance(theirs, float):
                row[f"{peer}_over_flash_flush_{layout}"] = round(theirs / ours, 3)
    print(json.dumps(row), flush=True)
    rows.append(row)
json.dump(rows, open(out, "w"), indent=1)
