# Session 67: host microseconds per call of flash_ladder's varlen forward (issue 17's batch) and of
# the dense forward of the same tokens, with the GPU kept busy (a chain of large matmuls enqueued
# first), so that no call waits for the GPU: what the host spends validating, planning and
# enqueueing (the varlen call: the metadata check, a memset and the forward). Median of 20 x 50 calls.
import statistics, time, torch
import flash_ladder

lens = [1374, 3778, 2225, 3022, 3204, 498, 2283]
D, H, T = 128, 16, sum(lens)
cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
q = torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16)
k, v = torch.randn_like(q), torch.randn_like(q)
qd, kd, vd = (x.view(7, T // 7, H, D) for x in (q[: T // 7 * 7], k[: T // 7 * 7], v[: T // 7 * 7]))
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
calls = {
    "varlen causal": lambda: flash_ladder.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens), causal=True),
    "varlen full": lambda: flash_ladder.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens)),
    "dense causal 7 x 2340": lambda: flash_ladder.flash_attn_func(qd, kd, vd, causal=True),
}
with torch.no_grad():
    for name, f in calls.items():
        for _ in range(5):
            f()
        torch.cuda.synchronize()
        per = []
        for _ in range(20):
            for _ in range(40):
                a @ a  # ~1.4 ms each: the GPU stays busy while the host enqueues
            t0 = time.perf_counter()
            for _ in range(50):
                f()
            per.append((time.perf_counter() - t0) / 50 * 1e6)
            torch.cuda.synchronize()
        print(f"{name}: host {statistics.median(per):.1f} us per call (min {min(per):.1f})")
