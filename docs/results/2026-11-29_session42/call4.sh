#!/usr/bin/env bash
# Session 42, call 4. G = this tree's h200 build: the last warpgroup's final turn always hands
# on in the persistent kernels (no read-ahead), the first warpgroup takes the last arrival at
# exit. F = call 3's build (hand-on by read-ahead on the walk and hdim 64's dynamic schedule),
# O = session 41's. Checks on G: the forward suites (barrier counts: a miscount hangs or
# corrupts), memcheck / racecheck / synccheck on the dynamic schedule (hdim 128, tiles without
# keys) and a varlen call; A/B O F G.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 150 8 | tee "$O/tests_summary.txt"
DC_BENCH_FLAGS="" dc_abn "O F G" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" "--seq 512 --dhead 64 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" \
  "--varlen --heads 16 --dhead 128 --causal --kernel auto" \
  "--paged 256 --batch 4 --heads 16 --seq 4096 --dhead 128 --kernel auto" > "$O/ab.txt" 2>&1
{ dc_summary O G "$O/ab.txt"; echo; dc_summary F G "$O/ab.txt"; } | tee "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 64 --heads 4 --varlen 1,128,129,500,0,900 --causal"
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --dhead 64 > "$O/synccheck.txt" 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY" "$O/synccheck.txt" | tee -a "$O/sanitizers.txt"
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/synccheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
