# FA4's paged prefill beside its own contiguous call, on issue 17's paged shapes (hdim 128, bf16, 16
# heads, 4 x 4096, full and causal; pages of 16 and 256 keys from a shuffled pool, dense queries),
# timed as fa4_bench.py times (triton do_bench, median, L2 cleared before each call) over FA4_REP_MS
# (default 60: fa4_bench.py's bursts, at the boost clock; 500: the sustained clock of flash's 0.5 s
# runs). Prints one JSON line per cell: TFLOPS (4 * B * H * S * S * D, halved when causal) and FA4's
# paged / contiguous.
import json, os, sys, torch
from triton.testing import do_bench
from flash_attn.cute.interface import flash_attn_func, flash_attn_varlen_func

B, S, H, D = 4, 4096, 16, 128
dev, bf16 = "cuda", torch.bfloat16
torch.manual_seed(0)
q = torch.randn(B, S, H, D, device=dev, dtype=bf16)
k = torch.randn(B, S, H, D, device=dev, dtype=bf16)
v = torch.randn(B, S, H, D, device=dev, dtype=bf16)
seqused = torch.full((B,), S, device=dev, dtype=torch.int32)


def ms(f):
    f(); torch.cuda.synchronize()
    return do_bench(f, warmup=5, rep=int(os.environ.get("FA4_REP_MS", "60")), return_mode="median")


out = []
for causal in (False, True):
    flops = 4 * B * H * S * S * D / (2 if causal else 1)
    row = {"causal": causal}
    try:
        row["contig"] = round(flops / ms(lambda: flash_attn_func(q, k, v, causal=causal)) / 1e9, 1)
    except Exception as e:
        row["contig_error"] = repr(e)[:200]
    for page in (16, 256):
        try:
            npg = B * S // page
            table = torch.randperm(npg, device=dev).to(torch.int32).view(B, S // page)
            kp = torch.empty(npg, page, H, D, device=dev, dtype=bf16); vp = torch.empty_like(kp)
            kp[table.view(-1).long()] = k.view(npg, page, H, D); vp[table.view(-1).long()] = v.view(npg, page, H, D)
            ref = flash_attn_func(q, k, v, causal=causal)
            got = flash_attn_varlen_func(q, kp, vp, seqused_k=seqused, page_table=table, causal=causal)
            ref = ref[0] if isinstance(ref, tuple) else ref
            got = got[0] if isinstance(got, tuple) else got
            row[f"page{page}_maxdiff"] = float((ref.float() - got.float()).abs().max())
            t = ms(lambda: flash_attn_varlen_func(q, kp, vp, seqused_k=seqused, page_table=table, causal=causal))
            row[f"page{page}"] = round(flops / t / 1e9, 1)
            if "contig" in row: row[f"page{page}_vs_contig"] = round(row[f"page{page}"] / row["contig"], 3)
            del kp, vp
        except Exception as e:
            row[f"page{page}_error"] = repr(e)[:300]
    print(json.dumps(row), flush=True)
    out.append(row)
json.dump(out, open(sys.argv[1] if len(sys.argv) > 1 else "fa4_paged.json", "w"), indent=1)
