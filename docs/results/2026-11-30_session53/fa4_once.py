# Runs FlashAttention-4 a few times on one shape, for ncu (prepared in session 34, not run).
# argv: mode (fwd | bwd) dhead seq batch heads [causal | window L,R]
import sys, torch
from flash_attn.cute.interface import flash_attn_func
mode, d, N, B, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
kw = {}
if len(sys.argv) > 6 and sys.argv[6] == "causal":
    kw = dict(causal=True)
elif len(sys.argv) > 7 and sys.argv[6] == "window":
    left, right = (int(x) for x in sys.argv[7].split(","))
    kw = dict(window_size=(left, right))
q = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16, requires_grad=(mode == "bwd"))
k = torch.randn_like(q, requires_grad=(mode == "bwd")); v = torch.randn_like(q, requires_grad=(mode == "bwd"))
for _ in range(4):
    o = flash_attn_func(q, k, v, **kw); o = o[0] if isinstance(o, tuple) else o
    if mode == "bwd":
        torch.autograd.grad(o, (q, k, v), torch.ones_like(o))
torch.cuda.synchronize()
