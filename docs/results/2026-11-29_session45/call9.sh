#!/usr/bin/env bash
# Session 45, call 9 (FA4 4.0.0b36 staged by the two part-1 calls before it; carry
# [".anchors/fa4-part2", ".gpu"]). Issue 19's table at hdims 128 and 256 on the final build (F)
# beside FA4 and cuDNN: benchmarks/fa4_fwd_matched.py, now with flash also timed as do_bench times
# FA4 (--flush always: 256 MB cleared before every timed call).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup F > /dev/null
FA4_DHEADS=128,256 timeout 560 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 512,1024,2048,4096,8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/fwd_matched.txt"
tail -2 "$O/fwd_matched.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
