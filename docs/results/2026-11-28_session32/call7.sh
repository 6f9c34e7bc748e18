#!/usr/bin/env bash
# Session 32, call 7: issue 17's table with FA4 staged (the two calls before staged it), the tree
# V (the bundle: causal and full varlen calls on the dynamic schedule in the compact order): fa4_varlen_matched.py (flash 0.5 s and 40 ms
# bursts, FA4 40 ms bursts and 0.5 s), the paged benches, fa4_bench.py --parts varlen.
set -u
source benchmarks/device_call.sh
dc_setup V > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
timeout 300 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 | grep -v -E "Warning|warn" | tail -8
for m in "" "--causal"; do
  timeout 60 "$B/bench" --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
  timeout 60 "$B/bench" --paged 16,256 --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' > "$O/varlen_bench.txt"
timeout 200 python3 .anchors/fa4-part2/fa4_bench.py --parts varlen --json "$O/fa4_varlen.json" 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -4 >> "$O/varlen_bench.txt"
cat "$O/varlen_bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
