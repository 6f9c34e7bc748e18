"""Stand-ins for the library's calls (forward, variable-length forward,
backward, decode), in plain PyTorch, with the same
signatures and output layouts as flash_ladder.interface's _forward, _backward
and _decode, the score modifiers (softcap, ALiBi, sinks and the sinks'
gradient) included. With them patched in, everything above the library
(autograd, the custom ops, their fake implementations, torch.compile) runs on
the CPU."""

import math

import torch

from flash_ladder import interface

import reference


def forward(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, with_lse):
    calls.append(("forward", causal, window_left, window_right))
    scores.append(("forward", softcap, alibi_slopes, sinks))
    out, lse = reference.attention(q, k, v, softmax_scale, causal, dtype=torch.float32,
                                   window_size=(window_left, window_right), softcap=softcap,
                                   alibi_slopes=alibi_slopes, sinks=sinks)
    o = interface._out_like(q)
    o.copy_(out)
    if not with_lse:
        return o, None
    lse_out = interface._lse_for(q)
    lse_out.copy_(lse)
    return o, lse_out


def forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                   window_left, window_right, softcap, alibi_slopes, sinks, with_lse, sync_check, page_table=None):
    """The library's variable-length forward: each packed sequence through
    the reference on its own (batch 1), its first seqused_k[b] keys (with a
    page table, those keys gathered from the pages)."""
    calls.append(("forward_varlen", causal, window_left, window_right))
    scores.append(("forward_varlen", softcap, alibi_slopes, sinks))
    paged.append(page_table is not None)
    o, lse = interface._out_like(q), interface._varlen_lse_for(q)
    for b in range(cu_seqlens_q.shape[0] - 1):
        q0, q1 = int(cu_seqlens_q[b]), int(cu_seqlens_q[b + 1])
        if page_table is not None:
            keys = torch.arange(int(seqused_k[b]))
            pages, rows = page_table[b, keys // k.shape[1]].long(), keys % k.shape[1]
            kb, vb = k[pages, rows], v[pages, rows]
        else:
            k0, k1 = int(cu_seqlens_k[b]), int(cu_seqlens_k[b + 1])
            if seqused_k is not None:
                k1 = k0 + int(seqused_k[b])
            kb, vb = k[k0:k1], v[k0:k1]
        assert q1 - q0 <= max_seqlen_q and kb.shape[0] <= max_seqlen_k
        slopes = alibi_slopes[b : b + 1] if alibi_slopes is not None and alibi_slopes.dim() == 2 else alibi_slopes
        out, row_lse = reference.attention(q[None, q0:q1], kb[None], vb[None], softmax_scale, causal,
                                           dtype=torch.float32, window_size=(window_left, window_right),
                                           softcap=softcap, alibi_slopes=slopes, sinks=sinks)
        o[q0:q1] = out[0]
        lse[:, q0:q1] = row_lse[0]
    return o, (lse if with_lse else None)


def backward(dout, q, k, v, o, lse, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks,
             deterministic):
    calls.append(("backward", causal, window_left, window_right))
    scores.append(("backward", softcap, alibi_slopes, sinks))
    *grads, dsinks = reference.attention_backward(dout, q, k, v, softmax_scale, causal, dtype=torch.float32,
                                                  window_size=(window_left, window_right), softcap=softcap,
                                                  alibi_slopes=alibi_slopes, sinks=sinks)
    outs = (interface._out_like(q), interface._out_like(k), interface._out_like(v))
    for out, g in zip(outs, grads):
        out.copy_(g)
    if sinks is not None:  # the library's dsinks: float32, shaped like sinks, a tensor of its own
        dsinks = torch.empty(sinks.shape, dtype=torch.float32, device=sinks.device).copy_(dsinks)
    return (*outs, dsinks)


def decode(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal, window_left, window_right,
           softcap, alibi_slopes, sinks, num_splits, with_lse, sync_check):
    calls.append(("decode", causal, window_left, window_right))
    scores.append(("decode", softcap, alibi_slopes, sinks))
    batch, seqlen_q, heads_q, head_dim = q.shape
    o, lse = interface._out_like(q), interface._lse_for(q)
    page_size = k_cache.shape[1]
    for b in range(batch):
        start = int(cache_seqlens[b])
        new = 0 if k is None else k.shape[1]

        def slot(pos):  # (page or sequence, row) of key `pos` of sequence b
            if page_table is None:
                return b, pos
            return int(page_table[b, pos // page_size]), pos % page_size

        for i in range(new):  # the append
            p, r = slot(start + i)
            k_cache[p, r] = k[b, i]
            v_cache[p, r] = v[b, i]
        length = start + new
        keys = torch.stack([k_cache[slot(j)] for j in range(length)]) if length else k_cache[0, :0]
        values = torch.stack([v_cache[slot(j)] for j in range(length)]) if length else v_cache[0, :0]
        slopes = alibi_slopes[b : b + 1] if alibi_slopes is not None and alibi_slopes.dim() == 2 else alibi_slopes
        out, row_lse = reference.attention(q[b : b + 1], keys[None], values[None], softmax_scale, causal,
                                           dtype=torch.float32, window_size=(window_left, window_right),
                                           softcap=softcap, alibi_slopes=slopes, sinks=sinks)
        o[b] = out[0]
        lse[b] = row_lse[0]
    return o, (lse if with_lse else None)


# (call, causal, window_left, window_right) of every stand-in call since install():
# what reached the library's level, for the tests that check the window arrives.
calls = []
# (call, softcap, alibi_slopes, sinks) of the same calls: the score modifiers as they arrived.
scores = []
# Whether each forward_varlen call since install() came with a page table.
paged = []


def install(monkeypatch):
    calls.clear()
    scores.clear()
    paged.clear()
    monkeypatch.setattr(interface, "_forward", forward)
    monkeypatch.setattr(interface, "_forward_varlen", forward_varlen)
    monkeypatch.setattr(interface, "_backward", backward)
    monkeypatch.setattr(interface, "_decode", decode)


def default_scale(head_dim):
    return 1.0 / math.sqrt(head_dim)
