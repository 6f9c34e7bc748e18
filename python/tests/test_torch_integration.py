"""The PyTorch side on the CPU: autograd, the custom ops and their fake
implementations, and torch.compile(fullgraph=True), with the library's three
calls replaced by plain-PyTorch stand-ins (emulation.py); and one compile of
the real package, whose graph must hold the op with no break before the
library rejects the CPU tensors at run time."""

import math

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

import flash_ladder  # noqa: E402
from flash_ladder import flash_attn_func, flash_attn_with_kvcache, interface  # noqa: E402

import emulation  # noqa: E402
import reference  # noqa: E402
from modules import Attention  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

needs_custom_op = pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")


@pytest.fixture
def emulated(monkeypatch):
    emulation.install(monkeypatch)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def inputs(b=2, sq=24, sk=40, hq=4, hkv=2, d=16, requires_grad=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, s, h, d, generator=g, requires_grad=requires_grad) for s, h in ((sq, hq), (sk, hkv), (sk, hkv))]


def sdpa(q, k, v, causal, scale=None, window_size=(-1, -1)):
    group = q.shape[2] // k.shape[2]
    Q, K, V = q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, 1), v.transpose(1, 2).repeat_interleave(group, 1)
    mask = reference.visible(q.shape[1], k.shape[1], causal, q.device, window_size)
    return torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=scale).transpose(1, 2)


def test_reference_backward_matches_autograd():
    q, k, v = (t.double().detach().requires_grad_() for t in inputs(sq=20, sk=30))
    for causal in (False, True):
        out, _ = reference.attention(q, k, v, causal=causal)
        dout = torch.randn_like(out)
        expected = torch.autograd.grad(out, (q, k, v), dout)
        got = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), causal=causal)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)


def test_reference_window_rule():
    # FlashAttention's rule, bottom-right: query i sees key j iff i + sk - sq - left <= j <= i + sk - sq + right.
    sq, sk = 3, 6
    for causal, window in [(False, (1, 0)), (False, (0, 2)), (True, (2, 5)), (False, (-1, 0)), (True, (-1, -1))]:
        left, right = window
        if causal:
            right = 0
        got = reference.visible(sq, sk, causal, "cpu", window)
        for i in range(sq):
            for j in range(sk):
                d = i + sk - sq
                assert bool(got[i, j]) == ((left < 0 or j >= d - left) and (right < 0 or j <= d + right))


def test_reference_window_rows_without_keys():
    q, k, v = (t.double() for t in inputs(sq=6, sk=3))
    out, lse = reference.attention(q, k, v, window_size=(0, 0))  # queries 0..2 are above the keys
    assert torch.equal(out[:, :3], torch.zeros_like(out[:, :3])) and bool(torch.isneginf(lse[..., :3]).all())
    assert bool(torch.isfinite(lse[..., 3:]).all())
    *grads, dsinks = reference.attention_backward(torch.randn_like(out), q, k, v, window_size=(0, 0))
    assert all(bool(torch.isfinite(g).all()) for g in grads) and dsinks is None


def test_reference_backward_with_a_window_matches_autograd():
    q, k, v = (t.double().detach().requires_grad_() for t in inputs(sq=20, sk=30))
    for causal, window in [(True, (4, 4)), (False, (3, -1)), (False, (-1, 2)), (False, (5, 1))]:
        out, _ = reference.attention(q, k, v, causal=causal, window_size=window)
        dout = torch.randn_like(out)
        expected = torch.autograd.grad(out, (q, k, v), dout)
        got = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), causal=causal, window_size=window)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)


# ----------------------------------------------------------- score modifiers


def plain(q, k, v, causal=False, softcap=0.0, alibi_slopes=None, sinks=None, window_size=(-1, -1)):
    """The score modifiers the obvious way, as transformers' eager attentions
    write them (Gemma 2's softcap, gpt-oss's sinks as one more logit that is
    dropped after the softmax), independent of reference.py's formulas:
    (out (batch, seqlen_q, heads_q, head_dim), lse (batch, heads_q, seqlen_q))."""
    b, sq, hq, d = q.shape
    sk, group = k.shape[1], hq // k.shape[2]
    Q, K, V = q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, 1), v.transpose(1, 2).repeat_interleave(group, 1)
    S = Q @ K.transpose(-1, -2) / math.sqrt(d)
    if softcap:
        S = torch.tanh(S / softcap) * softcap
    if alibi_slopes is not None:
        distance = (torch.arange(sq)[:, None] + sk - sq - torch.arange(sk)[None, :]).abs()
        S = S - alibi_slopes.reshape(-1, hq, 1, 1) * distance
    S = S.masked_fill(~reference.visible(sq, sk, causal, q.device, window_size), -math.inf)
    if sinks is not None:
        S = torch.cat([S, sinks.reshape(1, hq, 1, 1).expand(b, hq, sq, 1)], dim=-1)
    lse = torch.logsumexp(S, dim=-1)
    P = torch.softmax(S, dim=-1).nan_to_num()  # a row of -inf only: no key, no sink
    if sinks is not None:
        P = P[..., :-1]
    return (P @ V).transpose(1, 2), lse


def scores_for(case, b=2, hq=4, dtype=torch.float32, seed=3):
    """kwargs of flash_attn_func for a named combination of modifiers."""
    g = torch.Generator().manual_seed(seed)
    slopes = lambda *shape: (torch.rand(*shape, generator=g) * 0.5).to(dtype)  # noqa: E731
    sinks = (torch.randn(hq, generator=g) * 2).to(dtype)
    return {
        "softcap": {"softcap": 3.0},
        "alibi": {"alibi_slopes": slopes(hq)},
        "alibi_batch": {"alibi_slopes": slopes(b, hq)},
        "sinks": {"learnable_sink": sinks},
        "all": {"softcap": 5.0, "alibi_slopes": slopes(b, hq), "learnable_sink": sinks},
    }[case]


SCORE_CASES = ["softcap", "alibi", "alibi_batch", "sinks", "all"]


def plain_kwargs(scores):
    return {"softcap": scores.get("softcap", 0.0), "alibi_slopes": scores.get("alibi_slopes"),
            "sinks": scores.get("learnable_sink")}


@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("causal, window_size, sq", [(False, (-1, -1), 24), (True, (-1, -1), 24), (True, (6, 0), 50)],
                         ids=["full", "causal", "causal_window_rows_without_keys"])
def test_reference_score_modifiers_match_plain(case, causal, window_size, sq):
    q, k, v = (t.double() for t in inputs(sq=sq))
    scores = {n: t.double() if isinstance(t, torch.Tensor) else t for n, t in scores_for(case).items()}
    out, lse = reference.attention(q, k, v, causal=causal, window_size=window_size, **plain_kwargs(scores))
    expected, expected_lse = plain(q, k, v, causal, window_size=window_size, **plain_kwargs(scores))
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(lse, expected_lse)
    if sq > 40 and causal:  # queries 0..9 see no key: O = 0 and LSE = the sink (-inf without one)
        assert torch.equal(out[:, :10], torch.zeros_like(out[:, :10]))
        sinks = scores.get("learnable_sink")
        no_key = torch.full_like(lse[..., :10], -math.inf) if sinks is None else sinks[None, :, None].expand_as(lse[..., :10])
        torch.testing.assert_close(lse[..., :10], no_key)


@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("causal", [False, True])
def test_reference_backward_with_score_modifiers_matches_autograd(case, causal):
    q, k, v = (t.double().detach().requires_grad_() for t in inputs(sq=30, sk=20))  # causal: rows without keys
    scores = plain_kwargs({n: t.double() if isinstance(t, torch.Tensor) else t for n, t in scores_for(case).items()})
    if scores["sinks"] is not None:
        scores["sinks"].requires_grad_()
    out, _ = reference.attention(q, k, v, causal=causal, **scores)
    dout = torch.randn_like(out)
    leaves = (q, k, v) + ((scores["sinks"],) if scores["sinks"] is not None else ())
    expected = torch.autograd.grad(out, leaves, dout)
    got = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), causal=causal,
                                       **{n: t.detach() if isinstance(t, torch.Tensor) else t for n, t in scores.items()})
    assert (got[3] is None) == (scores["sinks"] is None)
    for g, e in zip([t for t in got if t is not None], expected):
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize("case", SCORE_CASES)
@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_eager_score_modifiers_reach_the_library(emulated, case, grad):
    q, k, v = inputs(requires_grad=grad)
    scores = scores_for(case)
    sinks = scores.get("learnable_sink")
    if sinks is not None and grad:
        sinks.requires_grad_()
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True, **scores)
    expected, expected_lse = plain(q, k, v, True, **plain_kwargs(scores))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, expected_lse, atol=1e-5, rtol=1e-5)
    call, softcap, alibi_slopes, got_sinks = emulation.scores[0]
    assert (call, softcap) == ("forward", scores.get("softcap", 0.0))
    assert alibi_slopes is scores.get("alibi_slopes")  # as given: the library reads the caller's tensor
    assert (got_sinks is None) == (sinks is None)
    if grad:
        leaves = (q, k, v) + ((sinks,) if sinks is not None else ())
        dout = torch.randn_like(out)
        got = torch.autograd.grad(out, leaves, dout)
        want = torch.autograd.grad(expected, leaves, dout)
        for g, e in zip(got, want):
            torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
        assert emulation.scores[-1][0] == "backward" and emulation.scores[-1][1:] == emulation.scores[0][1:]


def test_learnable_sink_alone_takes_the_autograd_path(emulated):
    # Only the sinks learn (q, k, v frozen): the sinks still get their gradient.
    q, k, v = inputs()
    sinks = torch.randn(4, requires_grad=True)
    out = flash_attn_func(q, k, v, learnable_sink=sinks)
    assert out.requires_grad
    (grad,) = torch.autograd.grad(out.sum(), sinks)
    (expected,) = torch.autograd.grad(plain(q, k, v, sinks=sinks)[0].sum(), sinks)
    torch.testing.assert_close(grad, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_learnable_sink_is_cast_to_float32(emulated, dtype):
    # FlashAttention-4 takes bf16/fp16 sinks: the library gets float32, the
    # parameter its gradient in its own dtype.
    q, k, v = inputs(requires_grad=True)
    sinks = torch.randn(4).to(dtype).requires_grad_()
    out = flash_attn_func(q, k, v, causal=True, learnable_sink=sinks)
    assert emulation.scores[0][3].dtype == torch.float32
    torch.testing.assert_close(emulation.scores[0][3], sinks.detach().float())
    out.sum().backward()
    assert sinks.grad.dtype == dtype
    float_sinks = sinks.detach().float().requires_grad_()
    (want,) = torch.autograd.grad(plain(q.detach(), k.detach(), v.detach(), True, sinks=float_sinks)[0].sum(), float_sinks)
    torch.testing.assert_close(sinks.grad, want.to(dtype))


def test_alibi_slopes_get_no_gradient(emulated):
    q, k, v = inputs(requires_grad=True)
    slopes = torch.rand(4, requires_grad=True)
    flash_attn_func(q, k, v, alibi_slopes=slopes).sum().backward()
    assert q.grad is not None and slopes.grad is None


def test_eager_kvcache_score_modifiers_reach_the_library(emulated):
    q, k, v = inputs(sq=2, sk=2)
    k_cache, v_cache = torch.randn(2, 32, 2, 16), torch.randn(2, 32, 2, 16)
    lens = torch.tensor([3, 20], dtype=torch.int32)
    scores = scores_for("all")
    scores["learnable_sink"].requires_grad_()  # a model's parameter: decoding takes it without a graph
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True,
                                       return_softmax_lse=True, **scores)
    assert [c[0] for c in emulation.scores] == ["decode"] and emulation.scores[0][1] == 5.0
    assert not out.requires_grad
    for b, length in enumerate((5, 22)):  # each sequence: its own keys, its own row of slopes
        kw = plain_kwargs(scores)
        kw["alibi_slopes"] = kw["alibi_slopes"][b : b + 1]
        kw["sinks"] = kw["sinks"].detach()
        expected, expected_lse = plain(q[b : b + 1], k_cache[b : b + 1, :length], v_cache[b : b + 1, :length], True, **kw)
        torch.testing.assert_close(out[b : b + 1], expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(lse[b : b + 1], expected_lse, atol=1e-5, rtol=1e-5)


@needs_custom_op
def test_custom_ops_are_registered():
    for name in ("fwd", "bwd", "fwd_kvcache"):
        assert hasattr(torch.ops.flash_ladder, name)
    schema = torch.ops.flash_ladder.fwd_kvcache.default._schema
    written = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    assert written == ["k_cache", "v_cache"]


@pytest.mark.parametrize("causal", [False, True])
def test_eager_autograd_matches_sdpa(emulated, causal):
    q, k, v = inputs(requires_grad=True)
    out, lse = flash_attn_func(q, k, v, causal=causal, return_lse=True)
    assert not lse.requires_grad
    ref = sdpa(q, k, v, causal)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    dout = torch.randn_like(out)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    expected = torch.autograd.grad(ref, (q, k, v), dout)
    for g, e in zip(grads, expected):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("causal, window_size, passed",
                         [(True, (5, 5), (5, 0)), (True, (3, -1), (3, 0)), (False, (4, 2), (4, 2)),
                          (False, (-1, 0), (-1, 0)), (False, (0, -1), (0, -1))])
@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_eager_window_reaches_the_library(emulated, causal, window_size, passed, grad):
    q, k, v = inputs(requires_grad=grad)
    out, lse = flash_attn_func(q, k, v, causal=causal, window_size=window_size, return_lse=True)
    ref = sdpa(q, k, v, causal, window_size=passed)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    assert emulation.calls == [("forward", causal, *passed)]
    if grad:
        dout = torch.randn_like(out)
        grads = torch.autograd.grad(out, (q, k, v), dout)
        expected = torch.autograd.grad(ref, (q, k, v), dout)
        for g, e in zip(grads, expected):
            torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
        assert emulation.calls[-1] == ("backward", causal, *passed)


def test_eager_kvcache_window_reaches_the_library(emulated):
    q, k, v = inputs(sq=1, sk=1)
    k_cache, v_cache = torch.randn(2, 32, 2, 16), torch.randn(2, 32, 2, 16)
    lens = torch.tensor([3, 20], dtype=torch.int32)
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True, window_size=(4, 4))
    assert emulation.calls == [("decode", True, 4, 0)]
    # Sequence 1 has 21 keys; its one query sees the last 5.
    expected = sdpa(q[1:], k_cache[1:, 16:21], v_cache[1:, 16:21], False)
    torch.testing.assert_close(out[1:], expected, atol=1e-5, rtol=1e-5)


def test_eager_without_grad_skips_the_lse(emulated):
    q, k, v = inputs()
    assert isinstance(flash_attn_func(q, k, v), torch.Tensor)
    with torch.no_grad():
        out = flash_attn_func(*inputs(requires_grad=True))
    assert not out.requires_grad


@needs_custom_op
def test_opcheck(emulated):
    q, k, v = inputs(requires_grad=True)
    none = (0.0, None, None)  # softcap, alibi_slopes, sinks: no score modifier
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, True, -1, 0, *none, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q.transpose(1, 2).contiguous().transpose(1, 2), k, v,
                                                               0.5, False, -1, -1, *none, False))
    o, lse = emulation.forward(q.detach(), k.detach(), v.detach(), None, False, -1, -1, *none, True)
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default,
                          (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, None, False, -1, -1, *none,
                           False))
    k_cache, v_cache = torch.zeros(2, 32, 2, 16), torch.zeros(2, 32, 2, 16)
    q1, k1, v1 = inputs(sq=1, sk=1)
    lens = torch.tensor([3, 7], dtype=torch.int32)
    torch.library.opcheck(torch.ops.flash_ladder.fwd_kvcache.default,
                          (q1, k_cache, v_cache, k1, v1, lens, None, None, True, -1, 0, *none, 0, False))
    # With sliding windows.
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, True, 7, 0, *none, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, 0.5, False, 3, 5, *none, True))
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default,
                          (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, None, False, 2, 9, *none,
                           False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd_kvcache.default,
                          (q1, k_cache, v_cache, k1, v1, lens, None, None, True, 2, 0, *none, 0, False))


@needs_custom_op
def test_opcheck_with_score_modifiers(emulated):
    q, k, v = inputs(requires_grad=True)
    slopes, slopes_batch = torch.rand(4), torch.rand(2, 4)
    sinks = torch.randn(4, requires_grad=True)
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, True, -1, 0, 3.0, None, None, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, False, -1, -1, 0.0, slopes, None, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, 0.5, True, 4, 0, 5.0, slopes_batch, sinks, False))
    o, lse = emulation.forward(q.detach(), k.detach(), v.detach(), None, True, -1, 0, 5.0, slopes, sinks.detach(), True)
    bwd_args = (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, None, True, -1, 0, 5.0, slopes)
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default, (*bwd_args, sinks.detach(), False))
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default, (*bwd_args, None, False))
    k_cache, v_cache = torch.zeros(2, 32, 2, 16), torch.zeros(2, 32, 2, 16)
    q1, k1, v1 = inputs(sq=1, sk=1)
    lens = torch.tensor([3, 7], dtype=torch.int32)
    torch.library.opcheck(torch.ops.flash_ladder.fwd_kvcache.default,
                          (q1, k_cache, v_cache, k1, v1, lens, None, None, True, -1, 0, 5.0, slopes_batch,
                           sinks.detach(), 0, False))


class Recorder:
    """A torch.compile backend that keeps the graphs dynamo hands it and runs
    them with aot_eager (AOTAutograd, so the backward is traced too)."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    def ops(self):
        return [str(n.target) for g in self.graphs for n in g.graph.nodes if n.op == "call_function"]


@needs_custom_op
@pytest.mark.parametrize("window_size", [(-1, -1), (5, 5)], ids=["full", "window"])
def test_compile_fullgraph_forward_and_backward(emulated, window_size):
    torch.manual_seed(0)
    model = Attention(dim=32, heads=4, heads_kv=2, head_dim=8, window_size=window_size)
    x = torch.randn(2, 24, 32, requires_grad=True)
    recorder = Recorder()
    compiled = torch.compile(model, backend=recorder, fullgraph=True)
    out = compiled(x)
    ref = model(x)  # eager: the direct path
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
    assert len(recorder.graphs) == 1
    assert any("flash_ladder.fwd" in op for op in recorder.ops()), recorder.ops()
    passed = (window_size[0], 0)  # causal: the right side normalized to 0
    assert {c for c in emulation.calls if c[0] == "forward"} == {("forward", True, *passed)}
    assert {c for c in emulation.calls if c[0] == "backward"} == {("backward", True, *passed)}
    if window_size != (-1, -1):  # the window changes the result: it reached the stand-ins
        full = Attention(dim=32, heads=4, heads_kv=2, head_dim=8)
        full.load_state_dict(model.state_dict())
        assert not torch.allclose(full(x), ref)


@needs_custom_op
def test_compile_fullgraph_with_score_modifiers(emulated):
    # Gemma 2's softcap and gpt-oss's learnable sinks in one block: one graph,
    # the eager results, and the sinks' gradient through the op's dsinks.
    torch.manual_seed(0)
    model = Attention(dim=32, heads=4, heads_kv=2, head_dim=8, softcap=4.0, learnable_sink=True)
    x = torch.randn(2, 24, 32, requires_grad=True)
    recorder = Recorder()
    out = torch.compile(model, backend=recorder, fullgraph=True)(x)
    ref = model(x)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
    names = [n for n, _ in model.named_parameters()]
    assert got[1 + names.index("sinks")].abs().sum() > 0
    assert len(recorder.graphs) == 1
    assert {(c[0], c[1]) for c in emulation.scores} == {("forward", 4.0), ("backward", 4.0)}
    assert all(c[3] is not None and c[3].shape == (4,) for c in emulation.scores)


@needs_custom_op
@pytest.mark.parametrize("window_size, case", [((-1, -1), None), ((2, 2), None), ((-1, -1), "all")],
                         ids=["full", "window", "score_modifiers"])
def test_compile_fullgraph_kvcache(emulated, window_size, case):
    scores = scores_for(case) if case else {}

    def step(q, k_cache, v_cache, k, v, lens):
        return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True,
                                       window_size=window_size, **scores) * 2

    q, k, v = inputs(sq=1, sk=1)
    lens = torch.tensor([3, 7], dtype=torch.int32)
    caches = [torch.randn(2, 32, 2, 16) for _ in range(2)]
    eager_caches = [c.clone() for c in caches]
    recorder = Recorder()
    out = torch.compile(step, backend=recorder, fullgraph=True)(q, *caches, k, v, lens)
    ref = step(q, *eager_caches, k, v, lens)
    torch.testing.assert_close(out, ref)
    for c, e in zip(caches, eager_caches):  # the append reached the caller's caches
        torch.testing.assert_close(c, e)
    assert torch.equal(caches[0][1, 7], k[1, 0])
    assert any("flash_ladder.fwd_kvcache" in op for op in recorder.ops()), recorder.ops()
    assert set(emulation.calls) == {("decode", True, window_size[0], 0)}
    assert {c[1] for c in emulation.scores} == {scores.get("softcap", 0.0)}


@needs_custom_op
def test_compile_of_the_real_package_has_no_graph_break():
    # The real library, CPU tensors: dynamo traces the whole function into one
    # graph holding the custom op (fullgraph=True raises on a break), and the
    # call itself then fails as an eager call would, with the library's check.
    torch._dynamo.reset()
    recorder = Recorder()

    def f(q, k, v):
        return flash_attn_func(q, k, v, causal=True) + 1

    # A build without naive (FLASH_VARIANTS) refuses the CPU call's f32 head
    # dim 16 in the library's variant check, before Python's device check.
    with pytest.raises(ValueError, match="expected every tensor on one CUDA device|no variant supports this call"):
        torch.compile(f, backend=recorder, fullgraph=True)(*inputs())
    assert len(recorder.graphs) == 1
    assert any("flash_ladder.fwd" in op for op in recorder.ops()), recorder.ops()
    torch._dynamo.reset()


def test_package_exports():
    assert flash_ladder.flash_attn_func is flash_attn_func
    assert callable(flash_ladder.plan_forward)
    assert math.isclose(emulation.default_scale(16), 0.25)
