# What the fa4_*_matched.py scripts of issues 16 and 17 share: flash's TFLOPS from one ./bench
# run, and FA4's from do_bench in 40 ms bursts ("fa4_short", as fa4_bench.py times it) and over
# 0.5 s ("fa4_matched", as long as flash's bench), with flash / FA4 for each.
import re, subprocess, time
import torch
from triton.testing import do_bench


def bench_tflops(cmd, row):
    """TFLOPS of the first line of `./bench ...` (cmd) that starts with row; None if it printed none."""
    txt = subprocess.run(cmd + ["--benchmark_filter=^" + row], capture_output=True, text=True).stdout
    m = [l for l in txt.splitlines() if l.startswith(row)]
    return float(re.search(r"TFLOPS=([0-9.]+)", m[0]).group(1)) if m else None


def time_fa4(res, f, flops, rest):
    """res["fa4_short"], res["fa4_matched"] (TFLOPS of f, `rest` seconds idle before each) and
    res["vs_" + each] = res["flash"] / it; a failing call is recorded, not raised."""
    for label, w, r in (("fa4_short", 5, 40), ("fa4_matched", 100, 500)):
        try:
            f(); torch.cuda.synchronize(); time.sleep(rest)
            res[label] = round(flops / do_bench(f, warmup=w, rep=r, return_mode="median") / 1e9, 1)
        except Exception as e:  # noqa: BLE001 (recorded, not fatal)
            res[label] = None; res[label + "_error"] = str(e)[:100]
    for peer in ("fa4_short", "fa4_matched"):
        if res["flash"] and res.get(peer): res["vs_" + peer] = round(res["flash"] / res[peer], 3)


def fa4_backward(call, inputs):
    """A callable that runs the backward of call()'s output with respect to inputs (the output and
    its gradient made once)."""
    o = call()
    o = o[0] if isinstance(o, tuple) else o
    g = torch.randn_like(o)
    return lambda: torch.autograd.grad(o, inputs, g, retain_graph=True)
