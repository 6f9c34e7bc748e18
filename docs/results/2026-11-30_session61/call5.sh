#!/usr/bin/env bash
# Session 61, call 5 (FA4 still staged from calls 2-3, the machine warm; carry [".anchors/fa4-part2", ".gpu"];
# the same bench as call 4): issue 16's forward rows beside FA4.
set -u; source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3; source benchmarks/device_call.sh; dc_setup H > /dev/null
FA4_MODES=fwd timeout 200 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_fwd.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/features_fwd.txt"
cut -c1-260 "$O/features_fwd.txt"; echo "total: $((SECONDS - DC_T0)) s"
