# The bf16 GEMM ceiling on this board, two ways: ten products after three warm-ups (KINDS.md's
# burst), and back to back over 0.5 s after 0.2 s of warm-up (how ./bench times attention).
import time, torch
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
flop = 2 * n ** 3
def run(iters):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        torch.matmul(a, b, out=c)
    e.record(); e.synchronize()
    return s.elapsed_time(e) / 1e3 / iters
for _ in range(3): run(1)
burst = run(10)
t0 = time.time()
while time.time() - t0 < 0.2: run(5)
per = run(1)
iters = max(10, int(0.5 / per))
sustained = run(iters)
print(f"gemm 8192^3 bf16: burst (10) {flop / burst / 1e12:.1f} TFLOPS, sustained ({iters} over ~0.5 s) {flop / sustained / 1e12:.1f} TFLOPS")
