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


def sdpa(q, k, v, causal, scale=None):
    group = q.shape[2] // k.shape[2]
    Q, K, V = q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, 1), v.transpose(1, 2).repeat_interleave(group, 1)
    mask = reference.visible(q.shape[1], k.shape[1], causal, q.device)
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


def test_eager_without_grad_skips_the_lse(emulated):
    q, k, v = inputs()
    assert isinstance(flash_attn_func(q, k, v), torch.Tensor)
    with torch.no_grad():
        out = flash_attn_func(*inputs(requires_grad=True))
    assert not out.requires_grad


@needs_custom_op
def test_opcheck(emulated):
    q, k, v = inputs(requires_grad=True)
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q, k, v, None, True, False))
    torch.library.opcheck(torch.ops.flash_ladder.fwd.default, (q.transpose(1, 2).contiguous().transpose(1, 2), k, v,
                                                               0.5, False, False))
    o, lse = emulation.forward(q.detach(), k.detach(), v.detach(), None, False, True)
    torch.library.opcheck(torch.ops.flash_ladder.bwd.default,
                          (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, None, False, False))
    k_cache, v_cache = torch.zeros(2, 32, 2, 16), torch.zeros(2, 32, 2, 16)
    q1, k1, v1 = inputs(sq=1, sk=1)
    lens = torch.tensor([3, 7], dtype=torch.int32)
    torch.library.opcheck(torch.ops.flash_ladder.fwd_kvcache.default,
                          (q1, k_cache, v_cache, k1, v1, lens, None, None, True, 0, False))


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
def test_compile_fullgraph_forward_and_backward(emulated):
    torch.manual_seed(0)
    model = Attention(dim=32, heads=4, heads_kv=2, head_dim=8)
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


@needs_custom_op
def test_compile_fullgraph_kvcache(emulated):
    def step(q, k_cache, v_cache, k, v, lens):
        return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True) * 2

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
