"""pytest setup: the `gpu` marker (skipped without a CUDA device, saying why)
and the package under test, from this checkout unless it is installed.

Run from a checkout against a CMake build (what ctest does):
    FLASH_LADDER_LIBRARY=build python3 -m pytest python/tests
"""

import os
import sys

import pytest

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("FLASH_LADDER_TEST_INSTALLED") != "1" and _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)  # the checkout's flash_ladder, not an installed one


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def _no_gpu_reason():
    try:
        import torch
    except ImportError as e:
        return f"no CUDA device: torch is not installed ({e})"
    if not torch.cuda.is_available():
        return "no CUDA device: torch.cuda.is_available() is False"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _no_gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
