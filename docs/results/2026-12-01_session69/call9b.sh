#!/usr/bin/env bash
# 9b: carry [".anchors/fa4-p1b"]: the two halves joined and unpacked to /tmp/fa4site.
cat /tmp/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 > /tmp/cu13.tar.xz && mkdir -p /tmp/fa4site &&
  python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('/tmp/cu13.tar.xz')).extractall('/tmp/fa4site')" &&
  ls /tmp/fa4site/nvidia_cutlass_dsl | head -3
