# Session 61: FA4's backward of one (128, 0)-window call (or causal), a few times, for ncu to list
# its kernels: python3 fa4_window_bwd_once.py D N B H [window]
import sys, torch
from flash_attn.cute.interface import flash_attn_func
D, N, B, H = map(int, sys.argv[1:5])
win = len(sys.argv) > 5 and sys.argv[5] == "window"
q = torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k, v = torch.randn_like(q, requires_grad=True), torch.randn_like(q, requires_grad=True)
kw = dict(window_size=(128, 0)) if win else dict(causal=True)
o = flash_attn_func(q, k, v, **kw)
o = o[0] if isinstance(o, tuple) else o
g = torch.randn_like(o)
for _ in range(3):
    torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
torch.cuda.synchronize()
