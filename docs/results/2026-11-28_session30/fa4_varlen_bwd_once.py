# Runs FlashAttention-4's variable-length backward a few times on issue 17's shape (for ncu):
# bf16, hdim 128, 16 heads, the 7 sequences of fa4_bench.py's varlen part. argv: [causal].
import sys, torch
from flash_attn.cute.interface import flash_attn_varlen_func
causal = len(sys.argv) > 1
lens = [1374, 3778, 2225, 3022, 3204, 498, 2283]
cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
q = torch.randn(sum(lens), 16, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
o = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max(lens),
                           max_seqlen_k=max(lens), causal=causal)
o = o[0] if isinstance(o, tuple) else o
g = torch.randn_like(o)
for _ in range(3):
    torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
torch.cuda.synchronize()
