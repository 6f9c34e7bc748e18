# Usage, on the H200 with FlashAttention-4 staged (../shared/anchors/fa4/stage.sh):
#   python3 benchmarks/fa4_varlen_matched.py <path to ./bench> <out.json>
# Issue 17, matched timing of the variable-length calls: issue 17's batch (bf16, hdim 128, 16
# heads, the 7 sequences fa4_bench.py --parts varlen draws, 16384 tokens), full and causal,
# forward and backward. Per cell: flash's `./bench --varlen` (CUDA events, warm-up, median over
# >= 0.5 s) and the same in 40 ms bursts (--min-time 0.04: "flash_burst"); FA4's
# flash_attn_varlen_func by do_bench as fa4_bench.py times it (warm-up 5 ms, rep 40 ms:
# "fa4_short") and over as long as our bench times (100 ms / 500 ms: "fa4_matched"); 1 s of rest
# before each timing. Ratios: vs_fa4_short = flash (0.5 s) / FA4 bursts (the method),
# vs_fa4_matched = both over 0.5 s, burst_vs_fa4_short = both in 40 ms bursts.
# Timed alike (session 67): ./bench with --flush always ("flash_flush": 256 MB cleared before each
# call, as do_bench does for FA4, which also leaves the host time to enqueue the call's three GPU
# operations before the GPU reaches them) and, where flash_ladder imports (FLASH_LADDER_LIBRARY and
# PYTHONPATH=python), flash's flash_attn_varlen_func on the same tensors by the same do_bench
# ("flash_dobench_short" / "flash_dobench_matched"); alike_vs_fa4_* = those / FA4's.
# TFLOPS of the visible pairs (4 * H * D * pairs; backward 2.5x), as both tools count them.
import json, sys, time, torch
from flash_attn.cute.interface import flash_attn_varlen_func
from fa4_matched_common import bench_tflops, fa4_backward, time_fa4

try:
    import flash_ladder
except Exception:  # noqa: BLE001 (the do_bench columns are optional)
    flash_ladder = None

bench, out = sys.argv[1], sys.argv[2]
lens = [1374, 3778, 2225, 3022, 3204, 498, 2283]  # fa4_bench.py's draw (seed 1), bench's default
D, H, T = 128, 16, sum(lens)
cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
q = torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k, v = torch.randn_like(q, requires_grad=True), torch.randn_like(q, requires_grad=True)
rows = []
for mode in ("fwd", "bwd"):
    for causal in (False, True):
        pairs = sum(n * (n + 1) // 2 if causal else n * n for n in lens)
        flops = 4 * H * pairs * D * (2.5 if mode == "bwd" else 1)
        res = {"mode": mode, "causal": causal, "lens": lens}
        cmd = [bench, "--varlen", "--dhead", str(D), "--heads", str(H)] + (["--causal"] if causal else []) + \
              (["--bwd"] if mode == "bwd" else [])
        # auto's kernels on sm_90: wgmma_persistent forward, wgmma (bwd_03) non-deterministic backward.
        row = "bwd_varlen/wgmma/" if mode == "bwd" else "fwd_varlen/wgmma_persistent/"
        for label, extra in (("flash", []), ("flash_burst", ["--min-time", "0.04"]), ("flash_flush", ["--flush", "always"])):
            time.sleep(1)
            res[label] = bench_tflops(cmd + extra, row)
        call = lambda: flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max(lens),
                                              max_seqlen_k=max(lens), causal=causal)
        f = call if mode == "fwd" else fa4_backward(call, (q, k, v))
        time_fa4(res, f, flops, rest=1)
        if flash_ladder is not None:  # flash's call through the same do_bench, on the same tensors
            fcall = lambda: flash_ladder.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens), causal=causal)
            alike = {"flash": res["flash"]}
            time_fa4(alike, fcall if mode == "fwd" else fa4_backward(fcall, (q, k, v)), flops, rest=1)
            res["flash_dobench_short"], res["flash_dobench_matched"] = alike.get("fa4_short"), alike.get("fa4_matched")
            for peer in ("short", "matched"):
                if res["flash_dobench_" + peer] and res.get("fa4_" + peer):
                    res["alike_vs_fa4_" + peer] = round(res["flash_dobench_" + peer] / res["fa4_" + peer], 3)
        if res.get("flash_flush") and res.get("fa4_matched"):
            res["flush_vs_fa4_matched"] = round(res["flash_flush"] / res["fa4_matched"], 3)
        if res["flash_burst"] and res.get("fa4_short"):
            res["burst_vs_fa4_short"] = round(res["flash_burst"] / res["fa4_short"], 3)
        print(json.dumps(res), flush=True)
        rows.append(res)
json.dump(rows, open(out, "w"), indent=1)
