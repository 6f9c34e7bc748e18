#!/usr/bin/env bash
# Session 53, call 10 (FA4 4.0.0b36 staged by calls 8-9; carry [".anchors/fa4-part2", ".gpu"]).
# Issue 19's decode cells beside FA4 and cuDNN at one timing, for the first time since the issue
# (benchmarks/fa4_decode_matched.py, two alternations; README's decode tables compared cuDNN only),
# then the forward table at hdim 64 (fa4_fwd_matched.py, seq 512-16k; sessions 43-45's tables are
# the last, the kernels gained 1-3% since). The build is session 52's final tree (bundle.txz).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup B > /dev/null
timeout 300 python3 benchmarks/fa4_decode_matched.py "$B/bench" "$O/decode_matched.json" 2 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/decode.txt"
tail -3 "$O/decode.txt"
echo "decode: $((SECONDS - DC_T0)) s"
FA4_DHEADS=64 timeout 240 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd64_matched.json" \
  512,1024,2048,4096,8192,16384 2>&1 | grep -v -E "Warning|warn|exe_args" > "$O/fwd64.txt"
tail -2 "$O/fwd64.txt"
echo "total: $((SECONDS - DC_T0)) s"
