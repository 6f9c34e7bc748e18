"""flash_attn_varlen_func on the CPU: the arguments reach the library's level
(emulation's stand-in, each sequence through the reference) and match a
per-sequence reference; bad arguments raise ValueError naming them (the
library's own checks, as in test_errors); inputs that require grad raise
NotImplementedError (no backward yet)."""

import re

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

import flash_ladder  # noqa: E402
from flash_ladder import flash_attn_varlen_func, interface  # noqa: E402

import emulation  # noqa: E402
import reference  # noqa: E402

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


def test_inputs_that_require_grad_are_refused(emulated):
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    with pytest.raises(NotImplementedError, match="backward of variable-length batches is not implemented yet"):
        flash_attn_varlen_func(q.requires_grad_(), k, v, cu_q, cu_k, max_q, max_k)
    sinks = torch.zeros(HQ, requires_grad=True)
    with pytest.raises(NotImplementedError, match="not implemented yet"):
        flash_attn_varlen_func(q.detach(), k, v, cu_q, cu_k, max_q, max_k, learnable_sink=sinks)
    with torch.no_grad():  # no gradient asked for: the forward runs
        out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k)
    assert not out.requires_grad


@pytest.mark.skipif(not interface._HAS_CUSTOM_OP, reason="torch.library.custom_op needs torch >= 2.4")
def test_custom_op_and_its_fake(emulated):
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert hasattr(torch.ops.flash_ladder, "fwd_varlen")
    q, k, v, cu_q, cu_k, max_q, max_k = packed()
    out, lse = torch.ops.flash_ladder.fwd_varlen(q, k, v, cu_q, cu_k, None, max_q, max_k, None, True, -1, 0, 0.0,
                                                 None, None, False, None)
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
                                                   True, -1, 0, 0.0, None, None, False, table)
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------- bad arguments
# The real library's checks (no emulation): CPU tensors whose arguments pass
# end in the device check; bad ones name the argument.

NOT_ON_GPU = "expected every tensor on one CUDA device"


def raises(message):
    return pytest.raises(ValueError, match=re.escape(message))


def call(**changes):
    q, k, v, cu_q, cu_k, max_q, max_k = packed(dtype=torch.bfloat16, d=64)
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
    k_pages, v_pages, table, seqused_k, _, _ = paged_cache(d=64, dtype=torch.bfloat16)
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
        pages_of_8 = torch.zeros(4, 8, HKV, 64, dtype=torch.bfloat16)
        paged_call(k=pages_of_8, v=pages_of_8)
