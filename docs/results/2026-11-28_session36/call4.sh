#!/usr/bin/env bash
# Session 36, call 4: B (lazy O rescale); D (call 3: capped rows stop tracking the max, both
# softmax paths duplicated in the loop); E = D with the max of all rows under one branch inside one
# softmax path (OnlineSoftmax::probs_unless_frozen; +48 SASS instructions a kMods kernel against
# D's +300-700). Two rounds; then E's forward / score / window / paged tests and a sanitizer pass.
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
DC_BENCH_FLAGS="" dc_abn "B D E" '^fwd' \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --softcap 30 --kernel auto" \
  "--seq 4096 --dhead 128 --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 256 --causal --softcap 50 --kernel auto" \
  "--seq 8192 --dhead 256 --causal --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 128 --causal --softcap 50 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --alibi --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --alibi --kernel auto" > "$O/ab_fwd.txt" 2>&1
dc_summary B D "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_summary B E "$O/ab_fwd.txt" | tee -a "$O/ab_summary.txt"
echo "bench done: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal --softcap 15"
dc_tests '*Scores*:*Forward*:*Window*:*Paged*-*Backward*:*Bwd*' 200 8
echo "total: $((SECONDS - DC_T0)) s"
