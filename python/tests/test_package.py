"""The package and its ctypes layer, without torch: it imports, finds and loads
libflash_c.so, and its struct layouts are the C header's (every field of every
args struct reaches the library under its own name)."""

import ctypes
import struct

import pytest

import flash_ladder
from flash_ladder import _capi

from build_config import HEAD_DIM


def test_imports_without_torch_or_library():
    assert flash_ladder.__version__
    assert issubclass(flash_ladder.FlashError, RuntimeError)


def test_library_loads():
    lib = _capi.library()
    assert lib.path.name == _capi.LIBRARY_NAME
    assert lib.cdll.flash_c_abi_version() == _capi.ABI_VERSION


@pytest.mark.parametrize(
    "cls, size, version2_size",
    [(_capi.ForwardArgs, 1048, 464), (_capi.BackwardArgs, 1368, 784), (_capi.DecodeArgs, 1040, 872),
     (_capi.Plan, 80, None)],
)
def test_struct_sizes_match_the_header(cls, size, version2_size):
    # flash_c.h's structs on 64-bit Linux (tests/test_c_api.c checks the same
    # numbers); the library itself rejects a call whose struct_size is
    # neither this nor an earlier version's (test_struct_size_is_checked).
    assert ctypes.sizeof(cls) == size
    if cls is not _capi.Plan:
        assert struct.calcsize(_capi.struct_format(cls)) == size
        assert cls.softcap.offset == version2_size  # version 3 appended the score modifiers
    if cls is _capi.ForwardArgs:
        assert cls.cu_seqlens_q.offset == 632  # version 4 appended the forward's varlen fields
        assert cls.page_table.offset == 968  # version 5 appended the forward's page table
    if cls is _capi.BackwardArgs:
        assert cls.cu_seqlens_q.offset == 1032  # version 6 appended the backward's varlen fields
        for name in ("cu_seqlens_q", "cu_seqlens_k", "seqused_k", "status", "max_seqlen_q", "sync_check"):
            # the same fields as the forward's, in the same order
            assert (getattr(cls, name).offset - cls.cu_seqlens_q.offset
                    == getattr(_capi.ForwardArgs, name).offset - _capi.ForwardArgs.cu_seqlens_q.offset)


def test_struct_format_of_a_field_range():
    # struct_format(cls, first, stop): the bytes from first up to stop, padding included, as the
    # dense forward packs its parts (interface._DenseForwardPack); whole structs are the full range
    f = _capi.ForwardArgs
    for first, stop in (("q", "lse"), ("stream", "alibi_slopes"), ("softcap", "cu_seqlens_q"), ("q", None)):
        end = ctypes.sizeof(f) if stop is None else getattr(f, stop).offset
        assert struct.calcsize(_capi.struct_format(f, first, stop)) == end - getattr(f, first).offset
    assert _capi.struct_format(f, "struct_size") == _capi.struct_format(f)


def test_version3_forward_struct_is_read_without_varlen():
    # A caller of version 3 ends its struct where cu_seqlens_q begins; what
    # lies after (a bad dtype here) is not read.
    entry = _capi.library().forward
    fields = dict(_valid_forward(), cu_seqlens_k={"dtype": 7, "rank": 1})
    args = _args(entry, fields)
    args.struct_size = _capi.ForwardArgs.cu_seqlens_q.offset
    try:
        entry.plan(ctypes.addressof(args))
    except _capi.FlashError as e:
        assert e.status == _capi.ERROR_NO_DEVICE, str(e)
    args.struct_size = entry.size
    with pytest.raises(ValueError, match="cu_seqlens_k.dtype = 7 is not a flash_dtype"):
        entry.plan(ctypes.addressof(args))


def test_version4_forward_struct_is_read_without_a_page_table():
    # A caller of version 4 ends its struct where page_table begins.
    entry = _capi.library().forward
    fields = dict(_valid_forward(), page_table={"dtype": 7, "rank": 2})
    args = _args(entry, fields)
    args.struct_size = _capi.ForwardArgs.page_table.offset
    try:
        entry.plan(ctypes.addressof(args))
    except _capi.FlashError as e:
        assert e.status == _capi.ERROR_NO_DEVICE, str(e)
    args.struct_size = entry.size
    with pytest.raises(ValueError, match="page_table.dtype = 7 is not a flash_dtype"):
        entry.plan(ctypes.addressof(args))


@pytest.mark.backward
def test_version5_backward_struct_is_read_without_varlen():
    # A caller of versions 3 to 5 ends its backward struct where cu_seqlens_q
    # begins; what lies after (a bad dtype here) is not read.
    entry = _capi.library().backward
    fields = dict(_valid_backward(), cu_seqlens_k={"dtype": 7, "rank": 1})
    args = _args(entry, fields)
    args.struct_size = _capi.BackwardArgs.cu_seqlens_q.offset
    try:
        entry.plan(ctypes.addressof(args))
    except _capi.FlashError as e:
        assert e.status == _capi.ERROR_NO_DEVICE, str(e)
    args.struct_size = entry.size
    with pytest.raises(ValueError, match="cu_seqlens_k.dtype = 7 is not a flash_dtype"):
        entry.plan(ctypes.addressof(args))


def _args(entry, fields):
    """entry's args struct, zeroed but for struct_size and `fields` (name ->
    value, tensors as dicts)."""
    args = entry.args_cls()
    args.struct_size = entry.size
    for name, value in fields.items():
        if isinstance(value, dict):
            tensor = getattr(args, name)
            for key, v in value.items():
                if key in ("shape", "strides"):
                    getattr(tensor, key)[:] = v
                else:
                    setattr(tensor, key, v)
        else:
            setattr(args, name, value)
    return args


def _call(entry, **fields):
    """Calls entry with _args(entry, fields); returns (status, message). Only
    for calls that the argument checks reject: the addresses are made up."""
    args = _args(entry, fields)
    status = entry.run(ctypes.addressof(args))
    return status, _capi.last_error()


def test_struct_size_is_checked():
    entry = _capi.library().forward
    args = _capi.ForwardArgs()
    args.struct_size = entry.size - 8
    assert entry.run(ctypes.addressof(args)) == _capi.ERROR_INVALID_ARGUMENT
    assert "struct_size" in _capi.last_error()


@pytest.mark.parametrize(
    "entry_name, tensor_names",
    [
        ("forward", ["q", "k", "v", "o", "lse", "alibi_slopes", "sinks", "cu_seqlens_q", "cu_seqlens_k", "seqused_k",
                     "status", "page_table"]),
        ("backward", ["q", "k", "v", "o", "lse", "dout", "dq", "dk", "dv", "alibi_slopes", "sinks", "dsinks",
                      "cu_seqlens_q", "cu_seqlens_k", "seqused_k", "status"]),
        ("decode", ["q", "k_cache", "v_cache", "page_table", "cache_seqlens", "k_new", "v_new", "o", "lse", "status",
                    "alibi_slopes", "sinks"]),
    ],
)
def test_each_tensor_field_reaches_the_library_under_its_name(entry_name, tensor_names):
    # The C layer reads every flash_tensor before the C++ checks run, so a
    # bad dtype is named whatever the other (zeroed) fields hold.
    entry = getattr(_capi.library(), entry_name)
    for name in tensor_names:
        status, message = _call(entry, **{name: {"dtype": 7, "rank": 4}})
        assert status == _capi.ERROR_INVALID_ARGUMENT
        assert message == f"{name}.dtype = 7 is not a flash_dtype"


def _bshd(address, seqlen, heads, head_dim=HEAD_DIM, batch=2, dtype=_capi.BF16):
    """A contiguous (batch, seqlen, heads, head_dim) view at a made-up address."""
    return {"data": address, "dtype": dtype, "rank": 4, "shape": [batch, seqlen, heads, head_dim],
            "strides": [seqlen * heads * head_dim, heads * head_dim, head_dim, 1]}


def _valid_forward():
    return {"q": _bshd(1 << 28, 16, 4), "k": _bshd(2 << 28, 32, 2), "v": _bshd(3 << 28, 32, 2),
            "o": _bshd(4 << 28, 16, 4)}


def _valid_decode():
    cache_seqlens = {"data": 5 << 28, "dtype": _capi.I32, "rank": 1, "shape": [2, 0, 0, 0], "strides": [1, 0, 0, 0]}
    return {"q": _bshd(1 << 28, 1, 4), "k_cache": _bshd(2 << 28, 64, 2), "v_cache": _bshd(3 << 28, 64, 2),
            "cache_seqlens": cache_seqlens, "o": _bshd(4 << 28, 1, 4)}


def _valid_backward():
    lse = {"data": 5 << 28, "dtype": _capi.F32, "rank": 3, "shape": [2, 4, 16, 0], "strides": [64, 16, 1, 0]}
    return {"q": _bshd(1 << 28, 16, 4), "k": _bshd(2 << 28, 32, 2), "v": _bshd(3 << 28, 32, 2),
            "o": _bshd(4 << 28, 16, 4), "lse": lse, "dout": _bshd(6 << 28, 16, 4),
            "dq": _bshd(7 << 28, 16, 4), "dk": _bshd(8 << 28, 32, 2), "dv": _bshd(9 << 28, 32, 2)}


def test_scalar_fields_reach_the_library():
    forward = _capi.library().forward
    _, message = _call(forward, kernel=b"nonexistent_variant", **_valid_forward())
    assert "unknown variant 'nonexistent_variant'" in message
    _, message = _call(forward, has_softmax_scale=1, softmax_scale=-2.0, **_valid_forward())
    assert "softmax_scale = -2.000000" in message
    decode = _capi.library().decode
    decode_args = _valid_decode()
    status, message = _call(decode, num_splits=300, **decode_args)
    assert status == _capi.ERROR_INVALID_ARGUMENT and "num_splits = 300" in message
    backward = _capi.library().backward
    backward_args = _valid_backward()
    _, message = _call(backward, kernel=b"nonexistent_variant", **backward_args)
    assert "unknown backward variant 'nonexistent_variant'" in message


@pytest.mark.parametrize("entry_name", ["forward", "backward", "decode"])
def test_window_fields_reach_the_library_under_their_names(entry_name):
    # Valid tensors at made-up addresses and one bad side at a time: the
    # message names the field that was set, so each lands where the header has it.
    entry = getattr(_capi.library(), entry_name)
    tensors = {"forward": _valid_forward, "backward": _valid_backward, "decode": _valid_decode}[entry_name]()
    status, message = _call(entry, window_left=-2, window_right=-1, **tensors)
    assert status == _capi.ERROR_INVALID_ARGUMENT and "window_left = -2" in message, message
    status, message = _call(entry, window_left=-1, window_right=-7, **tensors)
    assert status == _capi.ERROR_INVALID_ARGUMENT and "window_right = -7" in message, message
    status, message = _call(entry, causal=1, window_left=-1, window_right=5, **tensors)
    assert status == _capi.ERROR_INVALID_ARGUMENT and "window_right = 5 with causal = true" in message, message


@pytest.mark.parametrize("entry_name", ["forward", "backward", "decode"])
def test_score_fields_reach_the_library_under_their_names(entry_name):
    # softcap by a bad value; the optional f32 tensors by a bad shape (they
    # are valid views otherwise), so the C++ checks name each one.
    entry = getattr(_capi.library(), entry_name)
    tensors = {"forward": _valid_forward, "backward": _valid_backward, "decode": _valid_decode}[entry_name]()
    status, message = _call(entry, softcap=-3.0, **tensors)
    assert status == _capi.ERROR_INVALID_ARGUMENT and "softcap" in message, message
    heads = {"data": 10 << 28, "dtype": _capi.F32, "rank": 1, "shape": [3, 0, 0, 0], "strides": [1, 0, 0, 0]}
    for name in ("alibi_slopes", "sinks"):
        status, message = _call(entry, **{name: heads}, **tensors)
        assert status == _capi.ERROR_INVALID_ARGUMENT and name in message, message
    if entry_name == "backward":
        sinks = dict(heads, shape=[4, 0, 0, 0])
        status, message = _call(entry, sinks=sinks, dsinks=dict(heads, data=11 << 28), **tensors)
        assert status == _capi.ERROR_INVALID_ARGUMENT and "dsinks" in message, message


@pytest.mark.parametrize(
    "entry_name",
    ["forward", pytest.param("backward", marks=pytest.mark.backward), pytest.param("decode", marks=pytest.mark.decode)],
)
def test_a_version2_struct_is_read_without_the_score_fields(entry_name):
    # A struct_size of version 2 (up to softcap): the library ignores what
    # follows, so the bad softcap there is not seen and the call is valid.
    entry = getattr(_capi.library(), entry_name)
    tensors = {"forward": _valid_forward, "backward": _valid_backward, "decode": _valid_decode}[entry_name]()
    args = _args(entry, dict(tensors, softcap=-3.0))
    args.struct_size = entry.args_cls.softcap.offset
    try:
        kernel, _, _ = entry.plan(ctypes.addressof(args))
        assert kernel
    except _capi.FlashError as e:
        assert e.status == _capi.ERROR_NO_DEVICE, str(e)


def test_window_defaults_match_the_header_init():
    # flash_*_args_init sets both sides to -1; the package always packs both.
    for cls in (_capi.ForwardArgs, _capi.BackwardArgs, _capi.DecodeArgs):
        assert cls.window_right.offset == cls.window_left.offset + 4 == cls.causal.offset + 8


def test_valid_plan_without_a_device_says_so():
    # A plan launches nothing, so made-up addresses are safe on a GPU too.
    entry = _capi.library().forward
    args = _args(entry, _valid_forward())
    try:
        kernel, _, _ = entry.plan(ctypes.addressof(args))
        assert kernel
    except _capi.FlashError as e:
        assert e.status == _capi.ERROR_NO_DEVICE and "no usable CUDA device" in str(e)


def test_errors_map_to_exceptions():
    assert isinstance(_capi.error(_capi.ERROR_INVALID_ARGUMENT, "m"), ValueError)
    assert isinstance(_capi.error(_capi.ERROR_OUT_OF_MEMORY, "m"), MemoryError)
    for status in (_capi.ERROR_NO_DEVICE, _capi.ERROR_CUDA, _capi.ERROR_INTERNAL):
        e = _capi.error(status, "message")
        assert isinstance(e, _capi.FlashError) and e.status == status and str(e) == "message"


def test_describe_decode_status():
    assert _capi.describe_decode_status([0, 0, -1, 0]) == ""
    assert "page_table[1][0] = 1000 is not a page of k_cache" in _capi.describe_decode_status([4, 1, 0, 1000])


def test_library_env_var(monkeypatch, tmp_path):
    monkeypatch.setenv(_capi.LIBRARY_ENV, str(tmp_path))
    with pytest.raises(OSError, match="no libflash_c.so"):
        _capi.find_library()
    monkeypatch.setenv(_capi.LIBRARY_ENV, str(tmp_path / "missing.so"))
    with pytest.raises(OSError, match="no such file"):
        _capi.find_library()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / _capi.LIBRARY_NAME).write_bytes(b"")
    monkeypatch.setenv(_capi.LIBRARY_ENV, str(tmp_path))
    assert _capi.find_library() == tmp_path / "lib" / _capi.LIBRARY_NAME
