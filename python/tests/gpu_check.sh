#!/usr/bin/env bash
# The Python package on a GPU machine (the H200: torch, nvcc, cmake and ninja
# present, no network), from the repository root, in one call:
#
#   OUT=/path/to/logs python/tests/gpu_check.sh
#
# Steps (STEPS, default all, in this order):
#   build     CMake: libflash_c.so (tests, runner and bench off), installed to
#             $BUILD/prefix; the overhead program against that install
#   install   pip wheel + install of ./python into $BUILD/site, taking the
#             library from $BUILD (FLASH_LADDER_BUILD_DIR: nothing recompiled),
#             then the tests import that installed copy
#   capi      the C tests of the C ABI (tests/test_c_api*.c), compiled here
#   tests     pytest python/tests: CPU and GPU tests (junit XML too); PYTEST_K,
#             when set, is pytest's -k expression, e.g. PYTEST_K=varlen for the
#             variable-length tests alone
#   compile   torch.compile(fullgraph=True) of a small attention module:
#             graphs and graph breaks, as torch._dynamo.explain reports them
#   example   examples/compare_sdpa.py, non-causal and causal
#   overhead  benchmarks/overhead.py against the C++ call
#   models    real models (issue 15): pytest test_models.py (the transformers
#             plug-in on tiny Llama/GPT-2/Qwen2, train.py and generate.py as
#             tests), then examples/train.py (300 steps, PNG) and
#             examples/generate.py at GPT-2 small's shape (TTFT/TBT/tokens/s)
# Writes under $OUT (default ./out): env.txt, build.log, install.log,
# c_api.log, pytest.log, pytest.xml, compile.txt, compare_sdpa.txt,
# overhead.txt, overhead.json, models.log (pytest), train.txt, train_loss.png,
# generate.txt, models_data.tar (train_loss.csv/.json, generate.json); and
# prints a summary of each step.
#
# BUILD (default build-python-gpu), JOBS (default nproc),
# CMAKE_CUDA_ARCHITECTURES (default 90a), FLASH_VARIANTS (default all),
# FLASH_HEAD_DIMS (default "64;128;256": what the tests use), PYTEST_K
# (default: every test).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STEPS=${STEPS:-"build install capi tests compile example overhead models"}
BUILD=$(pwd)/${BUILD:-build-python-gpu}
JOBS=${JOBS:-$(nproc)}
ARCHS=${CMAKE_CUDA_ARCHITECTURES:-90a}
VARIANTS=${FLASH_VARIANTS:-all}
HEAD_DIMS=${FLASH_HEAD_DIMS:-64;128;256}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
PY=${PYTHON:-python3}
# Until `install` succeeds, the tests use the checkout's package and the build's library.
export PYTHONPATH=$(pwd)/python
export FLASH_LADDER_LIBRARY=$BUILD

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -1
  cmake --version | head -1
  $PY -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

for step in $STEPS; do
  echo "=== $step"
  t0=$SECONDS
  case $step in
    build)
      {
        cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" \
          -DFLASH_VARIANTS="$VARIANTS" -DFLASH_HEAD_DIMS="$HEAD_DIMS" \
          -DFLASH_BUILD_TESTS=OFF -DFLASH_BUILD_APPS=OFF -DFLASH_BUILD_BENCH=OFF &&
        cmake --build "$BUILD" --target flash_c -j "$JOBS" &&
        cmake --install "$BUILD" --prefix "$BUILD/prefix" &&
        cmake -S benchmarks/overhead -B "$BUILD/overhead" -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_PREFIX_PATH="$BUILD/prefix" &&
        cmake --build "$BUILD/overhead"
      } > "$OUT/build.log" 2>&1
      rc=$?
      echo "build rc=$rc in $((SECONDS - t0)) s"; tail -3 "$OUT/build.log"
      [ $rc -eq 0 ] || { echo "build failed: see build.log"; exit 1; } ;;
    install)
      rm -rf "$BUILD/site" "$BUILD/wheel"
      {
        FLASH_LADDER_BUILD_DIR=$BUILD $PY -m pip wheel --no-build-isolation --no-deps -w "$BUILD/wheel" ./python &&
        $PY -m pip install --no-deps --no-index --target "$BUILD/site" "$BUILD"/wheel/flash_ladder-*.whl
      } > "$OUT/install.log" 2>&1
      rc=$?
      echo "pip wheel + install rc=$rc"; ls "$BUILD"/wheel 2>/dev/null
      if [ $rc -eq 0 ]; then
        export PYTHONPATH=$BUILD/site FLASH_LADDER_TEST_INSTALLED=1
        unset FLASH_LADDER_LIBRARY
        (cd /tmp && $PY -c 'import flash_ladder as f; print("installed:", f.__file__, f.library_path())')
      else
        echo "install failed (see install.log); the tests use python/ and $BUILD/lib instead"
      fi ;;
    capi)
      {
        cc -std=c11 -O2 -Wall -Wextra -Iinclude -Itests tests/test_c_api.c -o "$BUILD/test_c_api" \
          -L"$BUILD/lib" -lflash_c -Wl,-rpath,"$BUILD/lib" -lpthread -lm &&
        "$BUILD/test_c_api" &&
        cudadir=$(dirname "$(dirname "$(command -v nvcc)")") &&
        cc -std=c11 -O2 -Wall -Wextra -Iinclude -Itests -I"$cudadir/include" tests/test_c_api_gpu.c \
          -o "$BUILD/test_c_api_gpu" -L"$BUILD/lib" -lflash_c -Wl,-rpath,"$BUILD/lib" \
          -L"$cudadir/lib64" -lcudart_static -ldl -lrt -lpthread -lm &&
        "$BUILD/test_c_api_gpu"
      } > "$OUT/c_api.log" 2>&1
      echo "C tests rc=$?"; tail -6 "$OUT/c_api.log" ;;
    tests)
      $PY -m pytest -v -rs -p no:cacheprovider --junitxml="$OUT/pytest.xml" ${PYTEST_K:+-k "$PYTEST_K"} python/tests \
        > "$OUT/pytest.log" 2>&1
      echo "pytest rc=$? in $((SECONDS - t0)) s"
      grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest.log" | tail -25 ;;
    compile)
      $PY - > "$OUT/compile.txt" 2>&1 <<'EOF'
import sys

import torch

sys.path.insert(0, "python/tests")
from modules import Attention

model = Attention(dim=512, heads=8, heads_kv=2, head_dim=64).cuda().bfloat16()
x = torch.randn(4, 1024, 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)
e = torch._dynamo.explain(model)(x)
print(f"torch {torch.__version__}: graphs {e.graph_count}, graph breaks {e.graph_break_count}, "
      f"ops {e.op_count}; break reasons: {e.break_reasons}")
compiled = torch.compile(model, fullgraph=True)
out = compiled(x)
out.float().square().mean().backward()
ref = model(x)
print("fullgraph compile + backward ran; max |compiled - eager| =", (out - ref).abs().max().item())
EOF
      echo "compile rc=$?"; tail -3 "$OUT/compile.txt" ;;
    example)
      { $PY examples/compare_sdpa.py && $PY examples/compare_sdpa.py --causal; } > "$OUT/compare_sdpa.txt" 2>&1
      echo "compare_sdpa rc=$?"; cat "$OUT/compare_sdpa.txt" ;;
    overhead)
      $PY benchmarks/overhead.py --cpp "$BUILD/overhead/overhead" --json "$OUT/overhead.json" > "$OUT/overhead.txt" 2>&1
      echo "overhead rc=$?"; cat "$OUT/overhead.txt" ;;
    models)
      $PY -m pytest -v -rs -p no:cacheprovider python/tests/test_models.py > "$OUT/models.log" 2>&1
      echo "pytest test_models rc=$? in $((SECONDS - t0)) s"
      grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/models.log" | tail -15
      $PY examples/train.py --steps 300 --out "$OUT/train_loss" > "$OUT/train.txt" 2>&1
      echo "train.py rc=$?"; tail -4 "$OUT/train.txt"
      $PY examples/generate.py --check --profile --json "$OUT/generate.json" > "$OUT/generate.txt" 2>&1
      echo "generate.py rc=$? in $((SECONDS - t0)) s"; tail -12 "$OUT/generate.txt"
      (cd "$OUT" && tar cf models_data.tar train_loss.csv train_loss.json generate.json 2>/dev/null &&
        rm -f train_loss.csv train_loss.json generate.json) ;;
    *) echo "unknown step $step" ;;
  esac
done
