#!/usr/bin/env bash
# Session 39, call 5 (three device calls back to back, benchmarks/fa4_part1_split.sh): FA4's cu13
# libraries in two halves, then call6.sh with .anchors/fa4-part2 and the bundle.
#   carry [".anchors/fa4-p1a"]:  cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0
#   carry [".anchors/fa4-p1b"]:  cat /tmp/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 > /tmp/cu13.tar.xz && mkdir -p /tmp/fa4site &&
#     python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('/tmp/cu13.tar.xz')).extractall('/tmp/fa4site')"
