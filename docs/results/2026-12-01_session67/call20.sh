#!/usr/bin/env bash
# Session 67, call 20: flash_ladder's dense forward packed in parts (interface._DenseForwardPack):
# benchmarks/overhead.py against the C++ call (call 19 before it), then the Python GPU tests of the
# forward paths it serves (test_gpu.py, test_torch_integration.py), stopping at the first failure.
# carry [".gpu", ".ovh"].
set -u
source benchmarks/device_call.sh
dc_setup Z > /dev/null
mkdir -p /tmp/o && python3 -c "import tarfile; tarfile.open('.ovh/o.txz').extractall('/tmp/o')"
export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:python/tests FLASH_TEST_HEAD_DIM=64
(export LD_LIBRARY_PATH=/tmp/o/x:$LD_LIBRARY_PATH; timeout 60 python3 benchmarks/overhead.py --cpp /tmp/o/x/overhead 2>&1 | grep -v -i warn | tail -9)
timeout 100 python3 -m pytest -x -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_torch_integration.py 2>&1 | tail -4
echo "total: $((SECONDS - DC_T0)) s"
