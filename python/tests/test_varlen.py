"""flash_attn_varlen_func on the CPU: the arguments reach the library's level
(emulation's stand-ins, each sequence through the reference) and match a
per-sequence reference, forward and backward (gradients against float64
autograd of the per-sequence reference, torch.autograd.gradcheck with a
negative control, the custom ops under opcheck and torch.compile); bad
arguments raise ValueError naming them (the library's own checks, as in
test_errors); a paged call refuses a backward."""

import re

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

import flash_ladder  # noqa: E402
from flash_ladder import flash_attn_varlen_func, interface  # noqa: E402

import emulation  # noqa: E402
import reference  # noqa: E402
from modules import VarlenAttention  # noqa: E402
from test_torch_integration import Recorder  # noqa: E402
from build_config import HEAD_DIM  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

HQ, HKV, D = 4, 2, 16
SEQLENS_Q, SEQLENS_K = [5, 0, 17, 9], [12, 7, 17, 3]


@pytest.fixture
def emulated(monkeypatch):
    emulation.install(monkeypatch)
    yield


def cu(lengths):
    return torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)), dtype=torch.int32)


def packed(seqlens_q=SEQLENS_Q, seqlens_k=SEQLENS_K, hq=HQ, hkv=HKV, d=D, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(sum(seqlens_q), hq, d, generator=g).to(dtype)
    k = torch.randn(sum(seqlens_k), hkv, d, generator=g).to(dtype)
    v = torch.randn(sum(seqlens_k), hkv, d, generator=g).to(dtype)
    return q, k, v, cu(seqlens_q), cu(seqlens_k), max(seqlens_q), max(seqlens_k)


def per_sequence(q, k, v, cu_q, cu_k, seqused_k=None, **kwargs):
    """(out, lse) in the packed layouts: each sequence through reference.attention in float64."""
    outs, lses = [], []
    for b in range(cu_q.shape[0] - 1):
        q0, q1, k0, k1 = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        if seqused_k is not None:
            k1 = k0 + int(seqused_k[b])
        out, lse = reference.attention(q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], **kwargs)
        outs.append(out[0])
        lses.append(lse[0])
    return torch.cat(outs).float(), torch.cat(lses, dim=1).float()


def test_exported():
    assert "flash_attn_varlen_func" in flash_ladder.__all__
    assert flash_ladder.flash_attn_varlen_func is interface.flash_attn_varlen_func


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window_size", [(-1, -1), (4, 2)])
def test_matches_per_sequence_reference(emulated, causal, window_size):
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=causal, window_size=window_size,
                                      return_lse=True)
    assert out.shape == q.shape and lse.shape == (HQ, q.shape[0]) and lse.dtype == torch.float32
    ref, ref_lse = per_sequence(q, k, v, cu_q, cu_k, causal=causal, window_size=window_size)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, ref_lse, atol=1e-5, rtol=1e-5)
    expected_right = 0 if causal else window_size[1]
    assert emulation.calls == [("forward_varlen", causal, window_size[0], expected_right)]


def test_score_modifiers_and_seqused_k_reach_the_library(emulated):
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    batch = cu_q.shape[0] - 1
    slopes = torch.rand(batch, HQ)
    sinks = torch.randn(HQ, dtype=torch.bfloat16)
    seqused_k = torch.tensor([10, 0, 17, 2], dtype=torch.int32)
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, softmax_scale=0.3, causal=True, softcap=5.0,
                                 alibi_slopes=slopes, learnable_sink=sinks, seqused_k=seqused_k)
    ref, _ = per_sequence(q, k, v, cu_q, cu_k, seqused_k, softmax_scale=0.3, causal=True, softcap=5.0,
                          alibi_slopes=None, sinks=sinks.float())
    _, softcap, got_slopes, got_sinks = emulation.scores[0]
    assert softcap == 5.0 and got_slopes is slopes and got_sinks.dtype == torch.float32
    # ALiBi per sequence: compare against a reference with each sequence's row of slopes.
    outs = []
    for b in range(batch):
        q0, q1, k0 = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b])
        o, _ = reference.attention(q[None, q0:q1], k[None, k0 : k0 + int(seqused_k[b])],
                                   v[None, k0 : k0 + int(seqused_k[b])], 0.3, True, softcap=5.0,
                                   alibi_slopes=slopes[b : b + 1], sinks=sinks.float())
        outs.append(o[0])
    torch.testing.assert_close(out, torch.cat(outs).float(), atol=1e-5, rtol=1e-5)
    assert ref.shape == out.shape


@pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")
def test_custom_op_and_its_fake(emulated):
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert hasattr(torch.ops.flash_ladder, "fwd_varlen") and hasattr(torch.ops.flash_ladder, "bwd_varlen")
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    out, lse = torch.ops.flash_ladder.fwd_varlen(q, k, v, cu_q, cu_k, None, max_q, max_k, None, True, -1, 0, 0.0,
                                                 None, None, False, None, False)
    ref, ref_lse = per_sequence(q, k, v, cu_q, cu_k, causal=True)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, ref_lse, atol=1e-5, rtol=1e-5)
    with FakeTensorMode() as mode:
        fq, fk, fv, fcq, fck = (mode.from_tensor(t) for t in (q, k, v, cu_q, cu_k))
        out, lse = flash_attn_varlen_func(fq, fk, fv, fcq, fck, max_q, max_k, return_lse=True)
        assert out.shape == q.shape and lse.shape == (HQ, q.shape[0])


def paged_cache(seqlens_k=SEQLENS_K, page_size=16, hkv=HKV, d=D, dtype=torch.float32, seed=1):
    """(k_pages, v_pages, page_table, seqused_k, k, v): the keys of packed()'s
    sequences scattered over shuffled pages (one spare), and the same keys
    packed contiguously."""
    g = torch.Generator().manual_seed(seed)
    pages_of = [(n + page_size - 1) // page_size for n in seqlens_k]
    num_pages, max_pages = sum(pages_of) + 1, max(pages_of) + 1
    perm = torch.randperm(num_pages, generator=g)
    k_pages = torch.full((num_pages, page_size, hkv, d), float("nan"), dtype=dtype)
    v_pages = k_pages.clone()
    table = torch.full((len(seqlens_k), max_pages), -1, dtype=torch.int32)
    k = torch.randn(sum(seqlens_k), hkv, d, generator=g).to(dtype)
    v = torch.randn(sum(seqlens_k), hkv, d, generator=g).to(dtype)
    used, k0 = 0, 0
    for b, n in enumerate(seqlens_k):
        table[b, : pages_of[b]] = perm[used : used + pages_of[b]].int()
        used += pages_of[b]
        for j in range(n):
            page, row = int(table[b, j // page_size]), j % page_size
            k_pages[page, row], v_pages[page, row] = k[k0 + j], v[k0 + j]
        k0 += n
    return k_pages, v_pages, table, torch.tensor(seqlens_k, dtype=torch.int32), k, v


def test_page_table_reaches_the_library(emulated):
    q, _, _, cu_q, cu_k, max_q, max_k = packed()
    k_pages, v_pages, table, seqused_k, k, v = paged_cache()
    out, lse = flash_attn_varlen_func(q, k_pages, v_pages, cu_q, None, max_q, None, causal=True, return_lse=True,
                                      seqused_k=seqused_k, page_table=table)
    assert emulation.paged == [True]
    ref, ref_lse = per_sequence(q, k, v, cu_q, cu_k, causal=True)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, ref_lse, atol=1e-5, rtol=1e-5)
    if interface._HAS_CUSTOM_OP:  # the custom op takes the page table too
        out, _ = torch.ops.flash_ladder.fwd_varlen(q, k_pages, v_pages, cu_q, None, seqused_k, max_q, max_k, None,
                                                   True, -1, 0, 0.0, None, None, False, table, False)
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)


# --------------------------------------------------------------------- backward


def per_sequence_grads(dout, q, k, v, cu_q, cu_k, seqused_k=None, alibi_slopes=None, sinks=None, **kwargs):
    """(dq, dk, dv[, dsinks]) in float64: autograd through the packed output of
    reference.attention run on each sequence alone (its first seqused_k[b]
    keys; alibi_slopes (batch, heads): its row), an independent route to the
    gradients (the stand-ins use reference.attention_backward's formulas)."""
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    if sinks is not None:
        leaves.append(sinks.detach().double().requires_grad_())
    ql, kl, vl = leaves[:3]
    outs = []
    for b in range(cu_q.shape[0] - 1):
        q0, q1, k0, k1 = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        if seqused_k is not None:
            k1 = k0 + int(seqused_k[b])
        row = alibi_slopes[b : b + 1] if alibi_slopes is not None and alibi_slopes.dim() == 2 else alibi_slopes
        out, _ = reference.attention(ql[None, q0:q1], kl[None, k0:k1], vl[None, k0:k1], alibi_slopes=row,
                                     sinks=leaves[3] if sinks is not None else None, **kwargs)
        outs.append(out[0])
    grads = torch.autograd.grad(torch.cat(outs), leaves, dout.double(), allow_unused=True)
    return [torch.zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves)]


# Masks and score modifiers (the reference's names; "alibi" and "sinks" make
# per-sequence slopes (batch, heads_q) and a learnable sink, "seqused_k" uses
# fewer keys than each sequence holds).
GRAD_CASES = {
    "full": {},
    "causal": {"causal": True},
    "window": {"window_size": (4, 2)},
    "causal_window": {"causal": True, "window_size": (3, 3)},
    "softcap": {"causal": True, "softcap": 5.0},
    "alibi": {"alibi": True},
    "sinks": {"sinks": True},
    "seqused_k": {"seqused_k": True},
    "all": {"causal": True, "window_size": (6, 0), "softcap": 4.0, "alibi": True, "sinks": True, "seqused_k": True},
}
SEQUSED_K = [10, 0, 17, 2]  # of SEQLENS_K = [12, 7, 17, 3]: one sequence with no key at all


@pytest.mark.parametrize("heads", [(4, 2), (6, 1), (3, 3)], ids=["gqa", "mqa", "mha"])
@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients_match_per_sequence_reference(emulated, case, heads):
    hq, hkv = heads
    opts = GRAD_CASES[case]
    q, k, v, cu_q, cu_k, max_q, max_k = packed(hq=hq, hkv=hkv)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    g = torch.Generator().manual_seed(5)
    slopes = torch.rand(len(SEQLENS_Q), hq, generator=g) * 0.5 if opts.get("alibi") else None
    sinks = (torch.randn(hq, generator=g) * 2).requires_grad_() if opts.get("sinks") else None
    seqused_k = torch.tensor(SEQUSED_K, dtype=torch.int32) if opts.get("seqused_k") else None
    mask = {"causal": opts.get("causal", False), "window_size": opts.get("window_size", (-1, -1)),
            "softcap": opts.get("softcap", 0.0)}
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, alibi_slopes=slopes, learnable_sink=sinks,
                                 seqused_k=seqused_k, **mask)
    dout = torch.randn(out.shape, generator=g)
    leaves = (q, k, v) + ((sinks,) if sinks is not None else ())
    grads = torch.autograd.grad(out, leaves, dout)
    expected = per_sequence_grads(dout, q, k, v, cu_q, cu_k, seqused_k, alibi_slopes=slopes, sinks=sinks, **mask)
    for name, got, want, leaf in zip(("dq", "dk", "dv", "dsinks"), grads, expected, leaves):
        assert got.shape == leaf.shape and got.dtype == leaf.dtype, name
        torch.testing.assert_close(got, want.float(), atol=2e-5, rtol=2e-5, msg=lambda m: f"{name}: {m}")
    if seqused_k is not None:  # keys past seqused_k: exactly zero
        for b, used in enumerate(SEQUSED_K):
            k0, k1 = int(cu_k[b]), int(cu_k[b + 1])
            assert torch.all(grads[1][k0 + used : k1] == 0) and torch.all(grads[2][k0 + used : k1] == 0)
    left, right = mask["window_size"]
    window = (left, 0 if mask["causal"] else right)
    assert emulation.calls == [("forward_varlen", mask["causal"], *window), ("backward_varlen", mask["causal"], *window)]
    assert emulation.scores[1][1:] == emulation.scores[0][1:]  # the same score modifiers, as given


def test_saved_out_lse_and_flags_reach_the_backward(emulated):
    # The backward gets the forward's packed out and lse (heads_q, total_q),
    # deterministic and sync_check; an expanded dout (from .sum()) is copied
    # to a contiguous last dimension first.
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    q.requires_grad_()
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True, return_lse=True,
                                      deterministic=True, sync_check=True)
    assert out.requires_grad and not lse.requires_grad and lse.shape == (HQ, q.shape[0])
    out.sum().backward()
    (saved,) = emulation.saved
    assert saved["deterministic"] is True and saved["sync_check"] is True
    assert torch.equal(saved["o"], out.detach()) and torch.equal(saved["lse"], lse)
    assert q.grad is not None and k.grad is None
    flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k).sum().backward()
    assert emulation.saved[1]["deterministic"] is False and emulation.saved[1]["sync_check"] is False


def test_learnable_sink_alone_gets_its_gradient(emulated):
    # q, k, v frozen, a bf16 sink learning: cast to float32 for the library,
    # its gradient (summed over the sequences) back in bf16.
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    sinks = torch.randn(HQ).bfloat16().requires_grad_()
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True, learnable_sink=sinks)
    assert out.requires_grad and emulation.scores[0][3].dtype == torch.float32
    out.sum().backward()
    assert sinks.grad.dtype == torch.bfloat16
    (want,) = per_sequence_grads(torch.ones_like(out), q, k, v, cu_q, cu_k, causal=True, sinks=sinks.float())[3:]
    torch.testing.assert_close(sinks.grad, want.bfloat16())


def test_alibi_slopes_and_metadata_get_no_gradient(emulated):
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    q.requires_grad_()
    slopes = torch.rand(HQ, requires_grad=True)
    flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, alibi_slopes=slopes).sum().backward()
    assert q.grad is not None and slopes.grad is None


def gradcheck_call(seqused=True):
    """(f, inputs) for torch.autograd.gradcheck: a float64 call through the
    stand-ins with every feature that changes which gradient goes where (GQA,
    an empty sequence, seqused_k, causal, softcap, per-sequence ALiBi, sinks)."""
    q, k, v, cu_q, cu_k, max_q, max_k = packed([3, 0, 4], [5, 2, 3], hq=4, hkv=2, d=4, dtype=torch.float64, seed=7)
    seqused_k = torch.tensor([4, 2, 1], dtype=torch.int32) if seqused else None
    slopes = torch.rand(3, 4, generator=torch.Generator().manual_seed(8))
    sinks = torch.randn(4, dtype=torch.float64, generator=torch.Generator().manual_seed(9))

    def f(q, k, v, sinks):
        return flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True, softcap=3.0,
                                      alibi_slopes=slopes, learnable_sink=sinks, seqused_k=seqused_k)

    return f, tuple(t.requires_grad_() for t in (q, k, v, sinks))


def test_gradcheck(emulated):
    # The wiring (which gradient goes to which input, dk and dv summed over a
    # GQA group, zeros past seqused_k, dsinks over the sequences) against
    # finite differences; the stand-ins compute in float64 here.
    f, inputs = gradcheck_call()
    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("fault", ["dk_dv_swapped", "sequences_rolled", "keys_past_seqused_k", "dsinks_halved"])
def test_gradcheck_negative_control(emulated, monkeypatch, fault):
    # A backward that is wrong in one of the ways a wiring bug would be: gradcheck must say so.
    def broken(*args):
        dq, dk, dv, dsinks = emulation.backward_varlen(*args)
        if fault == "dk_dv_swapped":
            return dq, dv, dk, dsinks
        if fault == "sequences_rolled":
            return dq.roll(1, 0), dk, dv, dsinks
        if fault == "keys_past_seqused_k":  # key 4 of sequence 0 is past its seqused_k of 4
            dk = dk.clone()
            dk[4] = 1.0
            return dq, dk, dv, dsinks
        return dq, dk, dv, dsinks / 2

    monkeypatch.setattr(interface, "_backward_varlen", broken)
    f, inputs = gradcheck_call()
    assert not torch.autograd.gradcheck(f, inputs, raise_exception=False)


def test_paged_call_refuses_a_backward(emulated):
    q, _, _, cu_q, _, max_q, _ = packed()
    k_pages, v_pages, table, seqused_k, _, _ = paged_cache()
    args = (k_pages, v_pages, cu_q, None, max_q, None)
    kwargs = {"causal": True, "seqused_k": seqused_k, "page_table": table}
    with pytest.raises(NotImplementedError, match="a call with page_table has no backward"):
        flash_attn_varlen_func(q.clone().requires_grad_(), *args, **kwargs)
    with pytest.raises(NotImplementedError, match="page_table has no backward"):
        flash_attn_varlen_func(q, *args, learnable_sink=torch.zeros(HQ, requires_grad=True), **kwargs)
    with pytest.raises(NotImplementedError, match="page_table has no backward"):
        flash_attn_varlen_func(q, k_pages.clone().requires_grad_(), *args[1:], **kwargs)
    assert emulation.calls == []  # refused before anything ran
    with torch.no_grad():
        out = flash_attn_varlen_func(q.clone().requires_grad_(), *args, **kwargs)
    assert not out.requires_grad and emulation.paged == [True]
    if interface._HAS_CUSTOM_OP:  # the op itself: the forward runs, its backward refuses
        out, _ = torch.ops.flash_ladder.fwd_varlen(q.clone().requires_grad_(), k_pages, v_pages, cu_q, None,
                                                   seqused_k, max_q, 64, None, True, -1, 0, 0.0, None, None, False,
                                                   table, False)
        with pytest.raises(NotImplementedError, match="page_table has no backward"):
            out.sum().backward()


@pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")
def test_opcheck(emulated):
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    seqused_k = torch.tensor(SEQUSED_K, dtype=torch.int32)
    slopes, sinks = torch.rand(len(SEQLENS_Q), HQ), torch.randn(HQ, requires_grad=True)
    fwd = torch.ops.flash_ladder.fwd_varlen.default
    torch.library.opcheck(fwd, (q, k, v, cu_q, cu_k, None, max_q, max_k, None, True, -1, 0, 0.0, None, None, False,
                                None, False))
    torch.library.opcheck(fwd, (q, k, v, cu_q, cu_k, seqused_k, max_q, max_k, 0.5, False, 4, 2, 5.0, slopes, sinks,
                                False, None, True))
    o, lse = emulation.forward_varlen(q.detach(), k.detach(), v.detach(), cu_q, cu_k, seqused_k, max_q, max_k, None,
                                      True, -1, 0, 5.0, slopes, sinks.detach(), True, False)
    bwd = torch.ops.flash_ladder.bwd_varlen.default
    bwd_args = (torch.randn_like(o), q.detach(), k.detach(), v.detach(), o, lse, cu_q, cu_k, seqused_k, max_q, max_k,
                None, True, -1, 0, 5.0, slopes)
    torch.library.opcheck(bwd, (*bwd_args, sinks.detach(), False, False))
    torch.library.opcheck(bwd, (*bwd_args, None, True, False))


def varlen_model(**kwargs):
    torch.manual_seed(0)
    return VarlenAttention(dim=32, heads=4, heads_kv=2, head_dim=8, **kwargs)


@pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")
@pytest.mark.parametrize("kwargs", [{}, {"window_size": (5, 5), "softcap": 4.0, "learnable_sink": True}],
                         ids=["causal", "window_scores"])
def test_compile_fullgraph_forward_and_backward(emulated, kwargs):
    torch._dynamo.reset()
    model = varlen_model(**kwargs)
    x = torch.randn(sum(SEQLENS_Q), 32, requires_grad=True)
    cu_q = cu(SEQLENS_Q)
    recorder = Recorder()
    out = torch.compile(model, backend=recorder, fullgraph=True)(x, cu_q, max(SEQLENS_Q))
    ref = model(x, cu_q, max(SEQLENS_Q))  # eager: the direct path and its autograd.Function
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *model.parameters()], grad)
    expected = torch.autograd.grad(ref, [x, *model.parameters()], grad)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
    assert len(recorder.graphs) == 1
    assert any("flash_ladder.fwd_varlen" in op for op in recorder.ops()), recorder.ops()
    assert [c[0] for c in emulation.calls].count("backward_varlen") == 2  # compiled and eager
    if kwargs:
        names = [n for n, _ in model.named_parameters()]
        assert got[1 + names.index("sinks")].abs().sum() > 0
    torch._dynamo.reset()


@pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")
def test_compile_of_the_real_package_has_no_graph_break():
    # The real library, CPU tensors that require grad: dynamo traces the call
    # and AOTAutograd its backward (bwd_varlen's fake) into one graph; the
    # call then fails as an eager one would, with the library's check.
    torch._dynamo.reset()
    recorder = Recorder()
    q, k, v, cu_q, cu_k, max_q, max_k = packed()

    def f(q, k, v):
        return flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True) + 1

    with pytest.raises(ValueError, match="expected every tensor on one CUDA device|no variant supports this call"):
        torch.compile(f, backend=recorder, fullgraph=True)(*(t.requires_grad_() for t in (q, k, v)))
    assert len(recorder.graphs) == 1
    assert any("flash_ladder.fwd_varlen" in op for op in recorder.ops()), recorder.ops()
    torch._dynamo.reset()


# ---------------------------------------------------------------- bad arguments
# The real library's checks (no emulation): CPU tensors whose arguments pass
# end in the device check; bad ones name the argument.

NOT_ON_GPU = "expected every tensor on one CUDA device"


def raises(message):
    return pytest.raises(ValueError, match=re.escape(message))


def call(**changes):
    q, k, v, cu_q, cu_k, max_q, max_k = packed(dtype=torch.bfloat16, d=HEAD_DIM)
    args = dict(q=q, k=k, v=v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max_q, max_seqlen_k=max_k)
    args.update({name: change(args[name]) if callable(change) else change for name, change in changes.items()})
    return flash_attn_varlen_func(**args)


def test_valid_arguments_reach_the_device_check():
    with raises(NOT_ON_GPU):
        call()
    with raises(NOT_ON_GPU):
        call(seqused_k=torch.tensor([1, 2, 3, 3], dtype=torch.int32), causal=True, return_lse=True)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"q": lambda q: q[None]}, "q: expected a rank-3 packed view"),
        ({"cu_seqlens_q": lambda c: c.long()}, "cu_seqlens_q.dtype is torch.int64"),
        ({"cu_seqlens_q": lambda c: c.float()}, "cu_seqlens_q"),
        ({"cu_seqlens_k": lambda c: c[:-1]}, "cu_seqlens_k"),
        ({"seqused_k": torch.zeros(5, dtype=torch.int32)}, "seqused_k"),
        ({"max_seqlen_q": -1}, "max_seqlen_q = -1"),
        ({"max_seqlen_k": 10**6}, "max_seqlen_k = 1000000"),
        ({"k": lambda k: k[..., :32]}, "k.shape"),
        ({"softcap": -1.0}, "softcap"),
        ({"alibi_slopes": torch.zeros(3)}, "alibi_slopes"),
    ],
)
def test_bad_arguments_name_themselves(changes, message):
    with raises(message):
        call(**changes)


def paged_call(**changes):
    """call() against a paged cache: pages of 16 keys, seqused_k, no cu_seqlens_k."""
    k_pages, v_pages, table, seqused_k, _, _ = paged_cache(d=HEAD_DIM, dtype=torch.bfloat16)
    args = dict(k=k_pages, v=v_pages, cu_seqlens_k=None, page_table=table, seqused_k=seqused_k,
                max_seqlen_k=int(seqused_k.max()))
    args.update(changes)
    return call(**args)


def test_paged_arguments():
    with raises(NOT_ON_GPU):
        paged_call()
    with raises(NOT_ON_GPU):
        paged_call(max_seqlen_k=None, causal=True, return_lse=True)  # the table's capacity
    with raises("cu_seqlens_k is set with page_table"):
        paged_call(cu_seqlens_k=cu(SEQLENS_K))
    with raises("seqused_k is not set"):
        paged_call(seqused_k=None)
    with raises("page_table.dtype is torch.int64"):
        paged_call(page_table=torch.zeros(4, 3, dtype=torch.int64))
    with raises("page_table.shape[0] (batch) = 3"):
        paged_call(page_table=torch.zeros(3, 3, dtype=torch.int32))
    with raises("page_size) = 8; expected a power of two (16 to 2^30)"):
        pages_of_8 = torch.zeros(4, 8, HKV, HEAD_DIM, dtype=torch.bfloat16)
        paged_call(k=pages_of_8, v=pages_of_8)


def backward_call(**changes):
    """interface._backward_varlen on call()'s packed tensors, its o and packed
    lse (heads_q, total_q) made up: the library checks them all before it
    looks for a device."""
    q, k, v, cu_q, cu_k, max_q, max_k = packed(dtype=torch.bfloat16, d=HEAD_DIM)
    args = dict(dout=torch.randn_like(q), q=q, k=k, v=v, o=torch.randn_like(q), lse=torch.randn(HQ, q.shape[0]),
                cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, seqused_k=None, max_seqlen_q=max_q, max_seqlen_k=max_k,
                softmax_scale=None, causal=False, window_left=-1, window_right=-1, softcap=0.0, alibi_slopes=None,
                sinks=None, deterministic=False, sync_check=False)
    args.update({name: change(args[name]) if callable(change) else change for name, change in changes.items()})
    return interface._backward_varlen(**args)


@pytest.mark.backward
def test_valid_backward_arguments_reach_the_device_check():
    with raises(NOT_ON_GPU):
        backward_call()
    with raises(NOT_ON_GPU):
        backward_call(seqused_k=torch.tensor([1, 2, 3, 3], dtype=torch.int32), causal=True, window_left=3,
                      window_right=0, softcap=5.0, alibi_slopes=torch.rand(len(SEQLENS_Q), HQ), sinks=torch.zeros(HQ),
                      deterministic=True, sync_check=True)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"lse": lambda lse: lse[None]}, "lse: expected a rank-2 packed view [heads_q, total_q]"),
        ({"lse": lambda lse: lse.t().contiguous()}, "lse.shape[0] (heads_q)"),
        ({"lse": lambda lse: lse.bfloat16()}, "lse.dtype is bf16; expected f32"),
        ({"dout": lambda d: d[:-1]}, "dout.shape[0] (total_q)"),
        ({"dout": lambda d: d[None]}, "dout: expected a rank-3 packed view"),
        ({"o": lambda o: o.float()}, "o.dtype is f32; expected bf16"),
        ({"cu_seqlens_k": None}, "cu_seqlens_q is set but cu_seqlens_k is not"),
        ({"cu_seqlens_k": lambda c: c[:-1]}, "cu_seqlens_k.shape[0] (batch + 1)"),
        ({"cu_seqlens_q": lambda c: c.long()}, "cu_seqlens_q.dtype is torch.int64"),
        ({"seqused_k": torch.zeros(5, dtype=torch.int32)}, "seqused_k.shape[0] (batch) = 5"),
        ({"max_seqlen_q": -1}, "max_seqlen_q = -1"),
        ({"max_seqlen_k": 10**6}, "max_seqlen_k = 1000000"),
        ({"window_left": -2}, "window_left = -2"),
        ({"softcap": float("nan")}, "softcap"),
        ({"alibi_slopes": torch.zeros(len(SEQLENS_Q) + 1, HQ)}, "alibi_slopes"),
        ({"sinks": torch.zeros(HQ + 1)}, "sinks"),
    ],
)
def test_bad_backward_arguments_name_themselves(changes, message):
    with raises(message):
        backward_call(**changes)
