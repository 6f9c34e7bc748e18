#!/usr/bin/env bash
# Session 68, call 10: the final tree's binaries (R plus comments): the Python GPU tests (test_gpu.py,
# test_torch_integration.py; call 1 ran them on HEAD before R) and the paged and varlen forward suites.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
(export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:python/tests FLASH_TEST_HEAD_DIM=64
 timeout 120 python3 -m pytest -x -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_torch_integration.py 2>&1 | tail -2) | tee "$O/python.txt"
dc_tests '*PagedPrefill*:*VarlenForward*' 120 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
echo "total: $((SECONDS - DC_T0)) s"
