#!/usr/bin/env bash
# Session 61, call 11 (as call 3) (carry [".anchors/fa4-p1b"]; within 30 s of call 10): FA4's cu13 libraries rebuilt from
# the two halves and unpacked (as benchmarks/fa4_part1_split.sh says).
cat /tmp/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 > /tmp/cu13.tar.xz && mkdir -p /tmp/fa4site &&
  python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('/tmp/cu13.tar.xz')).extractall('/tmp/fa4site')" &&
  ls /tmp/fa4site/nvidia_cutlass_dsl | head -3
