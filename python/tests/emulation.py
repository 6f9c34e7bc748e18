"""Stand-ins for the library's calls (forward, backward, their
variable-length forms, decode), in plain PyTorch, with the same signatures and
output layouts as flash_ladder.interface's _forward, _backward,
_forward_varlen, _backward_varlen and _decode, the score modifiers (softcap,
ALiBi, sinks and the sinks' gradient) included. With them patched in,
everything above the library (autograd, the custom ops, their fake
implementations, torch.compile) runs on the CPU. They compute in float32, or
in float64 for float64 inputs (torch.autograd.gradcheck)."""

import math

import torch

from flash_ladder import interface

import reference


def _acc(q):
    """The stand-ins' working dtype: float64 for float64 inputs, else float32."""
    return torch.float64 if q.dtype == torch.float64 else torch.float32


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
                                           dtype=_acc(q), window_size=(window_left, window_right),
                                           softcap=softcap, alibi_slopes=slopes, sinks=sinks)
        o[q0:q1] = out[0]
        lse[:, q0:q1] = row_lse[0]
    return o, (lse if with_lse else None)


def backward_varlen(dout, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                    softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, deterministic,
                    sync_check):
    """The library's variable-length backward: each sequence's gradients from
    the reference backward of that sequence alone, over its first
    seqused_k[b] keys; dk = dv = 0 on the key rows past them (as the
    library writes); dsinks summed over the sequences. o and lse must be the
    packed forward's (their shapes are checked; the reference recomputes)."""
    calls.append(("backward_varlen", causal, window_left, window_right))
    scores.append(("backward_varlen", softcap, alibi_slopes, sinks))
    saved.append({"o": o, "lse": lse, "deterministic": deterministic, "sync_check": sync_check})
    assert o.shape == q.shape and lse.shape == (q.shape[1], q.shape[0]) and lse.dtype == torch.float32
    assert dout.shape == q.shape and dout.stride(-1) == 1
    dq, dk, dv = interface._out_like(q), interface._out_like(k), interface._out_like(v)
    dsinks = None if sinks is None else torch.zeros(sinks.shape, dtype=_acc(q))
    for b in range(cu_seqlens_q.shape[0] - 1):
        q0, q1 = int(cu_seqlens_q[b]), int(cu_seqlens_q[b + 1])
        k0, k1 = int(cu_seqlens_k[b]), int(cu_seqlens_k[b + 1])
        used = k1 if seqused_k is None else k0 + int(seqused_k[b])
        assert q1 - q0 <= max_seqlen_q and used - k0 <= max_seqlen_k
        slopes = alibi_slopes[b : b + 1] if alibi_slopes is not None and alibi_slopes.dim() == 2 else alibi_slopes
        *grads, ds = reference.attention_backward(dout[None, q0:q1], q[None, q0:q1], k[None, k0:used],
                                                  v[None, k0:used], softmax_scale, causal, dtype=_acc(q),
                                                  window_size=(window_left, window_right), softcap=softcap,
                                                  alibi_slopes=slopes, sinks=sinks)
        dq[q0:q1], dk[k0:used], dv[k0:used] = grads[0][0], grads[1][0], grads[2][0]
        dk[used:k1], dv[used:k1] = 0, 0
        if sinks is not None:
            dsinks += ds
    if sinks is not None:  # the library's dsinks: shaped like sinks, in its dtype (float32)
        dsinks = dsinks.to(sinks.dtype)
    return dq, dk, dv, dsinks


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
# What each backward_varlen call since install() was given: the saved o and
# lse, deterministic, sync_check.
saved = []


def install(monkeypatch):
    calls.clear()
    scores.clear()
    paged.clear()
    saved.clear()
    monkeypatch.setattr(interface, "_forward", forward)
    monkeypatch.setattr(interface, "_forward_varlen", forward_varlen)
    monkeypatch.setattr(interface, "_backward", backward)
    monkeypatch.setattr(interface, "_backward_varlen", backward_varlen)
    monkeypatch.setattr(interface, "_decode", decode)


def default_scale(head_dim):
    return 1.0 / math.sqrt(head_dim)
