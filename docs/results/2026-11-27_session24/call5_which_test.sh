#!/usr/bin/env bash
# Session 24, call 5: which test of call 4's shard 2 (backward filter) runs past 200 s: full
# output, line-buffered, so the last "[ RUN ]" names it.
set -u
cd "$(dirname "$0")"
[ -d bin ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=2 timeout 150 stdbuf -oL bin/test_gpu --gtest_filter='*Backward*:*Bwd*' > "$O/shard2.txt" 2>&1
echo "rc=$?"; grep -c "^\[       OK" "$O/shard2.txt"; grep -E "^\[  FAILED|^\[ RUN" "$O/shard2.txt" | tail -3
awk '/^\[       OK/ {gsub(/[()]/,"",$(NF-1)); print $(NF-1), $4}' "$O/shard2.txt" | sort -n | tail -5
