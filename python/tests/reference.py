"""Plain attention for the tests: forward and backward written out with the
mask and the score modifiers (softcap, ALiBi, sinks), in any dtype, plus
FlashAttention's error rule. Boring on purpose."""

import math

import torch


def visible(seqlen_q, seqlen_k, causal, device, window_size=(-1, -1)):
    """(seqlen_q, seqlen_k) bool: query i sees key j. FlashAttention's rule,
    aligned to the bottom-right corner: with window_size = (left, right),
    i + seqlen_k - seqlen_q - left <= j <= i + seqlen_k - seqlen_q + right,
    -1 leaving a side unbounded; causal means right = 0."""
    left, right = window_size
    if causal:
        right = 0
    rows = torch.arange(seqlen_q, device=device)[:, None]
    cols = torch.arange(seqlen_k, device=device)[None, :]
    diagonal = rows + (seqlen_k - seqlen_q)
    mask = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if right >= 0:
        mask &= cols <= diagonal + right
    if left >= 0:
        mask &= cols >= diagonal - left
    return mask


def _heads(q, k, v):
    """(batch, heads, seqlen, head_dim) views with K/V repeated over each GQA group."""
    group = q.shape[2] // k.shape[2]
    return (q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, dim=1),
            v.transpose(1, 2).repeat_interleave(group, dim=1))


def _scores(Q, K, scale, seqlen_q, seqlen_k, causal, window_size, softcap, alibi_slopes, acc, lowp):
    """(S, capped): the scores of FlashAttention's order, scale * QK^T, the
    softcap, ALiBi, then the mask (-inf where hidden); and tanh(raw / softcap)
    (None without a softcap), the backward's cap derivative. lowp: QK^T
    rounded to the inputs' dtype first."""
    S = Q @ K.transpose(-1, -2)
    S = S.to(acc) * scale if lowp else S * scale
    capped = None
    if softcap:
        capped = torch.tanh(S / softcap)
        S = softcap * capped
    if alibi_slopes is not None:
        # |i + seqlen_k - seqlen_q - j|: a query's distance to a key, bottom-right aligned.
        rows = torch.arange(seqlen_q, device=Q.device)[:, None] + (seqlen_k - seqlen_q)
        distance = (rows - torch.arange(seqlen_k, device=Q.device)[None, :]).abs().to(S.dtype)
        slopes = alibi_slopes.to(S.dtype)
        slopes = slopes[None, :, None, None] if slopes.dim() == 1 else slopes[:, :, None, None]
        S = S - slopes * distance
    mask = visible(seqlen_q, seqlen_k, causal, Q.device, window_size)
    return S.masked_fill(~mask, -math.inf), capped


def _softmax(S, sinks):
    """(P, lse): the softmax of S whose denominator also holds exp(sinks[h])
    when sinks are given; rows that see no key get P = 0 and lse = the sink
    (-inf without sinks)."""
    if sinks is None:
        lse = torch.logsumexp(S, dim=-1)
    else:
        sink = sinks.to(S.dtype)[None, :, None, None].expand(*S.shape[:-1], 1)
        lse = torch.logsumexp(torch.cat([S, sink], dim=-1), dim=-1)
    P = torch.exp(S - torch.where(torch.isinf(lse), 0.0, lse)[..., None])
    return P.masked_fill(torch.isinf(S), 0.0), lse


def attention(q, k, v, softmax_scale=None, causal=False, dtype=torch.float64, lowp=False, window_size=(-1, -1),
              softcap=0.0, alibi_slopes=None, sinks=None):
    """(out (batch, seqlen_q, heads_q, head_dim), lse (batch, heads_q, seqlen_q)).

    With lowp=False everything is computed in `dtype` (float64: the exact
    reference). With lowp=True the math is that of a kernel in the inputs'
    own dtype: S = QK^T rounded to it, the softmax in float32, P rounded to
    it, O = PV rounded to it (FlashAttention's `upcast=False` reference).
    window_size: FlashAttention's (left, right), applied as a mask (visible()).
    softcap, alibi_slopes ((heads_q,) or (batch, heads_q)) and sinks
    ((heads_q,)): the score modifiers, by FlashAttention's definitions.
    Rows that see no key get out = 0 and lse = -inf (the sink with sinks)."""
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    work = q.dtype if lowp else dtype
    acc = torch.float32 if lowp else dtype
    Q, K, V = (t.to(work) for t in _heads(q, k, v))
    S, _ = _scores(Q, K, scale, q.shape[1], k.shape[1], causal, window_size, softcap, alibi_slopes, acc, lowp)
    P, lse = _softmax(S, sinks)
    O = P.to(work) @ V
    out_dtype = q.dtype if lowp else dtype
    return O.transpose(1, 2).to(out_dtype), lse.float() if lowp else lse


def attention_backward(dout, q, k, v, softmax_scale=None, causal=False, dtype=torch.float64, lowp=False,
                       window_size=(-1, -1), softcap=0.0, alibi_slopes=None, sinks=None):
    """(dq, dk, dv, dsinks) of attention(q, k, v), written out: P from the
    scores, dV = P^T dO, dP = dO V^T, D = rowsum(dO * O), dS = P * (dP - D)
    (times the softcap's derivative 1 - tanh^2), dQ = scale dS K, dK = scale
    dS^T Q, with dK and dV summed over each GQA group; dsinks[h] = -sum over
    the batch and the rows of exp(sinks[h] - lse) * D (None without sinks).
    lowp as in attention(): the matmuls' inputs rounded to the inputs' dtype;
    the other arguments as in attention()."""
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    work = q.dtype if lowp else dtype
    group = q.shape[2] // k.shape[2]
    Q, K, V = (t.to(work) for t in _heads(q, k, v))
    dO = dout.transpose(1, 2).to(work)
    acc = torch.float32 if lowp else dtype  # what a kernel accumulates in
    S, capped = _scores(Q, K, scale, q.shape[1], k.shape[1], causal, window_size, softcap, alibi_slopes, acc, True)
    P, lse = _softmax(S, sinks)
    O = P.to(work) @ V
    dV = P.to(work).transpose(-1, -2) @ dO
    dP = (dO @ V.transpose(-1, -2)).to(acc)
    D = (dO.to(acc) * O.to(acc)).sum(dim=-1, keepdim=True)
    dS = P * (dP - D)
    if capped is not None:
        dS = dS * (1 - capped * capped)
    dQ = (dS.to(work) @ K) * scale
    dK = (dS.to(work).transpose(-1, -2) @ Q) * scale
    dsinks = None
    if sinks is not None:
        dsinks = -(torch.exp(sinks.to(acc)[None, :, None] - lse) * D[..., 0]).sum(dim=(0, 2))

    def per_kv_head(g):  # (batch, heads_q, seqlen_k, d) -> (batch, seqlen_k, heads_kv, d)
        b, h, s, d = g.shape
        return g.to(acc).reshape(b, h // group, group, s, d).sum(dim=2).transpose(1, 2)

    out_dtype = q.dtype if lowp else dtype
    return (dQ.transpose(1, 2).to(out_dtype), per_kv_head(dK).to(out_dtype), per_kv_head(dV).to(out_dtype),
            None if dsinks is None else dsinks.float() if lowp else dsinks)


# FlashAttention's rule, as src/testing/testing.cpp applies it: the error of
# a result against the exact reference may be `factor` times the error of
# the same math done in the input dtype, plus a rounding floor relative to
# the reference's magnitude.
ROUNDING_FLOOR = {torch.float32: 2.0**-20, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def error_bound(exact, lowp, dtype, factor, absolute=0.0):
    lowp_err = (lowp.double() - exact.double()).abs().max().item()
    return factor * lowp_err + ROUNDING_FLOOR[dtype] * exact.double().abs().max().item() + absolute


def max_error(got, exact):
    return (got.double() - exact.double()).abs().max().item()
