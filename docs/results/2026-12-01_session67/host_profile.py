# Session 67: where flash_ladder's host time goes per call (cProfile over 300 calls with the GPU
# kept busy), at the tiny shape of the README's overhead figure and at 7 x 2340 x 16 x 128 causal
# (call 11: 40 us through Python against 11 us through the C++ API).
import cProfile, pstats, sys, torch
import flash_ladder

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for shape, causal in (((1, 128, 8, 64), False), ((7, 2340, 16, 128), True)):
    q = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    f = lambda: flash_ladder.flash_attn_func(q, k, v, causal=causal)
    with torch.no_grad():
        for _ in range(10):
            f()
        torch.cuda.synchronize()
        for _ in range(60):
            a @ a
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(300):
            f()
        pr.disable()
        torch.cuda.synchronize()
    print(f"=== {shape} causal={causal}: per call, us")
    st = pstats.Stats(pr)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][3])[:22]
    for (fn, line, name), (cc, nc, tt, ct, _) in rows:
        print(f"{ct / 300 * 1e6:9.2f} cum {tt / 300 * 1e6:8.2f} self  x{nc // 300:<3d} {fn.split('/')[-1]}:{line} {name}")
