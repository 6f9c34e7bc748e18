#!/usr/bin/env bash
# Session 45, call 10 (carry [".gpu"]). G = the final tree: call 8's F with the P V wait kept after
# both rows in the kernels that may freeze (kMods at hdims 128 / 256: F's wait in each branch had
# ptxas serialize their wgmmas, -8.6% capped). Its 42 plain fwd_09 kernels are SASS-identical to
# F (tested in call 8); the 12 kMods ones are new: the score / softcap / ALiBi / sink suites,
# memcheck and racecheck on capped and ALiBi calls, A -> G on the capped cells.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
dc_runner "--dhead 128 --heads 4 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 256 --heads 2 --batch 2 --seq 500 --softcap 15 --sinks" \
          "--dhead 64 --heads 4 --heads-kv 2 --batch 2 --seq 900 --seq-k 1100 --causal --softcap 50"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests '*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 150 8 | tee "$O/tests_summary.txt"
grep -E -B2 -A12 "^\[  FAILED" "$O/tests.txt" | head -80 >> "$O/tests_summary.txt"; rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --batch 1 --heads 2 --seq 600 --causal --softcap 30" \
            "$B/runner --kernel wgmma_persistent --dhead 256 --batch 1 --heads 2 --seq 400 --seq-k 500 --alibi" > /dev/null
rm -f "$O/memcheck.txt" "$O/racecheck.txt"; cat "$O/sanitizers.txt"
DC_BENCH_FLAGS="" dc_abn "A G" '^fwd' "--seq 16384 --dhead 128 --causal --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 64 --causal --softcap 30 --kernel auto" "--seq 16384 --dhead 128 --causal --alibi --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A G "$O/ab.txt" | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
