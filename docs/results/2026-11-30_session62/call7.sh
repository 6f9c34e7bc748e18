#!/usr/bin/env bash
# Session 62, call 7 (carry [".gpu"]; the last ~330 s of device time). bin/ = HEAD + the refactor of bwd_03's
# two step loops into shared helpers (ds_from_dp, finish_step): SASS identical in 36 of 52 dkv kernels; the 16
# of the 64-row hdim 128 Config (narrow windows, and every softcap / ALiBi call at hdim 128) keep their
# instruction count (2080 in the plain one) with a few instructions scheduled differently. H/bench = HEAD.
# Predicted: 0 +-0.5% on those; correct as before.
set -u
source benchmarks/device_call.sh
dc_setup X > /dev/null
for a in "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--seq 513 --seq-k 600 --heads 4 --heads-kv 2 --dhead 128 --window 60,20 --softcap 30 --alibi" \
         "--seq 333 --heads 4 --heads-kv 1 --dhead 128 --causal --sinks --softcap 20"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_tests 'Window/BackwardWindow.*d128*:Scores/BackwardScores.*d128*:Cases/VarlenBwd.*:FuzzBackward.*' 100 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 200 --seq-k 300 --heads 2 --heads-kv 1 --dhead 128 --causal --softcap 30" | grep -E "rc=|SUMMARY" | cut -c1-100
dc_abn "H X" 'bwd/' "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 128,0 --kernel wgmma" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --softcap 30 --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary H X "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-100
echo "total: $((SECONDS - DC_T0)) s"
