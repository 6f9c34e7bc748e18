"""pytest setup: the `gpu` marker (skipped without a CUDA device, saying why),
the `decode` and `backward` markers (skipped, saying why, when the library was
built without a decode / backward variant) and the package under test, from
this checkout unless it is installed.

Run from a checkout against a CMake build (what ctest does):
    FLASH_LADDER_LIBRARY=build python3 -m pytest python/tests
"""

import ctypes
import os
import sys

import pytest

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("FLASH_LADDER_TEST_INSTALLED") != "1" and _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)  # the checkout's flash_ladder, not an installed one


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line(
        "markers", "decode: plans a valid decode call (skipped when FLASH_VARIANTS leaves the decode variant out)"
    )
    config.addinivalue_line(
        "markers", "backward: plans a valid backward call (skipped when FLASH_VARIANTS leaves every backward variant out)"
    )


def _no_gpu_reason():
    try:
        import torch
    except ImportError as e:
        return f"no CUDA device: torch is not installed ({e})"
    if not torch.cuda.is_available():
        return "no CUDA device: torch.cuda.is_available() is False"
    return None


def _not_built_reason(entry_name):
    """The library's words when a valid call of `entry_name` ("decode" or
    "backward") finds no variant built (a subset build: FLASH_VARIANTS without
    them), else None. Asked of the planner, as tests/test_c_api.c does: the C
    ABI has no registry query, and a plan launches nothing, so the made-up
    addresses are safe."""
    from flash_ladder import _capi

    from build_config import HEAD_DIM

    try:
        entry = getattr(_capi.library(), entry_name)
    except OSError:
        return None  # the tests say that the library is missing
    args = entry.args_cls()
    args.struct_size = entry.size

    def bshd(name, address, seqlen, heads):
        t = getattr(args, name)
        t.data, t.dtype, t.rank = address << 28, _capi.BF16, 4
        t.shape[:] = [2, seqlen, heads, HEAD_DIM]
        t.strides[:] = [seqlen * heads * HEAD_DIM, heads * HEAD_DIM, HEAD_DIM, 1]

    if entry_name == "decode":
        for name, address, seqlen, heads in (("q", 1, 1, 4), ("k_cache", 2, 64, 2), ("v_cache", 3, 64, 2),
                                             ("o", 4, 1, 4)):
            bshd(name, address, seqlen, heads)
        args.cache_seqlens.data, args.cache_seqlens.dtype, args.cache_seqlens.rank = 5 << 28, _capi.I32, 1
        args.cache_seqlens.shape[0], args.cache_seqlens.strides[0] = 2, 1
    else:
        for name, address, seqlen, heads in (("q", 1, 16, 4), ("k", 2, 32, 2), ("v", 3, 32, 2), ("o", 4, 16, 4),
                                             ("dout", 6, 16, 4), ("dq", 7, 16, 4), ("dk", 8, 32, 2), ("dv", 9, 32, 2)):
            bshd(name, address, seqlen, heads)
        args.lse.data, args.lse.dtype, args.lse.rank = 5 << 28, _capi.F32, 3
        args.lse.shape[:3], args.lse.strides[:3] = [2, 4, 16], [64, 16, 1]
    try:
        entry.plan(ctypes.addressof(args))
    except ValueError as e:
        if "not built (CMake option FLASH_VARIANTS)" in str(e):
            return " ".join(str(e).split())
    except _capi.FlashError:
        pass  # no usable device: the call planned as far as it could
    return None


def pytest_collection_modifyitems(config, items):
    reason = _no_gpu_reason()
    if reason is not None:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
    # The marker itself: "decode" is also a parameter id among the keywords.
    for entry_name in ("decode", "backward"):
        marked = [item for item in items if item.get_closest_marker(entry_name) is not None]
        reason = _not_built_reason(entry_name) if marked else None
        if reason is not None:
            skip = pytest.mark.skip(reason=reason)
            for item in marked:
                item.add_marker(skip)
