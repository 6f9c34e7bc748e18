"""Builds flash-ladder: CMake builds libflash_c.so (flash's C ABI) from the
checkout this folder belongs to, and the wheel carries it in flash_ladder/lib/.

Only the shared library is built (no tests, runner or bench). Environment:
  CMAKE_CUDA_ARCHITECTURES  e.g. "90a" (default: CMake project's, 80 and 90a)
  FLASH_VARIANTS            e.g. "mma_pipeline;wgmma_persistent;splitkv;bwd_mma" (default: all)
  FLASH_HEAD_DIMS           e.g. "64;128" (default: all)
  CMAKE_ARGS                more arguments for the CMake configure step
  CMAKE_BUILD_PARALLEL_LEVEL  parallel compile jobs (CMake's own variable)
  FLASH_LADDER_BUILD_DIR    an existing CMake build of this checkout to take
                            libflash_c.so from (its flash_c target is brought
                            up to date; nothing is configured); a relative
                            path is taken from the checkout's root
Each distinct setting gets its own build folder under python/build/, so a
rebuild with the same settings only recompiles what changed.
"""

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the flash checkout
LIBRARY = "libflash_c.so"


def run(cmd, env):
    print("+", shlex.join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, env=env)


def cmake_env():
    env = dict(os.environ)
    if not shutil.which("nvcc") and "CUDACXX" not in env and Path("/usr/local/cuda/bin/nvcc").exists():
        env["CUDACXX"] = "/usr/local/cuda/bin/nvcc"
    return env


def build_library():
    """Builds libflash_c.so and returns its path."""
    cmake = shutil.which("cmake")
    if cmake is None:
        sys.exit("flash-ladder needs CMake >= 3.25 and the CUDA toolkit to build libflash_c.so")
    env = cmake_env()
    given = os.environ.get("FLASH_LADDER_BUILD_DIR")
    if given:
        build_dir = (ROOT / given).resolve()  # an absolute `given` stays as it is
        run([cmake, "--build", build_dir, "--target", "flash_c"], env)
        return build_dir / "lib" / LIBRARY

    if not (ROOT / "CMakeLists.txt").is_file() or not (ROOT / "include" / "flash" / "flash_c.h").is_file():
        sys.exit(f"flash-ladder builds from a flash checkout: {ROOT} is not one (pip install ./python from its root)")
    options = {
        "CMAKE_BUILD_TYPE": "Release",
        "FLASH_BUILD_TESTS": "OFF",
        "FLASH_BUILD_APPS": "OFF",
        "FLASH_BUILD_BENCH": "OFF",
    }
    for name in ("CMAKE_CUDA_ARCHITECTURES", "FLASH_VARIANTS", "FLASH_HEAD_DIMS"):
        if os.environ.get(name):
            options[name] = os.environ[name]
    extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
    settings = repr((sorted(options.items()), extra))
    build_dir = HERE / "build" / ("cmake-" + hashlib.sha1(settings.encode()).hexdigest()[:10])
    configure = [cmake, "-S", ROOT, "-B", build_dir] + [f"-D{k}={v}" for k, v in options.items()] + extra
    if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    run(configure, env)
    run([cmake, "--build", build_dir, "--target", "flash_c"], env)
    return build_dir / "lib" / LIBRARY


class BuildPyWithLibrary(build_py):
    """build_py, plus libflash_c.so copied into flash_ladder/lib/."""

    def run(self):
        super().run()
        library = build_library()
        if not library.is_file():
            sys.exit(f"the build did not produce {library}")
        target = Path(self.build_lib) / "flash_ladder" / "lib"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, target / LIBRARY)


class BinaryDistribution(Distribution):
    """Has a binary (the shared library), so the wheel is platform-specific."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """One wheel per platform, for any Python 3 and any torch: the package is
    pure Python around a shared library with a C ABI (py3-none-<platform>)."""

    def get_tag(self):
        return ("py3", "none") + tuple(super().get_tag()[2:])


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
