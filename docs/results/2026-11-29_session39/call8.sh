#!/usr/bin/env bash
# Session 39, call 8: checks of the final build G (call 7's split per kernel kind): the forward
# GPU suites, memcheck / racecheck on the paged dynamic kernels (hdim 128, causal packed queries,
# pages of 16 and 256), and one bench of the paged and varlen calls for the record.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8
dc_sanitize "$B/runner --kernel wgmma_persistent --varlen 700,1,300,129,2000 --paged 16 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --varlen 700,1,300,129,2000 --paged 256 --dhead 128 --heads 4 --heads-kv 1 --causal"
for m in "" "--causal"; do
  timeout 60 "$B/bench" --paged 16,256 --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
  timeout 60 "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead 128 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | tee "$O/bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
