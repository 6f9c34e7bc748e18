#!/usr/bin/env bash
# Session 36, call 3: B = call 1's B (lazy O rescale, kept); D = B + capped rows that stop
# tracking their max once the warp's references are within 64 (bf16) exp2 units of the cap's bound
# (fa3_forward.cuh bounded / frozen, OnlineSoftmax::can_freeze / probs_bounded). Two rounds, then
# D's score / forward / window / varlen / paged tests, sanitizers on a capped fwd_09 call.
set -u
source benchmarks/device_call.sh
dc_setup D > /dev/null
DC_BENCH_FLAGS="" dc_abn "B D" '^fwd' \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --softcap 30 --kernel auto" \
  "--seq 4096 --dhead 128 --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 256 --causal --softcap 50 --kernel auto" \
  "--seq 8192 --dhead 128 --causal --softcap 50 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --alibi --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --alibi --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --kernel auto" \
  "--varlen --dhead 128 --heads 16 --causal --softcap 30 --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
dc_summary B D "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
echo "bench done: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal --softcap 15" \
  "$B/runner --kernel wgmma_persistent --dhead 64 --heads 2 --seq 333 --seq-k 517 --softcap 30 --alibi"
dc_runner "--dhead 128 --heads 4 --heads-kv 2 --seq 333 --seq-k 700 --causal --softcap 30" \
  "--dhead 256 --heads 2 --seq 300 --softcap 50 --sinks" "--dhead 64 --heads 4 --varlen 1,128,129,500 --causal --softcap 15"
dc_tests '*Scores*:*Forward*:*Window*:*Paged*-*Backward*:*Bwd*' 200 8
echo "total: $((SECONDS - DC_T0)) s"
