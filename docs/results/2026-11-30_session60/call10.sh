#!/usr/bin/env bash
# Session 60, call 10 (carry [".gpu"]): K (exp_K_counter_thread.patch; bundle bin/ with test_gpu)
# against H (HEAD 864d740, H/bench). K: bwd_04's deterministic writer hands each step's count to
# a counter thread (a third warp of the producer warpgroup) once its reductions completed and
# its proxy fence ran, so that the release's MEMBAR.GPU (call 9: 660-1150 clocks after a bulk
# reduction) leaves the writer's serial path (D: completion + count 1048 of ~6700 a step);
# the link itself stays as long (the count still follows the MEMBAR), unlike session 58's W,
# which counted a step late. Predicted: deterministic hdim 256 +2-8%.
source benchmarks/device_call.sh
dc_setup K > /dev/null
for a in "--seq 300 --seq-k 200 --heads 2 --dhead 256 --causal" "--batch 2 --seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256" \
         "--seq 190 --heads 3 --heads-kv 1 --dhead 256 --window 40,7 --softcap 20"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_abn "H K" 'det/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt" 2>&1
dc_summary H K "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*256*:*Bwd*256*:BackwardDeterminism.*:VarlenBwdEdges.Deterministic*:BackwardScoresEdges.DeterministicDsinks' 100 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"
echo "total: $((SECONDS - DC_T0)) s"
