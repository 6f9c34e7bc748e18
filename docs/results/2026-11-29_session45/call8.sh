#!/usr/bin/env bash
# Session 45, call 8 (carry [".gpu"]).
# F = the final tree (bundle.txz: fwd_09's P V wait after row 0 at hdim 128, kPvPin; probs with
# after_row; bench --flush always); A = session 44's fwd_09 (R) in call 5's library. The runner's
# every-variant check, the forward / decode / varlen / paged / window / score / concurrency / graph
# suites (8 shards), memcheck and racecheck on fwd_09 hdim 128 (walk, dynamic schedule, grid with
# softcap), A -> F on the changed cells.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_runner "--dhead 64 --heads 6 --batch 2 --seq 1100" "--dhead 128 --heads 4 --batch 3 --seq 300 --seq-k 333 --causal" \
          "--dhead 256 --heads 4 --batch 2 --seq 700 --seq-k 500" "--dhead 128 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Decode*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 |
  tee "$O/tests_summary.txt"
grep -E -B2 -A12 "^\[  FAILED" "$O/tests.txt" | head -80 >> "$O/tests_summary.txt"; rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --batch 2 --heads 3 --seq 700" \
            "$B/runner --kernel wgmma_persistent --dhead 128 --batch 2 --heads 4 --heads-kv 2 --seq 1500 --seq-k 700 --causal" \
            "$B/runner --kernel wgmma_persistent --dhead 128 --batch 1 --heads 2 --seq 600 --causal --softcap 30" > /dev/null
rm -f "$O/memcheck.txt" "$O/racecheck.txt"; cat "$O/sanitizers.txt"
DC_BENCH_FLAGS="" dc_abn "A F" '^fwd' "--seq 8192 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --dhead 128 --causal --kernel auto" "--seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 16384 --dhead 128 --causal --softcap 30 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 2048 --dhead 256 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A F "$O/ab.txt" | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
