#!/usr/bin/env bash
# Session 38, call 7: tile records in the dynamic schedule's slots. Q = the committed build
# (ed69395: PDL); S = Q + the producer publishes each packed-query tile with its sequence in the
# slot, the consumers read it from shared memory (fa3_forward.cuh Fa3SlotTile). Predictions in
# docs/NOTES.md "Session 38". Then the varlen / paged forward suites, concurrency and graph tests,
# memcheck / racecheck on varlen dynamic calls with many sequences.
set -u
source benchmarks/device_call.sh
dc_setup S > /dev/null
DC_BENCH_FLAGS="" dc_abn "Q S" '^fwd_(varlen|paged)' \
  "--varlen 4096,4096,4096,4096 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen --dhead 64 --heads 32 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab_varlen.txt" 2>&1
dc_summary Q S "$O/ab_varlen.txt" | tee "$O/ab_summary.txt"
dc_tests '*Varlen*:*Paged*:*Concurren*:ForwardEdges*:-*Bwd*:*Backward*' 200 6
dc_sanitize "$B/runner --kernel wgmma_persistent --varlen 1,128,129,500,0,77,1000,33,260 --dhead 128 --heads 6 --heads-kv 2" \
  "$B/runner --kernel wgmma_persistent --varlen 1,128,129,500,0,77,1000,33,260 --dhead 64 --heads 4 --causal"
echo "total: $((SECONDS - DC_T0)) s"
