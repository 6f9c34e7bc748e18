"""The dense forward packs its args struct in parts (interface._DenseForwardPack:
the constant fields once per buffer, then q, k, v, o and the scalars per call).
Here the bytes each call hands the library must equal one whole-struct pack of
the same arguments (flash_c.h's layout, _capi.struct_format), over random
sequences of calls whose optional tensors come and go. CPU only: the library's
entry point is replaced by one that records the struct."""

import ctypes
import random
import struct

import pytest

torch = pytest.importorskip("torch", reason="the torch-dependent tests need torch (pip install torch)")

from flash_ladder import _capi, interface  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class _Recorder:
    """An Entry whose run() keeps the bytes it was handed."""

    def __init__(self, real):
        self.args_cls, self.size, self.pack_into = real.args_cls, real.size, real.pack_into
        self.calls = []

    def run(self, address):
        self.calls.append(ctypes.string_at(address, self.size))
        return 0


def test_dense_forward_packs_what_a_whole_struct_pack_would(monkeypatch):
    recorder = _Recorder(interface._library().forward)
    monkeypatch.setattr(interface, "_dense_pack", interface._DenseForwardPack(recorder))
    monkeypatch.setattr(interface, "_all_on", lambda device, *tensors: True)  # CPU tensors, as if on one device
    monkeypatch.setattr(interface, "_current_device", lambda: -1)
    monkeypatch.setattr(interface, "_capturing", lambda: False)
    q = torch.randn(2, 33, 8, 64, dtype=torch.bfloat16)
    k, v = torch.randn(2, 40, 2, 64, dtype=torch.bfloat16), torch.randn(2, 40, 2, 64, dtype=torch.bfloat16)
    o, lse = torch.empty_like(q), torch.empty(2, 8, 33)
    monkeypatch.setattr(interface, "_out_like", lambda t: o)
    monkeypatch.setattr(interface, "_lse_for", lambda t: lse)
    alibi, sinks = torch.rand(8), torch.randn(8)
    whole = struct.Struct(_capi.struct_format(_capi.ForwardArgs))
    expected = ctypes.create_string_buffer(whole.size)
    rng = random.Random(7)
    for _ in range(200):
        scale = rng.choice([None, 0.125, 2.0])
        causal = rng.choice([False, True])
        left, right = rng.choice([(-1, -1), (128, 0), (5, 7)])
        softcap = rng.choice([0.0, 30.0])
        a, s, with_lse = rng.choice([None, alibi]), rng.choice([None, sinks]), rng.choice([False, True])
        interface._forward(q, k, v, scale, causal, left, right, softcap, a, s, with_lse)
        f, opt = interface._fields, interface._optional
        whole.pack_into(
            expected, 0, whole.size, *f(q, "q"), *f(k, "k"), *f(v, "v"), *f(o, "o"), *opt(lse if with_lse else None, "lse"),
            0, 0, 0, 0, *interface._scale(scale), 1 if causal else 0, left, right, 0,
            *interface._score_fields(softcap, a, s), *interface._NOT_VARLEN,
        )  # fmt: skip
        assert recorder.calls[-1] == expected.raw, (scale, causal, left, right, softcap, a is None, s is None, with_lse)
