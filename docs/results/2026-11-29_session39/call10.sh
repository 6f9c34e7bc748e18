#!/usr/bin/env bash
# Session 39, call 10: checks of the final build H (call 9's dynamic schedule for dense-query
# causal paged calls at hdim 128): the forward GPU suites, memcheck / racecheck on dense-query
# causal paged calls at hdim 128 (pages 16 and 256), and the paged benches for the record.
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 16 --batch 3 --seq 300 --seq-k 1000 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --paged 256 --batch 2 --seq 1000 --seq-k 1000 --dhead 128 --heads 4 --heads-kv 1 --causal"
for m in "" "--causal"; do
  timeout 60 "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead 128 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | tee "$O/bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
