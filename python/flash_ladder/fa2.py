"""FlashAttention-2's forward in plain PyTorch: the ladder's first rung for a
reader who thinks in tensors.

The kernels in kernels/ compute exactly this, tile by tile, in registers and
shared memory. Here each tile is a slice of a tensor:

    for each block of kBlockM query rows (one CTA's work):
        row_max = -inf, row_sum = 0, acc = 0              (the running softmax state)
        for each block of kBlockN keys that the rows can see:
            S = scale * Q_tile K_tile^T                    (kBlockM x kBlockN scores)
            mask the keys a row may not see (causal)
            new_max = max(row_max, rowmax(S))
            P = exp(S - new_max)                           (unnormalised probabilities)
            correction = exp(row_max - new_max)            (rescales what was summed so far)
            row_sum = correction * row_sum + rowsum(P)
            acc     = correction * acc + P V_tile
            row_max = new_max
        O_tile = acc / row_sum,  LSE = row_max + log(row_sum)

No N x N matrix is ever formed: the state per query row is one maximum, one
sum and one output row, which is what makes the algorithm exact and cheap in
memory. It runs on any device and is meant to be read and stepped through,
not to be fast.
"""

import math

import torch


def visible_keys(row, seqlen_q, seqlen_k, causal):
    """The number of keys query `row` sees: all of them, or with the causal
    mask aligned to the bottom-right corner (FlashAttention >= 2.1) those up to
    row + seqlen_k - seqlen_q (clamped to [0, seqlen_k])."""
    if not causal:
        return seqlen_k
    return max(0, min(seqlen_k, row + seqlen_k - seqlen_q + 1))


def fa2_forward(q, k, v, softmax_scale=None, causal=False, block_m=64, block_n=64):
    """Exact attention, one (block_m x block_n) tile at a time.

    q: (batch, seqlen_q, heads_q, head_dim); k, v: (batch, seqlen_k, heads_kv,
    head_dim) with heads_q a multiple of heads_kv (GQA: query head h reads KV
    head h // (heads_q // heads_kv)). Computes in float32 and returns
    (out like q in q's dtype, lse (batch, heads_q, seqlen_q) float32). Rows
    that see no key get out = 0 and lse = -inf.
    """
    batch, seqlen_q, heads_q, head_dim = q.shape
    seqlen_k, heads_kv = k.shape[1], k.shape[2]
    assert heads_q % heads_kv == 0, "heads_q must be a multiple of heads_kv"
    group = heads_q // heads_kv
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(head_dim)

    # (batch, heads, seqlen, head_dim) in float32; each KV head serves `group` query heads.
    gQ = q.transpose(1, 2).float()
    gK = k.transpose(1, 2).float().repeat_interleave(group, dim=1)
    gV = v.transpose(1, 2).float().repeat_interleave(group, dim=1)
    out = torch.zeros_like(gQ)
    lse = torch.empty(batch, heads_q, seqlen_q, dtype=torch.float32, device=q.device)

    for m0 in range(0, seqlen_q, block_m):
        m1 = min(m0 + block_m, seqlen_q)
        rows = torch.arange(m0, m1, device=q.device)
        sQ = gQ[:, :, m0:m1]  # the query tile, kept for the whole key loop
        row_max = torch.full((batch, heads_q, m1 - m0), -math.inf, device=q.device)
        row_sum = torch.zeros(batch, heads_q, m1 - m0, device=q.device)
        acc = torch.zeros(batch, heads_q, m1 - m0, head_dim, device=q.device)

        # The key tiles this block needs: up to what its last row sees.
        n_end = visible_keys(m1 - 1, seqlen_q, seqlen_k, causal)
        for n0 in range(0, n_end, block_n):
            n1 = min(n0 + block_n, seqlen_k)
            sK, sV = gK[:, :, n0:n1], gV[:, :, n0:n1]
            S = scale * (sQ @ sK.transpose(-1, -2))
            if causal:
                cols = torch.arange(n0, n1, device=q.device)
                hidden = cols[None, :] > rows[:, None] + (seqlen_k - seqlen_q)
                S = S.masked_fill(hidden, -math.inf)

            new_max = torch.maximum(row_max, S.amax(dim=-1))
            # A row that has seen no key yet keeps a -inf maximum; subtract 0
            # instead so that exp gives 0 rather than NaN.
            safe_max = torch.where(new_max == -math.inf, torch.zeros_like(new_max), new_max)
            P = torch.exp(S - safe_max[..., None])
            correction = torch.exp(row_max - safe_max)
            row_sum = correction * row_sum + P.sum(dim=-1)
            acc = correction[..., None] * acc + P @ sV
            row_max = new_max

        seen = row_sum > 0
        out[:, :, m0:m1] = torch.where(seen[..., None], acc / row_sum.clamp_min(1e-30)[..., None], 0.0)
        lse[:, :, m0:m1] = torch.where(seen, row_max + torch.log(row_sum.clamp_min(1e-30)), -math.inf)

    return out.transpose(1, 2).to(q.dtype), lse
