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
@pytest.mark.parametrize("window_size", [(-1, -1), (2, 2)], ids=["full", "window"])
def test_compile_fullgraph_kvcache(emulated, window_size):
    def step(q, k_cache, v_cache, k, v, lens):
        return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True,
                                       window_size=window_size) * 2

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


@needs_custom_op
def test_compile_of_the_real_package_has_no_graph_break():
    # The real library, CPU tensors: dynamo traces the whole function into one
    # graph holding the custom op (fullgraph=True raises on a break), and the
    # call itself then fails as an eager call would, with the library's check.
    torch._dynamo.reset()
    recorder = Recorder()

    def f(q, k, v):
        return flash_attn_func(q, k, v, causal=True) + 1

    with pytest.raises(ValueError, match="expected every tensor on one CUDA device"):
        torch.compile(f, backend=recorder, fullgraph=True)(*inputs())
    assert len(recorder.graphs) == 1
    assert any("flash_ladder.fwd" in op for op in recorder.ops()), recorder.ops()
    torch._dynamo.reset()


def test_package_exports():
    assert flash_ladder.flash_attn_func is flash_attn_func
    assert callable(flash_ladder.plan_forward)
    assert math.isclose(emulation.default_scale(16), 0.25)
