#!/usr/bin/env bash
# Session 49, call 7 (FA4 4.0.0b36 staged by calls 5-6, the two halves of part 1; carry
# [".anchors/fa4-part2", ".gpu"]). On the kept build (O): issue 17's varlen rows beside FA4 at one
# timing (fa4_varlen_matched.py, forward and backward; last measured in session 46), then the
# backward, varlen and paged-prefill suites in 16 shards.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup O > /dev/null
timeout 230 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/varlen.txt"
tail -6 "$O/varlen.txt"
dc_tests 'Backward*:*/Backward*:*Bwd*:*Varlen*:*PagedPrefill*' 280 16
rm -f "$O/gpu.txt" "$O/tests.txt"
echo "total: $((SECONDS - DC_T0)) s"
