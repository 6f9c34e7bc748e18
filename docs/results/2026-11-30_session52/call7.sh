#!/usr/bin/env bash
# Session 52, call 7 (carry [".gpu"]). The final tree (bundle, as call 6): issue 17's paged table at
# hdim 128 (pages 16 / 32 / 64 / 256 against the contiguous cache, 4 x 4096 and issue 17's packed
# batch, full and causal), two rounds.
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "H" '^fwd' \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/bench.txt"
cat "$O/bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
