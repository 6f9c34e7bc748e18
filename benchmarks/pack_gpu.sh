#!/usr/bin/env bash
# Copies the binaries of a build (default build-gpu), its libflash_c.so and the
# shared libraries they need beyond the system's (Debian's libbenchmark and
# libfmt) into .gpu/, the folder the device tool carries to the H200, as one
# xz tarball, bundle.txz. Each binary links the whole static library (~70 MB
# of fat kernels, the same bytes in all four), and the tool carries 64 MiB at
# most: gzip made ~23 MB of each; xz with a dictionary larger than one binary
# stores the repeats once (2026-11-27: test_gpu, test_cpu, runner and bench,
# 285 MB, in 15.8 MB; 80 s on 2 cores; one thread, so that the dictionary
# spans the binaries). h200_check.sh unpacks it on the device (Python's
# tarfile: the device may lack xz).
set -eu
BUILD=${1:-build-gpu}
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
for b in test_gpu test_cpu runner bench test_c_api_gpu; do
  [ -f "$BUILD/bin/$b" ] && cp "$BUILD/bin/$b" .gpu/bin/
done
[ -f "$BUILD/lib/libflash_c.so" ] && cp -L "$BUILD/lib/libflash_c.so" .gpu/lib/
for lib in $(ldd .gpu/bin/bench .gpu/bin/runner | awk '/libbenchmark|libfmt/ {print $3}' | sort -u); do
  cp -L "$lib" .gpu/lib/
done
tar -cf - -C .gpu bin lib | xz -T1 --lzma2=preset=6,dict=192MiB > .gpu/bundle.txz && rm -rf .gpu/bin .gpu/lib
du -sh .gpu
