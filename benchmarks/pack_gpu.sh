#!/usr/bin/env bash
# Copies the binaries of a build (default build-gpu) and the shared libraries
# they need beyond the system's (Debian's libbenchmark and libfmt) into .gpu/,
# the folder the device tool carries to the H200, as one gzipped tarball
# (the fat binaries compress about 3x; the tool carries 64 MiB at most).
# h200_check.sh unpacks it on the device.
set -eu
BUILD=${1:-build-gpu}
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
cp "$BUILD"/bin/test_gpu "$BUILD"/bin/test_cpu "$BUILD"/bin/runner "$BUILD"/bin/bench .gpu/bin/
for lib in $(ldd .gpu/bin/bench .gpu/bin/runner | awk '/libbenchmark|libfmt/ {print $3}' | sort -u); do
  cp -L "$lib" .gpu/lib/
done
tar -czf .gpu/bundle.tgz -C .gpu bin lib && rm -rf .gpu/bin .gpu/lib
du -sh .gpu
