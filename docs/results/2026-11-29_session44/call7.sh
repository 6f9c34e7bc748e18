#!/usr/bin/env bash
# Session 44, call 7: R = the final tree (the epilogue's O packed by to_a_operand, P's packing,
# instead of its own copy of it; fwd_07-10 rebuilt), N = call 5's build. The runner's every-variant
# check, the forward suites (8 shards), memcheck / racecheck on two calls, and N -> R on three
# short cells (the epilogue's share is largest there).
set -u
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_runner "--dhead 64 --heads 6 --batch 2 --seq 1100" "--dhead 128 --heads 4 --batch 3 --seq 300 --seq-k 333 --causal" \
          "--dhead 256 --heads 4 --batch 2 --seq 700 --seq-k 500" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Decode*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 |
  tee "$O/tests_summary.txt"
grep -E -B2 -A12 "^\[  FAILED" "$O/tests.txt" | head -80 >> "$O/tests_summary.txt"; rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --batch 2 --heads 4 --seq 1500 --seq-k 700 --causal" \
            "$B/runner --kernel wgmma_pingpong --dhead 256 --batch 2 --heads 2 --seq 500" > /dev/null
rm -f "$O/memcheck.txt" "$O/racecheck.txt"; cat "$O/sanitizers.txt"
DC_BENCH_FLAGS="" dc_abn "N R" '^fwd' "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary N R "$O/ab.txt" | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
