"""Small attention blocks for the tests and the H200 check: projections
around flash_attn_func (Attention) and flash_attn_varlen_func over packed
sequences (VarlenAttention), GQA, causal (with an optional sliding window,
softcap and learnable sinks); k and v are strided views of one projection's
output (no copy)."""

import torch

from flash_ladder import flash_attn_func, flash_attn_varlen_func


class Attention(torch.nn.Module):
    def __init__(self, dim, heads, heads_kv, head_dim, window_size=(-1, -1), softcap=0.0, learnable_sink=False):
        super().__init__()
        self.window_size, self.softcap = window_size, softcap
        self.heads, self.heads_kv, self.head_dim = heads, heads_kv, head_dim
        self.wq = torch.nn.Linear(dim, heads * head_dim)
        self.wkv = torch.nn.Linear(dim, 2 * heads_kv * head_dim)
        self.wo = torch.nn.Linear(heads * head_dim, dim)
        # gpt-oss's sinks: one logit per query head, learned with the rest.
        self.sinks = torch.nn.Parameter(torch.randn(heads)) if learnable_sink else None

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim)
        k, v = self.wkv(x).view(b, s, 2, self.heads_kv, self.head_dim).unbind(2)
        out = flash_attn_func(q, k, v, causal=True, window_size=self.window_size, softcap=self.softcap,
                              learnable_sink=self.sinks)
        return self.wo(out.reshape(b, s, -1))


class VarlenAttention(torch.nn.Module):
    """Attention's block over a batch of sequences packed without padding:
    x (total, dim), cu_seqlens (batch + 1,) int32, self-attention in each
    sequence (the same offsets for queries and keys)."""

    def __init__(self, dim, heads, heads_kv, head_dim, window_size=(-1, -1), softcap=0.0, learnable_sink=False):
        super().__init__()
        self.window_size, self.softcap = window_size, softcap
        self.heads, self.heads_kv, self.head_dim = heads, heads_kv, head_dim
        self.wq = torch.nn.Linear(dim, heads * head_dim)
        self.wkv = torch.nn.Linear(dim, 2 * heads_kv * head_dim)
        self.wo = torch.nn.Linear(heads * head_dim, dim)
        self.sinks = torch.nn.Parameter(torch.randn(heads)) if learnable_sink else None

    def forward(self, x, cu_seqlens, max_seqlen):
        t = x.shape[0]
        q = self.wq(x).view(t, self.heads, self.head_dim)
        k, v = self.wkv(x).view(t, 2, self.heads_kv, self.head_dim).unbind(1)
        out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, causal=True,
                                     window_size=self.window_size, softcap=self.softcap, learnable_sink=self.sinks)
        return self.wo(out.reshape(t, -1))
