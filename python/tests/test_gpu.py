"""The package on a GPU: forward, backward and decode against a float64
reference by FlashAttention's rule (the error may be 2x, for gradients 3x, that
of the same math in the input dtype, plus a rounding floor), GQA/MQA, causal,
unequal lengths, sliding windows (window_size), the score modifiers (softcap,
alibi_slopes, learnable_sink and its gradient), strided views, autograd against SDPA's gradients,
torch.compile(fullgraph=True), CUDA graphs and streams; variable-length
batches (flash_attn_varlen_func) forward and backward, each sequence against
the reference of that sequence alone.

Marked gpu: skipped, saying why, without a CUDA device (conftest.py)."""

import math

import pytest

torch = pytest.importorskip("torch", reason="no CUDA device to test with: torch is not installed")

import flash_ladder  # noqa: E402
from flash_ladder import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache, interface  # noqa: E402

import reference  # noqa: E402
from modules import Attention, VarlenAttention  # noqa: E402
from reference import error_bound, max_error  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = [torch.float16, torch.bfloat16]
SHAPES = [
    # batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim
    (2, 128, 128, 4, 4, 64),
    (1, 113, 203, 8, 2, 128),  # GQA, seqlen_q < seqlen_k
    (2, 257, 129, 6, 1, 64),  # MQA, seqlen_q > seqlen_k: causal rows that see no key
    (1, 1024, 1024, 4, 4, 128),
    (1, 64, 300, 2, 2, 256),
]
LSE_FLOOR = 2.0**-16  # relative to max(1, max|lse|), as src/testing/testing.cpp


def lse_bound(exact_lse, lowp_lse, seen, softcap=0.0):
    """The LSE's bound, as src/testing/testing.cpp: 2^-16 of max(1, max|lse|),
    plus, with a softcap (the kernels take tanh from tanh.approx.f32), twice
    the error of the same math in the input dtype."""
    bound = LSE_FLOOR * max(1.0, exact_lse[seen].abs().max().item() if seen.any() else 1.0)
    if softcap and seen.any():
        bound += 2 * max_error(lowp_lse[seen], exact_lse[seen])
    return bound


def shape_id(s):
    return "b{}_sq{}_sk{}_h{}-{}_d{}".format(*s)


def dtype_id(d):
    return str(d).replace("torch.", "")


def make(shape, dtype, requires_grad=False, seed=0):
    b, sq, sk, hq, hkv, d = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(b, s, h, d, device="cuda", dtype=dtype, generator=g).requires_grad_(requires_grad)
            for s, h in ((sq, hq), (sk, hkv), (sk, hkv))]


def check_forward(out, lse, q, k, v, causal, softmax_scale=None, window_size=(-1, -1), **scores):
    """scores: the reference's softcap, alibi_slopes and sinks. With sinks
    every LSE is finite (a row that sees no key has the sink's) and compared."""
    exact, exact_lse = reference.attention(q, k, v, softmax_scale, causal, window_size=window_size, **scores)
    lowp, lowp_lse = reference.attention(q, k, v, softmax_scale, causal, lowp=True, window_size=window_size,
                                         **scores)
    err, bound = max_error(out, exact), error_bound(exact, lowp, q.dtype, 2)
    assert err <= bound, f"max |out - ref| = {err:.3g} > bound {bound:.3g}"
    if lse is not None:
        seen = torch.isfinite(exact_lse)
        assert torch.all(lse[~seen] == -math.inf), "rows that see no key must have lse = -inf"
        lse_err = max_error(lse[seen], exact_lse[seen])
        bound = lse_bound(exact_lse, lowp_lse, seen, scores.get("softcap", 0.0))
        assert lse_err <= bound, f"max |lse - ref| = {lse_err:.3g} > {bound:.3g}"


# ------------------------------------------------------------------- forward


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_forward(shape, dtype, causal):
    q, k, v = make(shape, dtype)
    out, lse = flash_attn_func(q, k, v, causal=causal, return_lse=True)
    assert out.shape == q.shape and out.dtype == dtype and lse.shape == (q.shape[0], q.shape[2], q.shape[1])
    check_forward(out, lse, q, k, v, causal)
    check_forward(flash_attn_func(q, k, v, causal=causal), None, q, k, v, causal)  # no LSE: maybe another variant


def test_forward_softmax_scale_and_float32():
    q, k, v = make((2, 77, 91, 4, 2, 64), torch.bfloat16)
    check_forward(flash_attn_func(q, k, v, softmax_scale=0.3), None, q, k, v, False, 0.3)
    # float32 runs on the CUDA-core rungs; its "same math in the input dtype"
    # is nearly exact, so a plain tolerance instead of the 2x rule.
    q, k, v = make((1, 65, 80, 2, 1, 64), torch.float32)
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True)
    exact, exact_lse = reference.attention(q, k, v, causal=True)
    assert max_error(out, exact) <= 2e-5 and max_error(lse, exact_lse) <= 2e-5


def test_forward_empty():
    q, k, v = make((2, 16, 0, 4, 2, 64), torch.float16)
    out, lse = flash_attn_func(q, k, v, return_lse=True)
    assert torch.all(out == 0) and torch.all(lse == -math.inf)
    q, k, v = make((0, 16, 16, 4, 2, 64), torch.float16)
    assert flash_attn_func(q, k, v).shape == q.shape


def test_plan_forward_names_a_kernel():
    q, k, v = make((1, 256, 256, 8, 8, 128), torch.bfloat16)
    plan = flash_ladder.plan_forward(q, k, v, causal=True)
    assert plan["kernel"] and plan["workspace_bytes"] >= 0


# -------------------------------------------------------------- strided views


def test_strided_views_need_no_copy():
    # (batch, heads, seqlen, head_dim) memory seen as (batch, seqlen, heads, head_dim)
    b, s, h, d = 2, 200, 4, 64
    qh, kh, vh = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    q, k, v = qh.transpose(1, 2), kh.transpose(1, 2), vh.transpose(1, 2)
    out = flash_attn_func(q, k, v, causal=True)
    assert out.stride() == q.stride(), "the output follows the input's layout"
    check_forward(out, None, q, k, v, True)

    # q, k and v as interleaved parts of one packed (batch, seqlen, 3, heads, head_dim) buffer
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.float16)
    q, k, v = qkv.unbind(2)
    check_forward(flash_attn_func(q, k, v), None, q, k, v, False)

    # a strided last dimension is copied first (the library needs stride 1 there)
    q = torch.randn(b, s, h, 2 * d, device="cuda", dtype=torch.float16)[..., ::2]
    k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.float16) for _ in range(2))
    check_forward(flash_attn_func(q, k, v), None, q, k, v, False)


# ------------------------------------------------------------------ backward


def check_gradients(grads, q, k, v, dout, causal, factor=3, window_size=(-1, -1), **scores):
    """grads: (dq, dk, dv), and dsinks (float32) when scores has sinks."""
    exact = reference.attention_backward(dout, q, k, v, causal=causal, window_size=window_size, **scores)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    if scores.get("sinks") is not None:  # the sinks' lowp gradient comes from autograd too
        scores = dict(scores, sinks=scores["sinks"].detach().clone().requires_grad_())
        leaves.append(scores["sinks"])
    lowp_out, _ = reference.attention(*leaves[:3], causal=causal, lowp=True, window_size=window_size, **scores)
    lowp = torch.autograd.grad(lowp_out, leaves, dout)
    for name, g, e, lo in zip(("dq", "dk", "dv", "dsinks"), grads, exact, lowp):
        assert g.shape == e.shape and g.dtype == (q.dtype if name != "dsinks" else torch.float32)
        err, bound = max_error(g, e), error_bound(e, lo, q.dtype, factor, absolute=2.0**-16)
        assert err <= bound, f"{name}: max |g - ref| = {err:.3g} > bound {bound:.3g}"


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES[:4], ids=shape_id)
def test_backward(shape, dtype, causal):
    q, k, v = make(shape, dtype, requires_grad=True)
    out = flash_attn_func(q, k, v, causal=causal)
    dout = torch.randn_like(out)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    check_gradients(grads, q.detach(), k.detach(), v.detach(), dout, causal)


# ------------------------------------------------------------ sliding window

WINDOW_SHAPES = [
    (2, 256, 256, 4, 4, 64),
    (1, 113, 203, 8, 2, 128),  # GQA, seqlen_q < seqlen_k
    (2, 257, 129, 6, 1, 64),  # MQA, seqlen_q > seqlen_k: rows above the keys see none
]
WINDOWS = [
    # causal, window_size as given (causal: the right side becomes 0)
    (True, (0, 0)),  # the diagonal only
    (True, (1, 1)),
    (True, (127, 127)),
    (True, (100000, -1)),  # larger than the keys: causal again
    (False, (32, -1)),  # left only
    (False, (-1, 16)),  # right only
    (False, (48, 7)),  # both sides
    (False, (0, 0)),
]


def window_id(w):
    causal, (left, right) = w
    return f"{'causal_' if causal else ''}{left}_{right}"


@pytest.mark.parametrize("window", WINDOWS, ids=window_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", WINDOW_SHAPES, ids=shape_id)
def test_forward_window(shape, dtype, window):
    causal, window_size = window
    q, k, v = make(shape, dtype)
    out, lse = flash_attn_func(q, k, v, causal=causal, window_size=window_size, return_lse=True)
    check_forward(out, lse, q, k, v, causal, window_size=window_size)
    out = flash_attn_func(q, k, v, causal=causal, window_size=window_size)
    check_forward(out, None, q, k, v, causal, window_size=window_size)


@pytest.mark.parametrize("window", WINDOWS, ids=window_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", WINDOW_SHAPES, ids=shape_id)
def test_backward_window(shape, dtype, window):
    causal, window_size = window
    q, k, v = make(shape, dtype, requires_grad=True)
    out = flash_attn_func(q, k, v, causal=causal, window_size=window_size)
    dout = torch.randn_like(out)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    check_gradients(grads, q.detach(), k.detach(), v.detach(), dout, causal, window_size=window_size)


def test_window_larger_than_the_keys_is_no_window():
    q, k, v = make((1, 128, 192, 4, 2, 64), torch.bfloat16)
    torch.testing.assert_close(flash_attn_func(q, k, v, causal=True, window_size=(10**6, 10**6)),
                               flash_attn_func(q, k, v, causal=True), atol=0, rtol=0)


# ----------------------------------------------------------- score modifiers


def alibi_slopes(heads):
    """ALiBi's slopes (Press et al.): 2^(-8 i / heads), i = 1..heads."""
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)], device="cuda")


def make_scores(case, batch, heads, seed=4):
    """The reference's softcap / alibi_slopes / sinks for a named case (sinks
    ~ N(0, 2^2): some below the scores, some above, so that they matter)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    sinks = torch.randn(heads, device="cuda", generator=g) * 2
    per_batch = alibi_slopes(heads) * (0.5 + torch.rand(batch, 1, device="cuda", generator=g))
    return {
        "softcap": {"softcap": 2.0},  # strong: scores of randn inputs are ~N(0, 1)
        "alibi": {"alibi_slopes": alibi_slopes(heads)},
        "alibi_batch": {"alibi_slopes": per_batch},
        "sinks": {"sinks": sinks},
        "all": {"softcap": 30.0, "alibi_slopes": per_batch, "sinks": sinks},
    }[case]


def flash_scores(scores):
    """flash_attn_func's names for the reference's: learnable_sink is sinks."""
    return {("learnable_sink" if n == "sinks" else n): t for n, t in scores.items()}


SCORE_CASES = ["softcap", "alibi", "alibi_batch", "sinks", "all"]
SCORE_MASKS = [(False, (-1, -1)), (True, (-1, -1)), (True, (64, 64))]


@pytest.mark.parametrize("mask", SCORE_MASKS, ids=window_id)
@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", WINDOW_SHAPES, ids=shape_id)
def test_forward_score_modifiers(shape, dtype, case, mask):
    causal, window_size = mask
    q, k, v = make(shape, dtype)
    scores = make_scores(case, shape[0], shape[3])
    out, lse = flash_attn_func(q, k, v, causal=causal, window_size=window_size, return_lse=True,
                               **flash_scores(scores))
    check_forward(out, lse, q, k, v, causal, window_size=window_size, **scores)
    out = flash_attn_func(q, k, v, causal=causal, window_size=window_size, **flash_scores(scores))
    check_forward(out, None, q, k, v, causal, window_size=window_size, **scores)


def test_forward_score_modifiers_float32():
    # The CUDA-core rungs: nearly exact, so a plain tolerance.
    q, k, v = make((2, 65, 80, 4, 2, 64), torch.float32)
    scores = make_scores("all", 2, 4)
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True, **flash_scores(scores))
    exact, exact_lse = reference.attention(q, k, v, causal=True, **scores)
    assert max_error(out, exact) <= 2e-5 and max_error(lse, exact_lse) <= 2e-5


def test_rows_without_keys_have_the_sink_as_lse():
    # MQA, seqlen_q > seqlen_k, causal: the first 128 queries see no key.
    q, k, v = make((2, 257, 129, 6, 1, 64), torch.bfloat16)
    sinks = torch.linspace(-3, 3, 6, device="cuda")
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True, learnable_sink=sinks)
    assert torch.all(out[:, :128] == 0)
    assert torch.equal(lse[..., :128], sinks[None, :, None].expand(2, 6, 128))


@pytest.mark.parametrize("mask", SCORE_MASKS, ids=window_id)
@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", WINDOW_SHAPES, ids=shape_id)
def test_backward_score_modifiers(shape, dtype, case, mask):
    causal, window_size = mask
    q, k, v = make(shape, dtype, requires_grad=True)
    scores = make_scores(case, shape[0], shape[3])
    sinks = scores.get("sinks")
    learnable = dict(flash_scores(scores))
    if sinks is not None:
        learnable["learnable_sink"] = sinks.clone().requires_grad_()
    out = flash_attn_func(q, k, v, causal=causal, window_size=window_size, **learnable)
    dout = torch.randn_like(out)
    leaves = (q, k, v) + ((learnable["learnable_sink"],) if sinks is not None else ())
    grads = torch.autograd.grad(out, leaves, dout)
    check_gradients(grads, q.detach(), k.detach(), v.detach(), dout, causal, window_size=window_size, **scores)


def test_learnable_sink_gradient_in_bfloat16_and_deterministic():
    # A bf16 parameter (gpt-oss's sinks in a bf16 model): cast for the
    # library, its gradient back in bf16; deterministic: bit-identical dsinks too.
    q, k, v = make((2, 300, 300, 8, 2, 128), torch.bfloat16, requires_grad=True)
    sinks = (torch.randn(8, device="cuda") * 2).bfloat16().requires_grad_()
    dout = torch.randn(q.shape, device="cuda", dtype=q.dtype)
    runs = []
    for _ in range(2):
        out = flash_attn_func(q, k, v, causal=True, deterministic=True, softcap=30.0, learnable_sink=sinks)
        runs.append(torch.autograd.grad(out, (q, k, v, sinks), dout))
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    dq, dk, dv, dsinks = runs[0]
    assert dsinks.dtype == torch.bfloat16  # the bf16 floor of the rule covers its rounding
    check_gradients((dq, dk, dv, dsinks.float()), q.detach(), k.detach(), v.detach(), dout, True, softcap=30.0,
                    sinks=sinks.detach().float())


def test_backward_deterministic_is_bit_identical():
    q, k, v = make((2, 300, 300, 8, 2, 128), torch.bfloat16, requires_grad=True)
    dout = torch.randn(q.shape, device="cuda", dtype=q.dtype)
    runs = []
    for _ in range(2):
        out = flash_attn_func(q, k, v, causal=True, deterministic=True)
        runs.append(torch.autograd.grad(out, (q, k, v), dout))
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    check_gradients(runs[0], q.detach(), k.detach(), v.detach(), dout, True)


def test_backward_through_strided_views_and_expanded_grad():
    b, s, h, d = 2, 150, 4, 64
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    q, k, v = qkv.unbind(2)
    out = flash_attn_func(q, k, v, causal=True)
    out.sum().backward()  # dO is a stride-0 expanded tensor: copied before the library sees it
    dout = torch.ones_like(out)
    expected = torch.stack(reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), causal=True)[:3], 2)
    lowp_leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    lowp = torch.stack(torch.autograd.grad(reference.attention(*lowp_leaves, causal=True, lowp=True)[0],
                                           lowp_leaves, dout), 2)
    bound = error_bound(expected, lowp, torch.bfloat16, 3, absolute=2.0**-16)
    assert max_error(qkv.grad, expected) <= bound


def sdpa(q, k, v, causal):
    """SDPA on (batch, seqlen, heads, head_dim), GQA by repeating K and V."""
    group = q.shape[2] // k.shape[2]
    Q = q.transpose(1, 2)
    K, V = (t.transpose(1, 2).repeat_interleave(group, dim=1) for t in (k, v))
    return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal).transpose(1, 2)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(2, 512, 512, 8, 8, 64), (1, 1024, 1024, 16, 4, 128)], ids=shape_id)
def test_autograd_against_sdpa(shape, dtype, causal):
    # seqlen_q == seqlen_k, so SDPA's top-left causal mask is the same mask.
    q, k, v = make(shape, dtype, requires_grad=True, seed=1)
    dout = torch.randn(q.shape, device="cuda", dtype=dtype)
    out = flash_attn_func(q, k, v, causal=causal)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    ref_out = sdpa(q, k, v, causal)
    ref_grads = torch.autograd.grad(ref_out, (q, k, v), dout)
    exact_out, _ = reference.attention(q.detach(), k.detach(), v.detach(), causal=causal)
    exact = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), causal=causal)
    floor = reference.ROUNDING_FLOOR[dtype]
    assert max_error(out, exact_out) <= 2 * max_error(ref_out, exact_out) + floor * exact_out.abs().max().item()
    for name, g, r, e in zip(("dq", "dk", "dv"), grads, ref_grads, exact):
        err, sdpa_err = max_error(g, e), max_error(r, e)
        bound = 3 * sdpa_err + floor * e.abs().max().item() + 2.0**-16
        assert err <= bound, f"{name}: flash {err:.3g}, SDPA {sdpa_err:.3g} (bound {bound:.3g})"


# -------------------------------------------------------------------- decode


def decode_reference(q, k_cache, v_cache, lens, page_table, causal, window_size=(-1, -1), **scores):
    """(exact, lowp) outputs and the exact LSE, one sequence at a time over its
    cache_seqlens[b] (+ appended) keys; the caches already hold the append.
    scores: the reference's softcap, alibi_slopes ((batch, heads_q): each
    sequence its row) and sinks. decode_reference.lowp_lse: the lowp LSE of
    the last call."""
    page_size = k_cache.shape[1]
    exact, lowp, lse, lowp_lse = torch.empty_like(q, dtype=torch.float64), torch.empty_like(q), [], []
    for b in range(q.shape[0]):
        length = int(lens[b])
        if page_table is None:
            keys, values = k_cache[b, :length], v_cache[b, :length]
        else:
            pages = page_table[b, : (length + page_size - 1) // page_size].long()
            keys = k_cache[pages].flatten(0, 1)[:length]
            values = v_cache[pages].flatten(0, 1)[:length]
        row = dict(scores)
        if row.get("alibi_slopes") is not None and row["alibi_slopes"].dim() == 2:
            row["alibi_slopes"] = row["alibi_slopes"][b : b + 1]
        e, l = reference.attention(q[b : b + 1], keys[None], values[None], causal=causal, window_size=window_size,
                                   **row)
        lo, ll = reference.attention(q[b : b + 1], keys[None], values[None], causal=causal, lowp=True,
                                     window_size=window_size, **row)
        exact[b], lowp[b] = e[0], lo[0]
        lse.append(l[0])
        lowp_lse.append(ll[0].double())
    decode_reference.lowp_lse = torch.stack(lowp_lse)
    return exact, lowp, torch.stack(lse)


DECODE_CASES = [
    # batch, seqlen_q, heads_q, heads_kv, head_dim, page_size (0: contiguous), appended tokens
    (4, 1, 8, 2, 128, 0, 1),
    (3, 4, 8, 8, 64, 16, 4),  # a speculative step of four tokens
    (2, 1, 16, 2, 128, 256, 0),
    (5, 2, 4, 1, 256, 0, 2),
]


@pytest.mark.parametrize("num_splits", [0, 1, 3])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("case", DECODE_CASES, ids=lambda c: "b{}_sq{}_h{}-{}_d{}_page{}_new{}".format(*c))
def test_decode(case, dtype, causal, num_splits):
    batch, sq, hq, hkv, d, page_size, new = case
    capacity = 1024  # keys per sequence: a whole number of pages
    g = torch.Generator(device="cuda").manual_seed(2)
    rand = lambda *shape: torch.randn(*shape, device="cuda", dtype=dtype, generator=g)  # noqa: E731
    q = rand(batch, sq, hq, d)
    lens = torch.randint(0, capacity - new + 1, (batch,), device="cuda", generator=g, dtype=torch.int32)
    lens[0] = capacity - new  # one sequence full to the end
    if page_size:
        pages_per_seq = capacity // page_size
        k_cache, v_cache = rand(batch * pages_per_seq + 3, page_size, hkv, d), rand(batch * pages_per_seq + 3, page_size, hkv, d)
        page_table = torch.randperm(batch * pages_per_seq + 3, device="cuda", generator=g)[: batch * pages_per_seq]
        page_table = page_table.to(torch.int32).reshape(batch, pages_per_seq)
    else:
        k_cache, v_cache, page_table = rand(batch, capacity, hkv, d), rand(batch, capacity, hkv, d), None
    k_new, v_new = (rand(batch, new, hkv, d), rand(batch, new, hkv, d)) if new else (None, None)
    k_before, v_before = k_cache.clone(), v_cache.clone()

    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, page_table=page_table,
                                       causal=causal, num_splits=num_splits, return_softmax_lse=True)

    # The append: exactly the new keys at cache_seqlens, nothing else changed.
    expected_k, expected_v = k_before, v_before
    for b in range(batch):
        for i in range(new):
            pos = int(lens[b]) + i
            slot = (b, pos) if page_table is None else (int(page_table[b, pos // page_size]), pos % page_size)
            expected_k[slot], expected_v[slot] = k_new[b, i], v_new[b, i]
    assert torch.equal(k_cache, expected_k) and torch.equal(v_cache, expected_v)

    exact, lowp, exact_lse = decode_reference(q, k_cache, v_cache, lens + new, page_table, causal)
    err, bound = max_error(out, exact), error_bound(exact, lowp, dtype, 2)
    assert err <= bound, f"max |out - ref| = {err:.3g} > {bound:.3g}"
    seen = torch.isfinite(exact_lse)
    assert max_error(lse[seen], exact_lse[seen]) <= LSE_FLOOR * max(1.0, exact_lse[seen].abs().max().item())


@pytest.mark.parametrize("num_splits", [0, 1, 3])
@pytest.mark.parametrize("window", [(True, (0, 0)), (True, (63, 63)), (False, (200, -1)), (False, (5, 1))],
                         ids=window_id)
@pytest.mark.parametrize("paged", [False, True], ids=["contiguous", "paged"])
def test_decode_window(paged, window, num_splits):
    causal, window_size = window
    dtype, batch, sq, hq, hkv, d, new, capacity, page_size = torch.bfloat16, 3, 2, 8, 2, 128, 2, 512, 16
    g = torch.Generator(device="cuda").manual_seed(3)
    rand = lambda *shape: torch.randn(*shape, device="cuda", dtype=dtype, generator=g)  # noqa: E731
    q = rand(batch, sq, hq, d)
    lens = torch.tensor([capacity - new, 3, 300], device="cuda", dtype=torch.int32)
    if paged:
        pages_per_seq = capacity // page_size
        k_cache, v_cache = rand(batch * pages_per_seq, page_size, hkv, d), rand(batch * pages_per_seq, page_size, hkv, d)
        page_table = torch.randperm(batch * pages_per_seq, device="cuda", generator=g)
        page_table = page_table.to(torch.int32).reshape(batch, pages_per_seq)
    else:
        k_cache, v_cache, page_table = rand(batch, capacity, hkv, d), rand(batch, capacity, hkv, d), None
    k_new, v_new = rand(batch, new, hkv, d), rand(batch, new, hkv, d)
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, page_table=page_table,
                                       causal=causal, window_size=window_size, num_splits=num_splits,
                                       return_softmax_lse=True, sync_check=True)
    exact, lowp, exact_lse = decode_reference(q, k_cache, v_cache, lens + new, page_table, causal, window_size)
    err, bound = max_error(out, exact), error_bound(exact, lowp, dtype, 2)
    assert err <= bound, f"max |out - ref| = {err:.3g} > {bound:.3g}"
    seen = torch.isfinite(exact_lse)
    assert torch.all(lse[~seen] == -math.inf)
    assert max_error(lse[seen], exact_lse[seen]) <= LSE_FLOOR * max(1.0, exact_lse[seen].abs().max().item())


@pytest.mark.parametrize("num_splits", [0, 1, 3])
@pytest.mark.parametrize("case", ["softcap", "alibi", "alibi_batch", "sinks", "all"])
@pytest.mark.parametrize("paged, new", [(False, 2), (True, 2), (False, 0)], ids=["contiguous", "paged", "no_append"])
def test_decode_score_modifiers(paged, new, case, num_splits):
    dtype, batch, sq, hq, hkv, d, capacity, page_size = torch.bfloat16, 3, 2, 8, 2, 128, 512, 16
    g = torch.Generator(device="cuda").manual_seed(5)
    rand = lambda *shape: torch.randn(*shape, device="cuda", dtype=dtype, generator=g)  # noqa: E731
    q = rand(batch, sq, hq, d)
    # Without an append, sequence 1 is empty: its rows see no key (O = 0, LSE = the sink).
    lens = torch.tensor([capacity - new, 3 if new else 0, 300], device="cuda", dtype=torch.int32)
    if paged:
        pages_per_seq = capacity // page_size
        k_cache, v_cache = rand(batch * pages_per_seq, page_size, hkv, d), rand(batch * pages_per_seq, page_size, hkv, d)
        page_table = torch.randperm(batch * pages_per_seq, device="cuda", generator=g)
        page_table = page_table.to(torch.int32).reshape(batch, pages_per_seq)
    else:
        k_cache, v_cache, page_table = rand(batch, capacity, hkv, d), rand(batch, capacity, hkv, d), None
    k_new, v_new = (rand(batch, new, hkv, d), rand(batch, new, hkv, d)) if new else (None, None)
    scores = make_scores(case, batch, hq)
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, page_table=page_table,
                                       causal=True, num_splits=num_splits, return_softmax_lse=True, sync_check=True,
                                       **flash_scores(scores))
    exact, lowp, exact_lse = decode_reference(q, k_cache, v_cache, lens + new, page_table, True, **scores)
    err, bound = max_error(out, exact), error_bound(exact, lowp, dtype, 2)
    assert err <= bound, f"max |out - ref| = {err:.3g} > {bound:.3g}"
    seen = torch.isfinite(exact_lse)
    assert torch.all(lse[~seen] == -math.inf)
    assert max_error(lse[seen], exact_lse[seen]) <= lse_bound(exact_lse, decode_reference.lowp_lse, seen,
                                                               scores.get("softcap", 0.0))
    if not new:
        assert torch.all(out[1] == 0)


def test_decode_int_lengths_and_whole_cache():
    q = torch.randn(2, 1, 8, 128, device="cuda", dtype=torch.bfloat16)
    k_cache, v_cache = (torch.randn(2, 100, 2, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=37)
    exact, lowp, _ = decode_reference(q, k_cache, v_cache, [37, 37], None, False)
    assert max_error(out, exact) <= error_bound(exact, lowp, torch.bfloat16, 2)
    out = flash_attn_with_kvcache(q, k_cache, v_cache)  # cache_seqlens=None: the whole cache
    exact, lowp, _ = decode_reference(q, k_cache, v_cache, [100, 100], None, False)
    assert max_error(out, exact) <= error_bound(exact, lowp, torch.bfloat16, 2)


def test_decode_sync_check_names_the_bad_entry():
    q = torch.randn(2, 1, 4, 64, device="cuda", dtype=torch.float16)
    k_cache, v_cache = (torch.zeros(2, 64, 2, 64, device="cuda", dtype=torch.float16) for _ in range(2))
    lens = torch.tensor([3, 70], device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError, match=r"cache_seqlens\[1\] = 70 exceeds the cache capacity"):
        flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, sync_check=True)
    flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens)  # asynchronous: writes nothing, raises nothing
    torch.cuda.synchronize()


# ------------------------------------------------- graphs, streams, compile


def test_decode_in_a_cuda_graph():
    batch, hq, hkv, d, capacity = 4, 16, 4, 128, 512
    dtype = torch.bfloat16
    q = torch.randn(batch, 1, hq, d, device="cuda", dtype=dtype)
    k_new, v_new = (torch.randn(batch, 1, hkv, d, device="cuda", dtype=dtype) for _ in range(2))
    k_cache, v_cache = (torch.randn(batch, capacity, hkv, d, device="cuda", dtype=dtype) for _ in range(2))
    lens = torch.tensor([5, 100, 300, 511], device="cuda", dtype=torch.int32)
    # One eager call first (the library's lazy setup), on the default stream:
    # the capture stream's workspace is still cold, and comes from the graph's pool.
    flash_attn_with_kvcache(q, k_cache.clone(), v_cache.clone(), k_new, v_new, cache_seqlens=lens)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, causal=True)

    for step in range(3):
        q.copy_(torch.randn_like(q))
        k_new.copy_(torch.randn_like(k_new))
        v_new.copy_(torch.randn_like(v_new))
        lens.copy_(torch.tensor([step, 50 + step, 200 + 7 * step, 300 + step], device="cuda", dtype=torch.int32))
        k_eager, v_eager = k_cache.clone(), v_cache.clone()
        expected = flash_attn_with_kvcache(q, k_eager, v_eager, k_new, v_new, cache_seqlens=lens, causal=True)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, expected, atol=0, rtol=0)
        assert torch.equal(k_cache, k_eager) and torch.equal(v_cache, v_eager)
        exact, lowp, _ = decode_reference(q, k_cache, v_cache, lens + 1, None, True)
        assert max_error(out, exact) <= error_bound(exact, lowp, dtype, 2)


def test_forward_in_a_cuda_graph():
    q, k, v = make((2, 256, 256, 8, 8, 64), torch.float16)
    flash_attn_func(q, k, v)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flash_attn_func(q, k, v, causal=True)
    q.copy_(torch.randn_like(q))
    graph.replay()
    torch.cuda.synchronize()
    check_forward(out, None, q, k, v, True)


def test_runs_on_the_current_stream():
    q, k, v = make((2, 512, 512, 8, 8, 128), torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # keeps `side` busy for a while
        q_late = q * 1  # written on `side` only after the sleep
        out = flash_attn_func(q_late, k, v)  # must wait for it: same stream
        out_ref = out.clone()
    side.synchronize()
    check_forward(out_ref, None, q, k, v, False)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensors_on_another_device_than_the_current_one():
    with torch.cuda.device(1):
        q, k, v = (t.to("cuda:1") for t in make((1, 128, 128, 4, 4, 64), torch.float16))
    assert torch.cuda.current_device() == 0
    out = flash_attn_func(q, k, v)
    assert out.device == q.device
    check_forward(out, None, q, k, v, False)


def test_errors_on_the_gpu():
    q, k, v = make((2, 64, 64, 4, 2, 64), torch.float16)
    with pytest.raises(ValueError, match=r"k.shape\[3\] \(head_dim\) = 32; expected 64"):
        flash_attn_func(q, k[..., :32], v)
    with pytest.raises(ValueError, match="expected every tensor on one CUDA device"):
        flash_attn_func(q, k.cpu(), v)
    with pytest.raises(ValueError, match=r"k.dtype is bf16; expected f16"):
        flash_attn_func(q, k.bfloat16(), v)


def test_compile_fullgraph():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("torch.compile support needs torch >= 2.4")
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Attention(dim=256, heads=8, heads_kv=2, head_dim=64).cuda().to(torch.bfloat16)
    x = torch.randn(2, 384, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    compiled = torch.compile(model, fullgraph=True)  # raises on any graph break
    out = compiled(x)
    ref = model(x)
    torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=5e-2, rtol=5e-2)
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_compile_fullgraph_with_score_modifiers():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("torch.compile support needs torch >= 2.4")
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Attention(dim=256, heads=8, heads_kv=2, head_dim=64, softcap=30.0, learnable_sink=True)
    model = model.cuda().to(torch.bfloat16)
    x = torch.randn(2, 384, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out = torch.compile(model, fullgraph=True)(x)
    ref = model(x)
    torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=5e-2, rtol=5e-2)
    dsinks = got[1 + [n for n, _ in model.named_parameters()].index("sinks")]
    assert dsinks.dtype == torch.bfloat16 and dsinks.abs().sum() > 0


def test_compile_fullgraph_decode_step():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("torch.compile support needs torch >= 2.4")
    torch._dynamo.reset()

    def step(q, k_cache, v_cache, k, v, lens):
        return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True).float().sum(-1)

    q = torch.randn(2, 1, 8, 128, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(2, 1, 2, 128, device="cuda", dtype=torch.float16) for _ in range(2))
    caches = [torch.randn(2, 256, 2, 128, device="cuda", dtype=torch.float16) for _ in range(2)]
    eager_caches = [c.clone() for c in caches]
    lens = torch.tensor([10, 200], device="cuda", dtype=torch.int32)
    out = torch.compile(step, fullgraph=True)(q, *caches, k, v, lens)
    ref = step(q, *eager_caches, k, v, lens)
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-3)
    assert torch.equal(caches[0], eager_caches[0]) and torch.equal(caches[1], eager_caches[1])


def test_opcheck():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("custom ops need torch >= 2.4")
    q, k, v = make((2, 96, 160, 4, 2, 64), torch.bfloat16, requires_grad=True)
    none = (0.0, None, None)  # softcap, alibi_slopes, sinks: no score modifier
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, True, -1, 0, *none, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, False, 32, 16, *none, False))
    o, lse = torch.ops.flash_ladder.fwd(q.detach(), k.detach(), v.detach(), None, True, -1, 0, *none, False)
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default,
                          (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, None, True, -1, 0, *none,
                           True))
    qd = torch.randn(2, 1, 4, 64, device="cuda", dtype=torch.bfloat16)
    caches = [torch.randn(2, 128, 2, 64, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    kn, vn = (torch.randn(2, 1, 2, 64, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    lens = torch.tensor([4, 100], device="cuda", dtype=torch.int32)
    torch.library.opcheck(torch.ops.flash_ladder.fwd_kvcache.default,
                          (qd, *caches, kn, vn, lens, None, None, False, -1, -1, *none, 0, False))


# ----------------------------------------------------------- variable length

VARLEN_CASES = [
    # seqlens_q, seqlens_k, heads_q, heads_kv, head_dim
    ([128, 1, 77, 0, 300], [128, 64, 203, 5, 300], 4, 2, 64),
    ([513, 31], [17, 1024], 6, 1, 128),
]


def varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (torch.randn(sum(lens), h, d, device="cuda", dtype=dtype, generator=g)
               for lens, h in ((seqlens_q, hq), (seqlens_k, hkv), (seqlens_k, hkv)))

    def cu(lengths):
        return torch.tensor([0] + [sum(lengths[: i + 1]) for i in range(len(lengths))], dtype=torch.int32,
                            device="cuda")

    return q, k, v, cu(seqlens_q), cu(seqlens_k)


def check_varlen(out, lse, q, k, v, cu_q, cu_k, seqused_k=None, causal=False, window_size=(-1, -1), **scores):
    """Each sequence of the packed out / lse against check_forward's float64
    reference of that sequence alone (alibi_slopes of shape (batch, heads)
    taken per sequence)."""
    slopes = scores.pop("alibi_slopes", None)
    for b in range(cu_q.shape[0] - 1):
        q0, q1, k0, k1 = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        if seqused_k is not None:
            k1 = k0 + int(seqused_k[b])
        if q1 == q0:
            continue
        row = slopes[b : b + 1] if slopes is not None and slopes.dim() == 2 else slopes
        check_forward(out[None, q0:q1], None if lse is None else lse[None, :, q0:q1], q[None, q0:q1],
                      k[None, k0:k1], v[None, k0:k1], causal, window_size=window_size, alibi_slopes=row, **scores)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("case", range(len(VARLEN_CASES)))
def test_varlen_forward(case, dtype, causal):
    seqlens_q, seqlens_k, hq, hkv, d = VARLEN_CASES[case]
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, dtype)
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(seqlens_q), max(seqlens_k), causal=causal,
                                      return_lse=True, sync_check=True)
    assert out.shape == q.shape and lse.shape == (hq, q.shape[0]) and lse.dtype == torch.float32
    check_varlen(out, lse, q, k, v, cu_q, cu_k, causal=causal)


def test_varlen_window_scores_and_seqused_k():
    seqlens_q, seqlens_k, hq, hkv, d = VARLEN_CASES[0]
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, torch.bfloat16, seed=1)
    seqused_k = torch.tensor([100, 64, 1, 5, 299], dtype=torch.int32, device="cuda")
    slopes = alibi_slopes(hq).expand(len(seqlens_q), hq).contiguous()
    sinks = torch.randn(hq, device="cuda")
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(seqlens_q), max(seqlens_k), causal=True,
                                 window_size=(32, 0), softcap=20.0, alibi_slopes=slopes, learnable_sink=sinks,
                                 seqused_k=seqused_k, sync_check=True)
    check_varlen(out, None, q, k, v, cu_q, cu_k, seqused_k, causal=True, window_size=(32, 0), softcap=20.0,
                 alibi_slopes=slopes, sinks=sinks)


def test_varlen_paged_kv_cache():
    # Prefill chunks against a paged cache (FA4's flash_attn_varlen_func(page_table=...)): each sequence's keys
    # scattered over shuffled pages of 16 (NaN wherever no sequence reads) give each sequence's reference over
    # its keys; a table entry that is not a page is reported and nothing is computed.
    seqlens_q, seqlens_k, page_size, hq, hkv, d = [5, 0, 64, 1], [70, 3, 200, 1], 16, 8, 2, 128
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, torch.bfloat16, seed=2)
    pages_of = [(n + page_size - 1) // page_size for n in seqlens_k]
    num_pages, max_pages = sum(pages_of) + 3, max(pages_of) + 1
    perm = torch.randperm(num_pages, generator=torch.Generator().manual_seed(3))
    k_pages = torch.full((num_pages, page_size, hkv, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    v_pages = k_pages.clone()
    table = torch.full((len(seqlens_k), max_pages), -1, dtype=torch.int32)
    used = 0
    for b, n in enumerate(seqlens_k):
        table[b, : pages_of[b]] = perm[used : used + pages_of[b]].int()
        used += pages_of[b]
        keys = torch.arange(n)
        pages, rows = table[b, keys // page_size].long().cuda(), (keys % page_size).cuda()
        k_pages[pages, rows] = k[int(cu_k[b]) : int(cu_k[b + 1])]
        v_pages[pages, rows] = v[int(cu_k[b]) : int(cu_k[b + 1])]
    table = table.cuda()
    seqused_k = torch.tensor(seqlens_k, dtype=torch.int32, device="cuda")
    out, lse = flash_attn_varlen_func(q, k_pages, v_pages, cu_q, None, max(seqlens_q), None, causal=True,
                                      return_lse=True, seqused_k=seqused_k, page_table=table, sync_check=True)
    check_varlen(out, lse, q, k, v, cu_q, cu_k, causal=True)
    bad = table.clone()
    bad[2, 1] = num_pages
    with pytest.raises(ValueError, match=r"page_table\[2\]\[1\]"):
        flash_attn_varlen_func(q, k_pages, v_pages, cu_q, None, max(seqlens_q), None, causal=True,
                               seqused_k=seqused_k, page_table=bad, sync_check=True)


def test_varlen_bad_metadata():
    q, k, v, cu_q, cu_k = varlen_inputs([8, 8], [8, 8], 2, 2, 64, torch.float16)
    bad = torch.tensor([0, 9, 8], dtype=torch.int32, device="cuda")  # decreasing
    with pytest.raises(ValueError, match="cu_seqlens_q"):
        flash_attn_varlen_func(q, k, v, bad, cu_k, 9, 8, sync_check=True)


# ------------------------------------------------ variable-length backward

VARLEN_BWD_CASES = VARLEN_CASES + [
    ([100, 0, 37], [64, 9, 200], 4, 2, 256),  # head dim 256; a sequence without queries
]


def check_varlen_gradients(grads, q, k, v, dout, cu_q, cu_k, seqused_k=None, causal=False, window_size=(-1, -1),
                           **scores):
    """grads: (dq, dk, dv) packed, and dsinks (float32) when scores has sinks.
    Each sequence's gradients against check_gradients' rule on that sequence
    alone (its queries, its first seqused_k[b] keys, its row of (batch,
    heads) ALiBi slopes): the float64 reference backward, 3x the error of
    the same math in the input dtype plus the floor; dk = dv = 0 exactly on
    the keys past seqused_k; dsinks, summed over the sequences, by the same
    rule against the sums of both references."""
    slopes = scores.pop("alibi_slopes", None)
    sinks = scores.pop("sinks", None)
    exact_dsinks = lowp_dsinks = 0.0
    for b in range(cu_q.shape[0] - 1):
        q0, q1, k0, k1 = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        used = k1 if seqused_k is None else k0 + int(seqused_k[b])
        assert torch.all(grads[1][used:k1] == 0) and torch.all(grads[2][used:k1] == 0), f"sequence {b}: past seqused_k"
        row = dict(scores, alibi_slopes=slopes[b : b + 1] if slopes is not None and slopes.dim() == 2 else slopes)
        qb, kb, vb, dob = q[None, q0:q1], k[None, k0:used], v[None, k0:used], dout[None, q0:q1]
        exact = reference.attention_backward(dob, qb, kb, vb, causal=causal, window_size=window_size, sinks=sinks,
                                             **row)
        leaves = [t.detach().clone().requires_grad_() for t in (qb, kb, vb)]
        if sinks is not None:
            leaves.append(sinks.detach().clone().requires_grad_())
        lowp_out, _ = reference.attention(*leaves[:3], causal=causal, lowp=True, window_size=window_size,
                                          sinks=leaves[3] if sinks is not None else None, **row)
        lowp = torch.autograd.grad(lowp_out, leaves, dob, allow_unused=True)
        lowp = [torch.zeros_like(leaf) if g is None else g for g, leaf in zip(lowp, leaves)]
        got = (grads[0][None, q0:q1], grads[1][None, k0:used], grads[2][None, k0:used])
        for name, g, e, lo in zip(("dq", "dk", "dv"), got, exact, lowp):
            assert torch.all(torch.isfinite(g)), f"sequence {b}: {name} is not finite"
            if g.numel() == 0:  # a sequence without queries (dq) or without keys (dk, dv)
                continue
            err, bound = max_error(g, e), error_bound(e, lo, q.dtype, 3, absolute=2.0**-16)
            assert err <= bound, f"sequence {b}: {name}: max |g - ref| = {err:.3g} > bound {bound:.3g}"
        if sinks is not None:
            exact_dsinks, lowp_dsinks = exact_dsinks + exact[3], lowp_dsinks + lowp[3]
    if sinks is not None:
        dsinks = grads[3]
        assert dsinks.shape == sinks.shape and dsinks.dtype == torch.float32
        err, bound = max_error(dsinks, exact_dsinks), error_bound(exact_dsinks, lowp_dsinks, q.dtype, 3, 2.0**-16)
        assert err <= bound, f"dsinks: max |g - ref| = {err:.3g} > bound {bound:.3g}"


def varlen_grads(case, dtype, seed=0, seqused_k=None, **kwargs):
    """(grads (dq, dk, dv[, dsinks]), q, k, v, dout, cu_q, cu_k) of
    flash_attn_varlen_func on VARLEN_BWD_CASES[case]; kwargs its own (a
    learnable_sink gets its gradient)."""
    seqlens_q, seqlens_k, hq, hkv, d = VARLEN_BWD_CASES[case]
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, dtype, seed=seed)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(seqlens_q), max(seqlens_k), seqused_k=seqused_k, **kwargs)
    dout = torch.randn_like(out)
    sinks = kwargs.get("learnable_sink")
    grads = torch.autograd.grad(out, (q, k, v) + ((sinks,) if sinks is not None else ()), dout)
    return grads, q.detach(), k.detach(), v.detach(), dout, cu_q, cu_k


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("case", range(len(VARLEN_BWD_CASES)))
def test_varlen_backward(case, dtype, causal):
    grads, q, k, v, dout, cu_q, cu_k = varlen_grads(case, dtype, causal=causal, sync_check=True)
    assert [g.shape for g in grads] == [q.shape, k.shape, v.shape] and all(g.dtype == dtype for g in grads)
    check_varlen_gradients(grads, q, k, v, dout, cu_q, cu_k, causal=causal)


@pytest.mark.parametrize("mask", SCORE_MASKS, ids=window_id)
@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_varlen_backward_score_modifiers_and_seqused_k(dtype, case, mask):
    # VARLEN_CASES[0]: GQA, five sequences of 0 to 300 queries; seqused_k
    # leaves some keys of most sequences out (their dk, dv: 0).
    causal, window_size = mask
    seqlens_q, seqlens_k, hq = VARLEN_BWD_CASES[0][0], VARLEN_BWD_CASES[0][1], VARLEN_BWD_CASES[0][2]
    seqused_k = torch.tensor([100, 64, 1, 5, 299], dtype=torch.int32, device="cuda")
    scores = make_scores(case, len(seqlens_q), hq)
    learnable = dict(flash_scores(scores))
    if "sinks" in scores:
        learnable["learnable_sink"] = scores["sinks"].clone().requires_grad_()
    grads, q, k, v, dout, cu_q, cu_k = varlen_grads(0, dtype, seed=1, seqused_k=seqused_k, causal=causal,
                                                    window_size=window_size, **learnable)
    check_varlen_gradients(grads, q, k, v, dout, cu_q, cu_k, seqused_k, causal=causal, window_size=window_size,
                           **scores)


def test_varlen_backward_deterministic_is_bit_identical():
    seqlens_q, seqlens_k, hq, hkv, d = [700, 33, 1000], [900, 33, 1000], 8, 2, 128
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, torch.bfloat16, seed=3)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    sinks = (torch.randn(hq, device="cuda") * 2).requires_grad_()
    dout = torch.randn(q.shape, device="cuda", dtype=q.dtype)
    runs = []
    for _ in range(3):
        out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(seqlens_q), max(seqlens_k), causal=True,
                                     learnable_sink=sinks, deterministic=True)
        runs.append(torch.autograd.grad(out, (q, k, v, sinks), dout))
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            assert torch.equal(a, b)
    check_varlen_gradients(runs[0], q.detach(), k.detach(), v.detach(), dout, cu_q, cu_k, causal=True,
                           sinks=sinks.detach())


def test_varlen_backward_matches_the_dense_backward():
    # Sequences of one length: the packed call's gradients and those of
    # flash_attn_func on the same tensors seen as (batch, seqlen, ...) agree
    # to the rounding of sums taken in another order.
    batch, seqlen, hq, hkv, d = 3, 257, 8, 2, 128
    q, k, v, cu_q, cu_k = varlen_inputs([seqlen] * batch, [seqlen] * batch, hq, hkv, d, torch.bfloat16, seed=4)
    dout = torch.randn_like(q)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attn_varlen_func(*leaves, cu_q, cu_k, seqlen, seqlen, causal=True)
    packed = torch.autograd.grad(out, leaves, dout)
    dense_leaves = [t.view(batch, seqlen, *t.shape[1:]).clone().requires_grad_() for t in (q, k, v)]
    dense_out = flash_attn_func(*dense_leaves, causal=True)
    dense = torch.autograd.grad(dense_out, dense_leaves, dout.view(batch, seqlen, hq, d))
    assert max_error(out.view_as(dense_out), dense_out) <= 2.0**-7 * dense_out.abs().max().item()
    for name, g, e in zip(("dq", "dk", "dv"), packed, dense):
        err, scale = max_error(g, e.view_as(g)), e.abs().max().item()
        assert err <= 0.02 * scale, f"{name}: max |varlen - dense| = {err:.3g} (max |dense| = {scale:.3g})"


def test_varlen_backward_negative_control():
    # The check is sharp enough to see a wrong mask and a wrong sequence:
    # the gradients of the full call fail the causal reference, and those of
    # sequences shifted by one row fail theirs.
    grads, q, k, v, dout, cu_q, cu_k = varlen_grads(0, torch.bfloat16, causal=False)
    check_varlen_gradients(grads, q, k, v, dout, cu_q, cu_k, causal=False)
    with pytest.raises(AssertionError):
        check_varlen_gradients(grads, q, k, v, dout, cu_q, cu_k, causal=True)
    shifted = (grads[0].roll(1, 0),) + tuple(grads[1:])
    with pytest.raises(AssertionError):
        check_varlen_gradients(shifted, q, k, v, dout, cu_q, cu_k, causal=False)


def test_varlen_paged_call_refuses_a_backward():
    q, k, v, cu_q, _ = varlen_inputs([5, 9], [16, 16], 4, 2, 64, torch.bfloat16)
    pages = k.view(2, 16, 2, 64)
    table = torch.arange(2, dtype=torch.int32, device="cuda").view(2, 1)
    seqused_k = torch.tensor([16, 16], dtype=torch.int32, device="cuda")
    with pytest.raises(NotImplementedError, match="page_table has no backward"):
        flash_attn_varlen_func(q.requires_grad_(), pages, pages, cu_q, None, 9, None, seqused_k=seqused_k,
                               page_table=table)
    with torch.no_grad():
        out = flash_attn_varlen_func(q, pages, pages, cu_q, None, 9, None, seqused_k=seqused_k, page_table=table)
    assert not out.requires_grad


def test_varlen_compile_fullgraph():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("torch.compile support needs torch >= 2.4")
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = VarlenAttention(dim=256, heads=8, heads_kv=2, head_dim=64, softcap=30.0, learnable_sink=True)
    model = model.cuda().to(torch.bfloat16)
    seqlens = [300, 1, 77, 200]
    cu = torch.tensor([0] + [sum(seqlens[: i + 1]) for i in range(len(seqlens))], dtype=torch.int32, device="cuda")
    x = torch.randn(sum(seqlens), 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out = torch.compile(model, fullgraph=True)(x, cu, max(seqlens))  # raises on any graph break
    ref = model(x, cu, max(seqlens))
    torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=5e-2, rtol=5e-2)
    dsinks = got[1 + [n for n, _ in model.named_parameters()].index("sinks")]
    assert dsinks.dtype == torch.bfloat16 and dsinks.abs().sum() > 0
    explanation = torch._dynamo.explain(model)(x, cu, max(seqlens))
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_varlen_opcheck():
    if not interface._HAS_CUSTOM_OP:
        pytest.skip("custom ops need torch >= 2.4")
    seqlens_q, seqlens_k, hq, hkv, d = VARLEN_CASES[0]
    q, k, v, cu_q, cu_k = varlen_inputs(seqlens_q, seqlens_k, hq, hkv, d, torch.bfloat16)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    sinks = torch.randn(hq, device="cuda", requires_grad=True)
    max_q, max_k = max(seqlens_q), max(seqlens_k)
    torch.library.opcheck(torch.ops.flash_ladder.fwd_varlen.default,
                          (q, k, v, cu_q, cu_k, None, max_q, max_k, None, True, -1, 0, 0.0, None, sinks, False, None,
                           False))
    o, lse = torch.ops.flash_ladder.fwd_varlen(q.detach(), k.detach(), v.detach(), cu_q, cu_k, None, max_q, max_k,
                                               None, True, -1, 0, 0.0, None, sinks.detach(), False, None, False)
    torch.library.opcheck(torch.ops.flash_ladder.bwd_varlen.default,
                          (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, cu_q, cu_k, None, max_q,
                           max_k, None, True, -1, 0, 0.0, None, sinks.detach(), True, False))
