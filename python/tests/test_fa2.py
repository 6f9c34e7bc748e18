"""flash_ladder.fa2, the FlashAttention-2 forward in plain PyTorch, against
torch's scaled_dot_product_attention on the CPU: MHA and GQA, causal with
seqlen_q below, equal to and above seqlen_k (rows that see no key), tiles
that do not divide the lengths, and the LSE against logsumexp."""

import math

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

from flash_ladder.fa2 import fa2_forward, visible_keys  # noqa: E402

from reference import visible  # noqa: E402

F = torch.nn.functional


def sdpa(q, k, v, causal, scale):
    """SDPA in float64 with FlashAttention's bottom-right causal mask written
    out (SDPA's is_causal aligns top-left), GQA by repeating K and V."""
    group = q.shape[2] // k.shape[2]
    Q, K, V = (t.transpose(1, 2).double() for t in (q, k, v))
    K, V = K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)
    mask = visible(q.shape[1], k.shape[1], causal, q.device)
    out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=scale)
    scores = (Q @ K.transpose(-1, -2) * scale).masked_fill(~mask, -math.inf)
    return out.transpose(1, 2), torch.logsumexp(scores, dim=-1)


CASES = [
    # batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, block_m, block_n
    (2, 64, 64, 4, 4, 32, 16, 16),
    (1, 100, 37, 6, 2, 16, 32, 16),  # GQA, tiles that do not divide the lengths
    (2, 37, 100, 4, 1, 8, 16, 32),  # MQA, seqlen_q < seqlen_k
    (1, 1, 50, 2, 2, 16, 64, 64),  # one query row (decode)
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "b{}_sq{}_sk{}_h{}-{}_d{}_tile{}x{}".format(*c))
def test_matches_sdpa(case, causal):
    torch.manual_seed(0)
    b, sq, sk, hq, hkv, d, bm, bn = case
    q, k, v = torch.randn(b, sq, hq, d), torch.randn(b, sk, hkv, d), torch.randn(b, sk, hkv, d)
    scale = 1 / math.sqrt(d)
    out, lse = fa2_forward(q, k, v, causal=causal, block_m=bm, block_n=bn)
    ref_out, ref_lse = sdpa(q, k, v, causal, scale)
    seen = torch.tensor([visible_keys(i, sq, sk, causal) > 0 for i in range(sq)])
    assert out.dtype == q.dtype and out.shape == q.shape and lse.shape == (b, hq, sq)
    torch.testing.assert_close(out[:, seen].double(), ref_out[:, seen], atol=2e-5, rtol=2e-5)
    torch.testing.assert_close(lse[..., seen].double(), ref_lse[..., seen], atol=2e-5, rtol=2e-5)


def test_rows_that_see_no_key():
    # seqlen_q > seqlen_k with the causal mask: the first rows see nothing.
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 10, 2, 8), torch.randn(1, 4, 2, 8), torch.randn(1, 4, 2, 8)
    out, lse = fa2_forward(q, k, v, causal=True, block_m=4, block_n=2)
    blind = [i for i in range(10) if visible_keys(i, 10, 4, True) == 0]
    assert blind == [0, 1, 2, 3, 4, 5]
    assert torch.all(out[:, blind] == 0) and torch.all(lse[..., blind] == -math.inf)
    ref_out, _ = sdpa(q, k, v, True, 1 / math.sqrt(8))
    torch.testing.assert_close(out[:, 6:].double(), ref_out[:, 6:], atol=2e-5, rtol=2e-5)


def test_low_precision_inputs_and_scale():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 48, 4, 32, dtype=torch.bfloat16) for _ in range(3))
    out, _ = fa2_forward(q, k, v, softmax_scale=0.3, block_m=16, block_n=16)
    ref_out, _ = sdpa(q, k, v, False, 0.3)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.double(), ref_out, atol=1e-2, rtol=1e-2)
