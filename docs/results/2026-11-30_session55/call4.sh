#!/usr/bin/env bash
# Session 55, call 4 (FA4 4.0.0b36 staged by calls 2-3; carry [".anchors/fa4-part2", ".gpu"]; the build:
# HEAD's bundle, tag H). Issue 19's decode cells beside FA4 and cuDNN at one timing (last with FA4:
# session 53's call 10, before session 54's split rule and runs), then issue 16's forward rows
# (FA4_MODES=fwd fa4_features_matched.py; last: session 46's call 8, before sessions 47-54's changes).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
timeout 250 python3 benchmarks/fa4_decode_matched.py "$B/bench" "$O/decode_matched.json" 2 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/decode.txt"
tail -12 "$O/decode.txt"
echo "decode: $((SECONDS - DC_T0)) s"
FA4_MODES=fwd timeout 300 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/features.txt"
tail -14 "$O/features.txt"
echo "total: $((SECONDS - DC_T0)) s"
