"""The host overhead of flash_attn_func over the C++ call, at a tiny shape.

Both sides are timed the same way (benchmarks/overhead/overhead.cpp has the
C++ side): enqueue one large forward call so that the GPU is busy for
milliseconds, then time --iters tiny calls on the host, then wait; per call,
the median (and minimum) over --reps repetitions. With the GPU busy no call
waits for it, so this is what the host spends per call: validating,
allocating the output (Python only), packing the arguments, crossing ctypes,
enqueueing the kernel. The overhead is the Python median minus the C++ one.

    python3 benchmarks/overhead.py --cpp build-overhead/overhead

Without --cpp only the Python side is measured. Needs a CUDA device, torch
and the flash_ladder package (installed, or FLASH_LADDER_LIBRARY and
PYTHONPATH=python).
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time

import torch

from flash_ladder import flash_attn_func

TARGET_US = 10.0


def measure(busy, call, iters, reps):
    """(median, min) microseconds per call, by the method above."""
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    per_call, idle = [], 0
    done = torch.cuda.Event()
    for _ in range(reps):
        busy()
        done.record()
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            call()
        t1 = time.perf_counter_ns()
        idle += done.query()  # the busy call ended before the loop did
        torch.cuda.synchronize()
        per_call.append((t1 - t0) / iters / 1000.0)
    if idle:
        print(f"warning: in {idle} of {reps} reps the busy call ended before the timed loop", file=sys.stderr)
    return statistics.median(per_call), min(per_call)


def run_cpp(path, args):
    cmd = [path, "--batch", str(args.batch), "--seq", str(args.seq), "--heads", str(args.heads), "--dhead",
           str(args.dhead), "--busy-seq", str(args.busy_seq), "--iters", str(args.iters), "--reps", str(args.reps)]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print(text.strip())
    found = {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\w+)_us median ([\d.]+)", text, re.M)}
    return found.get("cpp_api"), found.get("c_abi")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cpp", help="the C++ side: benchmarks/overhead/overhead.cpp built")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dhead", type=int, default=64)
    p.add_argument("--busy-seq", type=int, default=16384)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args()

    dev, dtype = "cuda", torch.bfloat16
    q, k, v = (torch.randn(args.batch, args.seq, args.heads, args.dhead, device=dev, dtype=dtype) for _ in range(3))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    big = [torch.randn(1, args.busy_seq, 16, 128, device=dev, dtype=dtype) for _ in range(3)]

    def busy():
        flash_attn_func(*big)

    rows = {}
    rows["flash_attn_func"] = measure(busy, lambda: flash_attn_func(q, k, v), args.iters, args.reps)
    rows["flash_attn_func, inputs requiring grad"] = measure(busy, lambda: flash_attn_func(qg, kg, vg), args.iters,
                                                             args.reps)
    if hasattr(torch.ops, "flash_ladder") and hasattr(torch.ops.flash_ladder, "fwd"):
        rows["torch.ops.flash_ladder.fwd (custom op, eager)"] = measure(
            busy, lambda: torch.ops.flash_ladder.fwd(q, k, v, None, False, -1, -1, 0.0, None, None, False), args.iters,
            args.reps)  # (q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks,
        # deterministic): the schema in python/flash_ladder/interface.py
    rows["torch.empty_like(q) alone"] = measure(busy, lambda: torch.empty_like(q), args.iters, args.reps)

    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}; tiny call: bf16 batch {args.batch} seq "
          f"{args.seq} heads {args.heads} head_dim {args.dhead}; median (min) host microseconds per call")
    for name, (median, low) in rows.items():
        print(f"  {name:48s} {median:8.2f} ({low:.2f})")
    result = {"python_us": {name: median for name, (median, _) in rows.items()}}
    if args.cpp:
        cpp, c_abi = run_cpp(args.cpp, args)
        overhead = rows["flash_attn_func"][0] - cpp
        print(f"  {'C++ flash::attention_forward':48s} {cpp:8.2f}")
        print(f"  {'C ABI flash_attention_forward':48s} {c_abi:8.2f}")
        verdict = "OK" if overhead <= TARGET_US else "OVER"
        print(f"overhead of flash_attn_func over the C++ call: {overhead:.2f} us (target <= {TARGET_US:.0f} us) "
              f"[{verdict}]")
        result.update(cpp_api_us=cpp, c_abi_us=c_abi, overhead_us=overhead)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
