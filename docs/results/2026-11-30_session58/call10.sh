#!/usr/bin/env bash
# Session 58, call 10 (carry [".gpu"]): W (bundle, tag P: the writer counts a tile one step late)
# against H (HEAD's bench, H.txz) on hdim 256's backward, both modes; then W's backward suites at
# hdim 256 and the determinism suites, runner checks, sanitizers.
source benchmarks/device_call.sh
dc_setup P > /dev/null
dc_abn "H P" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt" 2>&1
dc_summary H P "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*d256*:*BackwardDeterminism*:*BackwardEdges*:*BackwardScoresEdges*:*VarlenBwd*:FuzzBackward*' 150 4
for a in "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 333 --seq-k 517 --window 100,20" "--dhead 256 --heads 2 --batch 1 --seq 1000 --causal --softcap 30 --alibi"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
