"""pytest setup: the `gpu` marker (skipped without a CUDA device, saying why),
the `decode` marker (skipped, saying why, when the library was built without
a decode variant) and the package under test, from this checkout unless it is
installed.

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


def _no_gpu_reason():
    try:
        import torch
    except ImportError as e:
        return f"no CUDA device: torch is not installed ({e})"
    if not torch.cuda.is_available():
        return "no CUDA device: torch.cuda.is_available() is False"
    return None


def _decode_not_built_reason():
    """The library's words when a valid decode call finds no variant built
    (a subset build: FLASH_VARIANTS without splitkv), else None. Asked of the
    planner, as tests/test_c_api.c does: the C ABI has no registry query, and
    a plan launches nothing, so the made-up addresses are safe."""
    from flash_ladder import _capi

    try:
        entry = _capi.library().decode
    except OSError:
        return None  # the tests say that the library is missing
    args = entry.args_cls()
    args.struct_size = entry.size
    for name, address, seqlen, heads in (("q", 1, 1, 4), ("k_cache", 2, 64, 2), ("v_cache", 3, 64, 2), ("o", 4, 1, 4)):
        t = getattr(args, name)
        t.data, t.dtype, t.rank = address << 28, _capi.BF16, 4
        t.shape[:] = [2, seqlen, heads, 64]
        t.strides[:] = [seqlen * heads * 64, heads * 64, 64, 1]
    args.cache_seqlens.data, args.cache_seqlens.dtype, args.cache_seqlens.rank = 5 << 28, _capi.I32, 1
    args.cache_seqlens.shape[0], args.cache_seqlens.strides[0] = 2, 1
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
    decode_items = [item for item in items if item.get_closest_marker("decode") is not None]
    reason = _decode_not_built_reason() if decode_items else None
    if reason is not None:
        skip = pytest.mark.skip(reason=reason)
        for item in decode_items:
            item.add_marker(skip)
