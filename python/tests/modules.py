"""A small attention block for the tests and the H200 check: projections
around flash_attn_func, GQA, causal (with an optional sliding window); k and v are strided views of one
projection's output (no copy)."""

import torch

from flash_ladder import flash_attn_func


class Attention(torch.nn.Module):
    def __init__(self, dim, heads, heads_kv, head_dim, window_size=(-1, -1)):
        super().__init__()
        self.window_size = window_size
        self.heads, self.heads_kv, self.head_dim = heads, heads_kv, head_dim
        self.wq = torch.nn.Linear(dim, heads * head_dim)
        self.wkv = torch.nn.Linear(dim, 2 * heads_kv * head_dim)
        self.wo = torch.nn.Linear(heads * head_dim, dim)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim)
        k, v = self.wkv(x).view(b, s, 2, self.heads_kv, self.head_dim).unbind(2)
        return self.wo(flash_attn_func(q, k, v, causal=True, window_size=self.window_size).reshape(b, s, -1))
