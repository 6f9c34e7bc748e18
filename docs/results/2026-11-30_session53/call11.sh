#!/usr/bin/env bash
# Session 53, call 11 (right after call 10, FA4 still staged; carry [".anchors/fa4-part2", ".gpu"]).
# The forward table at hdims 128 and 256 (fa4_fwd_matched.py, seq 512-16k), as call 10 did hdim 64.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup B > /dev/null
FA4_DHEADS=128,256 timeout 520 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" \
  512,1024,2048,4096,8192,16384 2>&1 | grep -v -E "Warning|warn|exe_args" > "$O/fwd.txt"
tail -2 "$O/fwd.txt"
echo "total: $((SECONDS - DC_T0)) s"
