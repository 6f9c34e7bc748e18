#!/usr/bin/env bash
# FA4's staged cu13 libraries (.anchors/fa4-part1/cu13.tar.xz, ~63.5 MB, from
# ../shared/anchors/fa4/stage.sh) no longer fit one device call beside the tracked tree
# (a call carries 64 MiB in all). This splits the file into two carryable halves,
# .anchors/fa4-p1a and .anchors/fa4-p1b, and prints the two calls that rebuild it on the
# machine, to issue back to back (it stays warm 30 s), before stage.sh's part-2 call:
#   1. carry [".anchors/fa4-p1a"]:  cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0
#   2. carry [".anchors/fa4-p1b"]:  cat /tmp/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 > /tmp/cu13.tar.xz && mkdir -p /tmp/fa4site &&
#        python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('/tmp/cu13.tar.xz')).extractall('/tmp/fa4site')"
#   3. carry [".anchors/fa4-part2", <your build>]: source .anchors/fa4-part2/install.sh && ...
set -eu
src=.anchors/fa4-part1/cu13.tar.xz
[ -s "$src" ] || { echo "no $src: run ../shared/anchors/fa4/stage.sh first" >&2; exit 1; }
half=$(( ($(stat -c %s "$src") + 1) / 2 ))
mkdir -p .anchors/fa4-p1a .anchors/fa4-p1b
head -c "$half" "$src" > .anchors/fa4-p1a/cu13.xz.0
tail -c +"$((half + 1))" "$src" > .anchors/fa4-p1b/cu13.xz.1
cat .anchors/fa4-p1a/cu13.xz.0 .anchors/fa4-p1b/cu13.xz.1 | cmp - "$src"
sed -n '5,10p' "$0" | sed 's/^# //'
