# Runs FlashAttention-4's backward a few times on one shape (for ncu): argv dhead seq [causal].
import sys, torch
from flash_attn.cute.interface import flash_attn_func
d, N = int(sys.argv[1]), int(sys.argv[2]); causal = len(sys.argv) > 3
H, B = 2048 // d, 16384 // N
q = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
o = flash_attn_func(q, k, v, causal=causal); o = o[0] if isinstance(o, tuple) else o
g = torch.randn_like(o)
for _ in range(4):
    torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
torch.cuda.synchronize()
