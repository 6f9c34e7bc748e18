#!/usr/bin/env bash
# Session 30, call 3 (after FA4 staging, calls 1-2): session 29's prepared call
# (results/2026-11-28_session29/next/next_call.sh: J, K1, K2 against the tree B, then issue 19's forward table)
# plus issue 17's table: flash's varlen / paged benches and fa4_bench.py --parts varlen.
# Binaries: .gpu/bundle.txz = B (tree c9fde3a), .gpu/A.txz = J/K1/K2 benches.
bash docs/results/2026-11-28_session29/next/next_call.sh
source benchmarks/device_call.sh
dc_setup B > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
T0=$SECONDS
for m in "" "--causal"; do
  timeout 60 "$B/bench" --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent|wgmma_window|auto'
  timeout 90 "$B/bench" --varlen --bwd --dhead 128 --heads 16 $m --benchmark_filter='wgmma'
  timeout 60 "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
  timeout 60 "$B/bench" --paged 16,256 --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | tee "$O/varlen_bench.txt"
timeout 200 python3 .anchors/fa4-part2/fa4_bench.py --parts varlen --json "$O/fa4_varlen.json" 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -20 | tee "$O/fa4_varlen.txt"
echo "varlen part: $((SECONDS - T0)) s"
