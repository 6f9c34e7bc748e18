#!/usr/bin/env bash
# (session 61's staging script, reused by session 62)
# the two halves and unpacked (as benchmarks/fa4_part1_split.sh says).
cat /tmp/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 > /tmp/cu13.tar.xz && mkdir -p /tmp/fa4site &&
  python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('/tmp/cu13.tar.xz')).extractall('/tmp/fa4site')" &&
  ls /tmp/fa4site/nvidia_cutlass_dsl | head -3
