#!/usr/bin/env bash
# Session 52, call 3 (carry [".gpu"]). R (bundle) = HEAD (hdim 128's paged persistent kernels at
# 40 / 232). F (F.txz) = R + 24 / 240 registers (not 32 / 232) for hdim 128's kernels whose producer
# fits 24 without spilling in its loop: the dense dynamic schedule, the packed-query compact grid
# (with and without score modifiers) and the 16-key-page kernel. Memcheck / racecheck on R's two
# changed kernels (the paged walk, the paged dynamic schedule); R / F rotated, two rounds.
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_sanitize "$B/runner --kernel auto --batch 2 --seq 700 --seq-k 1300 --dhead 128 --heads 4 --heads-kv 2 --paged 256" \
  "$B/runner --kernel auto --batch 2 --seq 900 --seq-k 1100 --dhead 128 --heads 4 --heads-kv 1 --paged 64 --causal"
DC_BENCH_FLAGS="" dc_abn "R F" '^fwd' \
  "--seq 1024 --batch 16 --dhead 128 --causal --kernel auto" \
  "--seq 4096 --batch 4 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --batch 2 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --batch 1 --dhead 128 --window 4096,0 --kernel auto" \
  "--seq 4096 --batch 4 --dhead 128 --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" > "$O/rf.txt"
dc_summary R F "$O/rf.txt" | tee "$O/rf_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
