#!/usr/bin/env bash
# Session 42, call 2. H = this tree's h200 build: the last consumer warpgroup's final turn of a
# tile hands the next tile's first turn on (dense persistent calls), instead of the next tile's
# start after its epilogue. O = session 41's final bench. Checks on H: the forward suites (the
# pingpong's barrier counts: a miscount hangs), runner checks of many tiles per CTA with empty
# tiles (seqlen_q > seqlen_k causal), synccheck / racecheck / memcheck on the walk and the
# dynamic schedule; A/B O H with --kernel auto; SDPA (cuDNN) on the short cells for reference.
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Concurren*:*Graph*:-*Backward*:*Bwd*' 150 8 | tee "$O/tests_summary.txt"
DC_BENCH_FLAGS="" dc_abn "O H" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --kernel auto" \
  "--seq 2048 --dhead 128 --kernel auto" "--seq 4096 --dhead 128 --kernel auto" \
  "--seq 16384 --dhead 128 --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 2048,0 --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary O H "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_runner "--batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal" \
  "--batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 64 --causal" \
  "--batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128" \
  "--batch 4 --heads 8 --seq 3000 --dhead 128 --causal --window 2100,0" | tee "$O/runner_summary.txt"
for tool in synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal > "$O/synccheck.txt" 2>&1
  echo "synccheck rc=$?"; grep -E "ERROR SUMMARY" "$O/synccheck.txt"
done | tee -a "$O/sanitizers.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal" \
  "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --dhead 64"
timeout 120 python3 benchmarks/sdpa_bench.py --seq 512 1024 2048 --dhead 128 > "$O/sdpa.txt" 2>&1
timeout 60 python3 benchmarks/sdpa_bench.py --seq 512 2048 --dhead 64 >> "$O/sdpa.txt" 2>&1
echo "total: $((SECONDS - DC_T0)) s"
# (eight files come back: keep the summaries; the full test log only if a test failed)
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
grep -h -E "FAIL|rror" "$O/runner.txt" | head -20 >> "$O/runner_summary.txt"; rm -f "$O/runner.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/synccheck.txt" "$O/gpu.txt"
