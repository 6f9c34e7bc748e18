# Runs cuDNN's SDPA decode (q [B, 32, 1, 128], K/V [B, 8, L, 128], bf16, enable_gqa) a few times,
# for ncu. argv: batch cache
import sys, torch
from torch.nn.attention import SDPBackend, sdpa_kernel
B, L = int(sys.argv[1]), int(sys.argv[2])
q = torch.randn(B, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
k = torch.randn(B, 8, L, 128, device="cuda", dtype=torch.bfloat16); v = torch.randn_like(k)
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(6):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
torch.cuda.synchronize()
