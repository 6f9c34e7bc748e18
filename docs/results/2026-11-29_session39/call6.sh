#!/usr/bin/env bash
# Session 39, call 6 (after call 5 unpacked FA4's cu13 libraries): the final build F (call 1's
# order, call 4's register split) beside FlashAttention-4 on issue 17's batch, and its checks:
# the forward GPU suites, memcheck / racecheck on the kernels whose registers moved.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8
dc_sanitize "$B/runner --kernel wgmma_persistent --varlen 700,1,300,129 --paged 16 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --varlen 1,128,129,500,0,77,1000,33,260 --dhead 128 --heads 6 --heads-kv 2" \
  "$B/runner --kernel wgmma_persistent --batch 2 --seq 1000 --dhead 128 --heads 4 --causal"
timeout 300 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 | grep -v -E "Warning|warn" | tail -8
for m in "" "--causal"; do
  timeout 60 "$B/bench" --paged 16,256 --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
  timeout 60 "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead 128 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' > "$O/varlen_bench.txt"
cat "$O/varlen_bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
