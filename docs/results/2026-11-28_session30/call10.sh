#!/usr/bin/env bash
# Session 30, call 10 (after FA4 staging): issue 17's varlen backward, flash (the final code, .gpu/bundle.txz)
# beside FA4 in one call: ./bench --varlen --bwd, then fa4_bench.py --parts varlen.
source benchmarks/device_call.sh
dc_setup V > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
for m in "" "--causal"; do
  timeout 60 "$B/bench" --varlen --bwd --dhead 128 --heads 16 $m --benchmark_filter='wgmma'
done 2>&1 | grep -E "^bwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | tee "$O/varlen_bwd.txt"
timeout 120 python3 .anchors/fa4-part2/fa4_bench.py --parts varlen --json "$O/fa4_varlen.json" 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -5 | tee "$O/fa4_varlen.txt"
