#!/usr/bin/env bash
# Session 38, call 5: call 4's dense cells (its cells with several --seq values ran nothing: bench
# takes one), A = session 37's final build, Q = programmatic dependent launch for the Hopper
# forward. Then every GPU suite that call 4 did not run (decode, backward, varlen backward), on
# Q's build, so that with call 4 every GPU test has run on it.
set -u
source benchmarks/device_call.sh
dc_setup Q > /dev/null
DC_BENCH_FLAGS="" dc_abn "A Q" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --kernel auto" \
  "--seq 2048 --dhead 128 --kernel auto" "--seq 8192 --dhead 128 --kernel auto" \
  "--seq 512 --dhead 128 --causal --kernel auto" "--seq 2048 --dhead 128 --causal --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 512 --dhead 256 --kernel auto" > "$O/ab_fwd.txt" 2>&1
dc_summary A Q "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*DecodeGrid*:Backward*:*BackwardGrid*:*BackwardWindow*:*BackwardScores*:VarlenBwd*:*VarlenBwd*' 300 12
"$B/test_c_api_gpu" > "$O/c_api.txt" 2>&1; echo "test_c_api_gpu rc=$?"
echo "total: $((SECONDS - DC_T0)) s"
