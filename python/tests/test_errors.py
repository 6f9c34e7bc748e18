"""Each class of bad argument raises ValueError carrying the library's message.

These run on the CPU: the library checks every argument before it looks for a
device, and the package asks it to (a plan, which launches nothing) before
saying that CPU tensors cannot run. So the tensors here are CPU tensors, and
a call whose arguments are fine ends in "expected every tensor on one CUDA
device" instead."""

import math
import re

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

from flash_ladder import flash_attn_func, flash_attn_with_kvcache, interface  # noqa: E402

from build_config import HEAD_DIM  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

B, SQ, SK, HQ, HKV, D = 2, 16, 32, 4, 2, HEAD_DIM
BF16 = torch.bfloat16


def qkv(sq=SQ, sk=SK, hq=HQ, hkv=HKV, d=D, dtype=BF16):
    return (torch.randn(B, sq, hq, d, dtype=dtype), torch.randn(B, sk, hkv, d, dtype=dtype),
            torch.randn(B, sk, hkv, d, dtype=dtype))


def raises(message):
    return pytest.raises(ValueError, match=re.escape(message))


NOT_ON_GPU = "expected every tensor on one CUDA device"


def test_valid_arguments_reach_the_device_check():
    q, k, v = qkv()
    with raises(NOT_ON_GPU):
        flash_attn_func(q, k, v)
    with raises(NOT_ON_GPU):
        flash_attn_func(q, k, v, causal=True, return_lse=True)
    with raises(NOT_ON_GPU):
        flash_attn_func(q.transpose(1, 2).contiguous().transpose(1, 2), k, v)  # BHSD memory, BSHD view
    with raises(NOT_ON_GPU):
        flash_attn_func(q.requires_grad_(), k, v)  # the autograd path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda q, k, v: (q[0], k, v), "q: expected a rank-4 view, got rank 3"),
        (lambda q, k, v: (q, k[..., : D // 2], v), f"k.shape[3] (head_dim) = {D // 2}; expected {D} (q.shape[3])"),
        (lambda q, k, v: (q, k, v[:, :20]), "v.shape[1] (seqlen_k) = 20; expected 32 (k's shape)"),
        (lambda q, k, v: (q, k[:1], v[:1]), "k.shape[0] (batch) = 1; expected 2 (q.shape[0])"),
        (lambda q, k, v: (q[:, :, :3], k, v), "q.shape[2] (heads_q) = 3 is not a multiple of k.shape[2] (heads_kv) = 2"),
        (lambda q, k, v: (q, k.half(), v), "k.dtype is f16; expected bf16 (the dtype of q)"),
        (lambda q, k, v: (q, k, v.float()), "v.dtype is f32; expected bf16 (the dtype of q)"),
        (lambda q, k, v: (q.double(), k, v), "q.dtype is torch.float64; flash takes float16, bfloat16 and float32"),
        (lambda q, k, v: (q, k.to(torch.int32), v), "k.dtype is i32; expected bf16"),
        (lambda q, k, v: (q[:, :, :0], k, v), "q.shape[2] (heads_q) = 0; expected >= 1"),
        (lambda q, k, v: (torch.tensor(1.0, dtype=BF16), k, v), "q: expected a tensor of rank >= 1, got a 0-dim tensor"),
        (lambda q, k, v: (q.unsqueeze(0), k, v), "q.rank = 5; expected 1 to 4"),
    ],
)
def test_forward_shape_and_dtype(make, message):
    with raises(message):
        flash_attn_func(*make(*qkv()))


def test_forward_unsupported_head_dim():
    with raises("head_dim 600 is not supported"):
        flash_attn_func(*qkv(d=600))


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, math.inf])
def test_forward_softmax_scale(scale):
    with raises("expected a finite value > 0"):
        flash_attn_func(*qkv(), softmax_scale=scale)


def test_forward_last_dim_strided_is_copied_not_rejected():
    # The library needs a contiguous last dimension; like FlashAttention, the
    # package copies such a tensor, so the call gets as far as the device.
    q, k, v = qkv()
    q_strided = torch.randn(B, SQ, HQ, 2 * D, dtype=BF16)[..., ::2]
    assert q_strided.stride(-1) == 2
    with raises(NOT_ON_GPU):
        flash_attn_func(q_strided, k, v)


@pytest.mark.backward
def test_backward_arguments():
    q, k, v = qkv()
    o = torch.randn_like(q)
    lse = torch.randn(B, HQ, SQ)
    dout = torch.randn_like(q)
    with raises("dout.shape[1] (seqlen_q) = 8; expected 16 (q's shape)"):
        interface._backward(dout[:, :8], q, k, v, o, lse, None, False, -1, -1, 0.0, None, None, False)
    with raises("lse.dtype is bf16; expected f32"):
        interface._backward(dout, q, k, v, o, lse.to(BF16), None, False, -1, -1, 0.0, None, None, False)
    with raises("lse.shape[2] (seqlen_q) = 15; expected 16 (q.shape[1])"):
        interface._backward(dout, q, k, v, o, lse[..., 1:], None, False, -1, -1, 0.0, None, None, False)
    with raises("softmax_scale"):
        interface._backward(dout, q, k, v, o, lse, -1.0, False, -1, -1, 0.0, None, None, False)
    with raises(NOT_ON_GPU):
        interface._backward(dout, q, k, v, o, lse, None, True, -1, 0, 0.0, None, None, True)


CAPACITY = 64


def cache(pages=None, page_size=16, dtype=BF16):
    shape = (pages, page_size, HKV, D) if pages else (B, CAPACITY, HKV, D)
    return torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)


@pytest.mark.decode
def test_kvcache_valid_arguments_reach_the_device_check():
    q = torch.randn(B, 1, HQ, D, dtype=BF16)
    k_cache, v_cache = cache()
    k_new, v_new = torch.randn(B, 1, HKV, D, dtype=BF16), torch.randn(B, 1, HKV, D, dtype=BF16)
    with raises(NOT_ON_GPU):
        flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=5)
    with raises(NOT_ON_GPU):
        flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=torch.tensor([3, 4], dtype=torch.int32))
    with raises(NOT_ON_GPU):
        flash_attn_with_kvcache(q, k_cache, v_cache)  # the whole cache
    pages_k, pages_v = cache(pages=8)
    page_table = torch.arange(8, dtype=torch.int32).reshape(B, 4)
    with raises(NOT_ON_GPU):
        flash_attn_with_kvcache(q, pages_k, pages_v, cache_seqlens=10, page_table=page_table, causal=True)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"cache_seqlens": 1, "num_splits": 300}, "num_splits = 300; expected 0 (choose) to 256"),
        ({"cache_seqlens": 1, "num_splits": -1}, "num_splits = -1"),
        ({"cache_seqlens": torch.tensor([1, 2])}, "cache_seqlens.dtype is torch.int64"),
        ({"cache_seqlens": torch.tensor([1, 2, 3], dtype=torch.int32)}, "cache_seqlens.shape[0] (batch) = 3; expected 2"),
        ({"k": "new", "cache_seqlens": 1}, "k_new is set but v_new is not; an append needs both"),
        ({"k": "new"}, "k and v are appended at cache_seqlens, so cache_seqlens must be given"),
        ({"cache_seqlens": 1, "softmax_scale": -0.5}, "softmax_scale = -0.500000; expected a finite value > 0"),
        ({"cache_seqlens": 1, "page_table": torch.zeros(B, 4, dtype=torch.int64)}, "page_table.dtype is torch.int64"),
        ({"cache_seqlens": 1, "page_table": torch.zeros(B, 4, dtype=torch.int32), "pages": 12},
         "k_cache.shape[1] (page_size) = 12; expected a power of two"),
        ({"cache_seqlens": 1, "v_dtype": torch.float16}, "v_cache.dtype is f16; expected bf16 (the dtype of q)"),
    ],
)
def test_kvcache_arguments(kwargs, message):
    kwargs = dict(kwargs)
    q = torch.randn(B, 1, HQ, D, dtype=BF16)
    page_size = kwargs.pop("pages", None)
    k_cache, v_cache = cache(pages=8, page_size=page_size) if page_size else cache()
    v_dtype = kwargs.pop("v_dtype", None)
    if v_dtype is not None:
        v_cache = v_cache.to(v_dtype)
    if kwargs.get("k") == "new":
        kwargs["k"] = torch.randn(B, 1, HKV, D, dtype=BF16)
    with raises(message):
        flash_attn_with_kvcache(q, k_cache, v_cache, **kwargs)


def test_kvcache_outputs_may_not_overlap_inputs():
    # The append writes k_cache, so no input may share its memory.
    k_cache, v_cache = cache()
    q = k_cache[:, :1, :, :].expand(B, 1, HKV, D).repeat_interleave(HQ // HKV, dim=2)
    k_new = k_cache[:, 5:6]  # the new keys are part of the cache they are written to
    with raises("k_cache overlaps k_new"):
        flash_attn_with_kvcache(q, k_cache, v_cache, k_new, torch.zeros_like(k_new), cache_seqlens=1)


@pytest.mark.parametrize(
    "window_size, causal, message",
    [
        ((-2, -1), False, "window_left = -2: expected -1 (unbounded) or >= 0"),
        ((-1, -5), False, "window_right = -5: expected -1 (unbounded) or >= 0"),
        ((-3, 4), True, "window_left = -3"),
    ],
)
def test_bad_window_sizes(window_size, causal, message):
    q, k, v = qkv()
    with raises(message):
        flash_attn_func(q, k, v, causal=causal, window_size=window_size)
    with raises(message):
        flash_attn_func(q.requires_grad_(), k, v, causal=causal, window_size=window_size)  # the autograd path
    with raises(message):
        interface.plan_forward(q, k, v, causal=causal, window_size=window_size)
    with raises(message):
        flash_attn_with_kvcache(q[:, :1], *cache(), cache_seqlens=5, causal=causal, window_size=window_size)


# causal with (w, w) is FlashAttention's (w, 0): Hugging Face passes it so for Mistral.
ACCEPTED_WINDOWS = [(True, (8, 8)), (True, (0, -1)), (True, (-1, 100)), (False, (0, 0)), (False, (-1, 3)),
                    (False, (1000, -1))]


def test_window_sizes_that_are_accepted():
    q, k, v = qkv()
    for causal, window_size in ACCEPTED_WINDOWS:
        with raises(NOT_ON_GPU):
            flash_attn_func(q, k, v, causal=causal, window_size=window_size)


@pytest.mark.decode
def test_kvcache_window_sizes_that_are_accepted():
    q = qkv()[0]
    for causal, window_size in ACCEPTED_WINDOWS:
        with raises(NOT_ON_GPU):
            flash_attn_with_kvcache(q[:, :1], *cache(), cache_seqlens=5, causal=causal, window_size=window_size)


@pytest.mark.backward
def test_backward_window_arguments():
    q, k, v = qkv()
    o, lse, dout = torch.randn_like(q), torch.randn(B, HQ, SQ), torch.randn_like(q)
    with raises("window_left = -2"):
        interface._backward(dout, q, k, v, o, lse, None, False, -2, -1, 0.0, None, None, False)
    with raises("window_right = 3 with causal = true: causal means window_right = 0"):
        # below the public layer's normalization
        interface._backward(dout, q, k, v, o, lse, None, True, -1, 3, 0.0, None, None, False)
    with raises(NOT_ON_GPU):
        interface._backward(dout, q, k, v, o, lse, None, True, 16, 0, 0.0, None, None, False)


# ----------------------------------------------------------- score modifiers


def _every_path(q, k, v, message, **scores):
    """The forward (with and without autograd), the plan and the decode all
    raise `message` for these score modifiers."""
    with raises(message):
        flash_attn_func(q, k, v, **scores)
    with raises(message):
        flash_attn_func(q.clone().requires_grad_(), k, v, **scores)  # the autograd path
    with raises(message):
        interface.plan_forward(q, k, v, **scores)
    with raises(message):
        flash_attn_with_kvcache(q[:, :1], *cache(), cache_seqlens=5, **scores)


@pytest.mark.parametrize("softcap", [-1.0, math.nan, math.inf, -math.inf])
def test_bad_softcaps(softcap):
    _every_path(*qkv(), "softcap", softcap=softcap)


@pytest.mark.parametrize(
    "scores, message",
    [
        ({"alibi_slopes": torch.zeros(HQ, dtype=BF16)}, "alibi_slopes"),  # FlashAttention-2's rule: float32
        ({"alibi_slopes": torch.zeros(HKV)}, "alibi_slopes"),  # one slope per query head
        ({"alibi_slopes": torch.zeros(B + 1, HQ)}, "alibi_slopes"),
        ({"alibi_slopes": torch.zeros(1, B, HQ)}, "alibi_slopes"),
        ({"alibi_slopes": torch.zeros(HQ, dtype=torch.int32)}, "alibi_slopes"),
        ({"learnable_sink": torch.zeros(HQ + 1)}, "sinks"),
        ({"learnable_sink": torch.zeros(1, HQ)}, "sinks"),
        ({"learnable_sink": torch.zeros(HQ, dtype=torch.int32)}, "sinks"),
        ({"learnable_sink": torch.zeros(HQ, dtype=torch.float64)}, "sinks"),
        ({"learnable_sink": torch.tensor(0.0)}, "sinks"),
    ],
    ids=["alibi_bf16", "alibi_heads_kv", "alibi_batch", "alibi_rank3", "alibi_int32", "sink_heads", "sink_rank2",
         "sink_int32", "sink_float64", "sink_0d"],
)
def test_bad_alibi_slopes_and_sinks(scores, message):
    _every_path(*qkv(), message, **scores)


def accepted_scores():
    return [{"softcap": 0.0}, {"softcap": None}, {"softcap": 50.0}, {"alibi_slopes": torch.rand(HQ)},
            {"alibi_slopes": torch.rand(B, HQ)}, {"learnable_sink": torch.randn(HQ)},
            {"learnable_sink": torch.randn(HQ, dtype=BF16)},  # FlashAttention-4's dtype: cast to float32
            {"softcap": 30.0, "alibi_slopes": torch.rand(HQ), "learnable_sink": torch.randn(HQ)}]


def test_score_modifiers_that_are_accepted():
    q, k, v = qkv()
    for scores in accepted_scores():
        with raises(NOT_ON_GPU):
            flash_attn_func(q, k, v, causal=True, **scores)
        with raises(NOT_ON_GPU):
            flash_attn_func(q.clone().requires_grad_(), k, v, **scores)


@pytest.mark.decode
def test_kvcache_score_modifiers_that_are_accepted():
    q = qkv()[0]
    for scores in accepted_scores():
        with raises(NOT_ON_GPU):
            flash_attn_with_kvcache(q[:, :1], *cache(), cache_seqlens=5, causal=True, **scores)


def test_the_device_check_names_the_score_tensors():
    with raises("alibi_slopes on cpu, learnable_sink on cpu"):
        flash_attn_func(*qkv(), alibi_slopes=torch.rand(HQ), learnable_sink=torch.randn(HQ))


@pytest.mark.backward
def test_backward_score_arguments():
    q, k, v = qkv()
    o, lse, dout = torch.randn_like(q), torch.randn(B, HQ, SQ), torch.randn_like(q)
    with raises("softcap"):
        interface._backward(dout, q, k, v, o, lse, None, False, -1, -1, -2.0, None, None, False)
    with raises("alibi_slopes"):
        interface._backward(dout, q, k, v, o, lse, None, False, -1, -1, 0.0, torch.zeros(HQ - 1), None, False)
    with raises("sinks"):
        interface._backward(dout, q, k, v, o, lse, None, False, -1, -1, 0.0, None, torch.zeros(HQ, dtype=BF16), False)
    with raises(NOT_ON_GPU):  # dsinks, allocated by the package, passes the library's checks
        interface._backward(dout, q, k, v, o, lse, None, True, -1, 0, 30.0, torch.rand(B, HQ), torch.randn(HQ), False)
