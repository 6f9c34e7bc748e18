#!/usr/bin/env bash
# Session 55, call 9 (carry [".gpu"]): the kept tree's decode cells beside cuDNN timed alike
# (benchmarks/fa4_decode_matched.py without FA4 staged: flash --flush always against SDPA's cuDNN by
# do_bench), two alternations, for README's decode table.
source benchmarks/device_call.sh
dc_setup H > /dev/null
timeout 250 python3 benchmarks/fa4_decode_matched.py "$B/bench" "$O/decode_matched.json" 2 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/decode.txt"
tail -3 "$O/decode.txt" | cut -c1-300
echo "total: $((SECONDS - DC_T0)) s"
